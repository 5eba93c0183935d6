"""The async twin of :class:`HostHTTP` for ``async def`` checks and vendors' async tests.

It is built from a :class:`HostHTTP` and keeps its behaviour: the same URL guard (checked before every request and
every redirect hop), timeouts, TLS settings (CA bundle, client certificate, unverified TLS on loopback only when
allowed), response size cap and total time, retry policy, the run's pacer (rate-limit budgets and throttle
waits, slept on the caller's loop) and evidence recorded into the running check through :func:`record_exchange`,
redacted by the same redactor. One pooled client per instance: open one per target or session and send every
request of it through that client (``conformance.host.fanout.each_async`` runs independent requests at once, at
most :attr:`concurrency` at a time), so that connections and TLS sessions are reused.
"""

from __future__ import annotations

import asyncio
from typing import Any, Unpack

import httpx

from conformance.core._exceptions import ResponseTooLarge, TargetTooSlow, TargetUnreachable
from conformance.host._cookies import Jars
from conformance.host._decode import ACCEPT_ENCODING
from conformance.host._wire import AsyncWire
from conformance.host.http import (
    USER_AGENT,
    HostHTTP,
    Pause,
    RequestOptions,
    Send,
    Transfer,
    environment_proxies,
    request_steps,
    ssl_context,
)

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class AsyncHostHTTP:
    """``async with AsyncHostHTTP(host_http) as http: response = await http.get(url)``."""

    def __init__(self, host: HostHTTP, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.host = host
        self.guard = host.guard
        self.redactor = host.redactor
        self.pacer = host.pacer
        self.concurrency = host.concurrency
        settings = host.httpx_client_kwargs()
        verify = ssl_context(host.ca_bundle, client_cert=settings.get("client_cert"))  # shared, never mutated
        mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
        if transport is None:
            for pattern, proxy in environment_proxies():
                mounts[pattern] = None if proxy is None else httpx.AsyncHTTPTransport(proxy=proxy, verify=verify)
        if transport is None and settings.get("insecure_loopback"):
            insecure = ssl_context(host.ca_bundle, verify=False, client_cert=settings.get("client_cert"))
            mounts.update({f"all://{h}": httpx.AsyncHTTPTransport(verify=insecure) for h in _LOOPBACK})
        # The environment's proxies are read once (environment_proxies). One jar, as an httpx.AsyncClient has.
        self._client = AsyncWire(
            transport if transport is not None else httpx.AsyncHTTPTransport(verify=verify, trust_env=False),
            mounts=mounts,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            timeout=httpx.Timeout(**settings["timeout"]),
            jars=Jars(lanes=False),
        )

    async def __aenter__(self) -> AsyncHostHTTP:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def request(self, method: str, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        """One logical request, as :meth:`HostHTTP.request` (the same steps: guarded redirects, retries within the
        total time, the run's pace)."""
        steps = request_steps(self.host, method, url, options, pacer=self.pacer)
        try:
            step = steps.send(None)
            while not isinstance(step, httpx.Response):
                if isinstance(step, Send):
                    try:
                        reply = await self._send(*step)
                    except TargetUnreachable as exc:  # the steps decide: sent once more, or raised
                        step = steps.throw(exc)
                        continue
                else:
                    await asyncio.sleep(step.seconds if isinstance(step, Pause) else step)
                    reply = None
                step = steps.send(reply)
        finally:
            steps.close()
        return step

    async def _send(self, method: str, url: str, kwargs: dict[str, Any], started: float) -> httpx.Response:
        transfer = Transfer(self.host, self._client, Send(method, url, kwargs, started))
        try:
            response = await self._client.send(transfer.request)
            try:
                predecoded = transfer.begin(response)
                async for chunk in response.aiter_bytes() if predecoded else response.aiter_raw():
                    transfer.read(chunk)
            finally:
                await response.aclose()
        except (ResponseTooLarge, TargetUnreachable, TargetTooSlow, httpx.HTTPError) as exc:
            raise transfer.failed(exc) from None
        return transfer.done(response)

    async def get(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return await self.request("GET", url, **options)

    async def post(self, url: str, **options: Unpack[RequestOptions]) -> httpx.Response:
        return await self.request("POST", url, **options)


__all__ = ["AsyncHostHTTP"]
