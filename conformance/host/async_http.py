"""The async twin of :class:`HostHTTP` for ``async def`` checks and vendors' async tests.

It is built from a :class:`HostHTTP` and keeps its behaviour: the same URL guard (checked before every request and
every redirect hop), timeouts, TLS settings (CA bundle, client certificate, unverified TLS on loopback only when
allowed), response size cap and total time, retry policy, and evidence recorded into the running check through
:func:`record_exchange`, redacted by the same redactor. Only the run's pacer (rate-limit budgets) is not shared:
async vendor tests are not rate-limit checks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import httpx

from conformance._exceptions import ResponseTooLarge, TargetUnreachable
from conformance.host.exchange import now_stamp
from conformance.host.http import (
    _UNSET,
    MAX_REDIRECTS,
    USER_AGENT,
    HostHTTP,
    RetryPolicy,
    describe_http_error,
    record_httpx_exchange,
    redirect_hop,
    ssl_context,
)

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class AsyncHostHTTP:
    """``async with AsyncHostHTTP(host_http) as http: response = await http.get(url)``."""

    def __init__(self, host: HostHTTP, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.host = host
        self.guard = host.guard
        self.redactor = host.redactor
        settings = host.httpx_client_kwargs()
        verify = ssl_context(host.ca_bundle, client_cert=settings.get("client_cert"))  # shared, never mutated
        mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
        if transport is None and settings.get("insecure_loopback"):
            insecure = ssl_context(host.ca_bundle, verify=False)
            mounts = {f"all://{h}": httpx.AsyncHTTPTransport(verify=insecure) for h in _LOOPBACK}
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(**settings["timeout"]),
            verify=verify,
            transport=transport,
            mounts=mounts or None,
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
        )

    async def __aenter__(self) -> AsyncHostHTTP:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Any = None,
        json: Any = _UNSET,
        content: bytes | str | None = None,
        retry: RetryPolicy | None = _UNSET,
        follow_redirects: bool = False,
        metadata_driven: bool = False,
    ) -> httpx.Response:
        """One logical request, as :meth:`HostHTTP.request` (guarded redirects, retries within the total time)."""
        policy = self.host.retry if retry is _UNSET else retry
        started = time.monotonic()
        attempt = hops = 0
        while True:
            self.guard.check(url, metadata_driven=metadata_driven or hops > 0)
            kwargs: dict[str, Any] = {"headers": headers, "params": params, "content": content}
            if json is not _UNSET:
                kwargs["json"] = json
            response = await self._send(method, url, kwargs, started)
            if follow_redirects and response.is_redirect and hops < MAX_REDIRECTS:
                url, method, headers, drop_body = redirect_hop(response, method, headers)
                params, hops = None, hops + 1
                if drop_body:
                    json, content = _UNSET, None
                continue
            if policy is None:
                return response
            spent = time.monotonic() - started
            wait = policy.delay(response, attempt, spent)
            if wait is None or spent + wait > self.host.total_timeout:
                return response
            await asyncio.sleep(wait)
            attempt += 1

    async def _send(self, method: str, url: str, kwargs: dict[str, Any], started: float) -> httpx.Response:
        request = self._client.build_request(method, url, **kwargs)
        t0 = time.monotonic()
        stamp = now_stamp()
        shown = f"{method} {self.redactor.url(url)}"
        body = bytearray()
        try:
            response = await self._client.send(request, stream=True)
            try:
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > self.host.max_response_bytes:
                        raise ResponseTooLarge(f"{shown}: response body exceeds {self.host.max_response_bytes} bytes")
                    if time.monotonic() - started > self.host.total_timeout:
                        raise TargetUnreachable(f"{shown}: no complete response within {self.host.total_timeout:.0f}s")
            finally:
                await response.aclose()
        except (ResponseTooLarge, TargetUnreachable) as exc:
            exc.exchange = record_httpx_exchange(
                self.redactor, request, None, None, sent_at=t0, stamp=stamp, error=str(exc)
            )
            raise
        except httpx.HTTPError as exc:
            message = f"{shown}: {describe_http_error(exc)}"
            recorded = record_httpx_exchange(self.redactor, request, None, None, sent_at=t0, stamp=stamp, error=message)
            raise TargetUnreachable(self.redactor.scrub(message), exchange=recorded) from None
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
        final = httpx.Response(response.status_code, headers=headers, content=bytes(body), request=request)
        record_httpx_exchange(self.redactor, request, final, bytes(body), sent_at=t0, stamp=stamp)
        return final

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.request("GET", url, **kwargs)

    async def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.request("POST", url, **kwargs)


__all__ = ["AsyncHostHTTP"]
