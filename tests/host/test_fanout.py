"""conformance.host.fanout: independent requests at once, within the bound, their evidence in the items' order, every
request still gated by the run's pacer. Served by httpx.MockTransport; waits are events, never timings."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from conformance.core import _context
from conformance.host import fanout
from conformance.host._guard import UrlGuard
from conformance.host._pace import Pacer
from conformance.host.async_http import AsyncHostHTTP
from conformance.host.http import HostHTTP

HANG_GUARD_S = 10.0  # an event that never comes fails the test instead of hanging it (not a timing assertion)


@pytest.fixture
def record() -> Iterator[_context.CheckRecord]:
    record = _context.begin(["AUTH-TOK-02"])
    try:
        yield record
    finally:
        _context.end()


class InFlight:
    """Counts the requests the handler is serving at once; each waits until ``limit`` are in (or all are done)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.now, self.most = limit, 0, 0
        self.lock = threading.Lock()
        self.full = threading.Event()

    def handler(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            if self.now >= self.limit:
                self.full.set()
        self.full.wait(HANG_GUARD_S)
        with self.lock:
            self.now -= 1
        return httpx.Response(200, json={"path": request.url.path})


def client(handler: object, *, concurrency: int, pacer: Pacer | None = None) -> HostHTTP:
    transport = httpx.MockTransport(handler)  # type: ignore[arg-type]
    return HostHTTP(guard=UrlGuard(), retry=None, transport=transport, concurrency=concurrency, pacer=pacer)


def test_no_more_than_the_bound_are_in_flight(record: _context.CheckRecord) -> None:
    served = InFlight(limit=3)
    http = client(served.handler, concurrency=3)
    paths = fanout.each(range(10), lambda i: http.get(f"https://t.example/{i}").json()["path"], limit=http.concurrency)
    assert paths == [f"/{i}" for i in range(10)]  # results in the items' order
    assert served.most == 3  # at once, and never more than the bound
    assert len(record.exchanges) == 10


def test_evidence_reads_in_the_items_order_whatever_finished_first(record: _context.CheckRecord) -> None:
    # Each answer waits for the next item's to be sent back first: they finish in reverse order.
    count = 4
    answered = [threading.Event() for _ in range(count)]

    def handler(request: httpx.Request) -> httpx.Response:
        index = int(request.url.path.strip("/"))
        if index + 1 < count:
            assert answered[index + 1].wait(HANG_GUARD_S)
        answered[index].set()
        return httpx.Response(200)

    http = client(handler, concurrency=count)
    finished: list[int] = []
    done = [threading.Event() for _ in range(count)]

    def case(index: int) -> int:
        http.get(f"https://t.example/{index}")
        _context.current().notes.append(f"note of case {index}")  # type: ignore[union-attr]
        http.get(f"https://t.example/{index}?n=2")
        if index + 1 < count:  # each case ends after the next one: the whole cases finish in reverse too
            assert done[index + 1].wait(HANG_GUARD_S)
        finished.append(index)
        done[index].set()
        return index

    assert fanout.each(range(count), case, limit=count, case=lambda i: f"case {i}") == list(range(count))
    assert finished == list(reversed(range(count)))  # they did finish in reverse
    assert [(e["url"], e["case"]) for e in record.exchanges] == [
        (f"https://t.example/{i}{query}", f"case {i}") for i in range(count) for query in ("", "?n=2")
    ]
    assert record.notes == [f"note of case {i}" for i in range(count)]


def test_one_at_a_time_reads_as_a_plain_loop() -> None:
    def run(limit: int) -> tuple[list[tuple[str, str]], list[str]]:
        http = client(lambda r: httpx.Response(200), concurrency=limit)
        record = _context.begin(["AUTH-TOK-02"])
        try:

            def case(index: int) -> None:
                http.get(f"https://t.example/{index}")
                _context.current().notes.append(f"note {index}")  # type: ignore[union-attr]

            fanout.each(range(6), case, limit=limit, case=str)
        finally:
            _context.end()
        return [(e["url"], e["case"]) for e in record.exchanges], record.notes

    assert run(1) == run(4)


def test_the_first_error_in_order_is_raised_after_the_others_are_merged(record: _context.CheckRecord) -> None:
    http = client(lambda r: httpx.Response(200), concurrency=1)
    started: list[int] = []

    def case(index: int) -> None:
        started.append(index)
        http.get(f"https://t.example/{index}")
        if index == 1:
            raise LookupError("case 1 broke")

    with pytest.raises(LookupError, match="case 1 broke"):
        fanout.each(range(4), case, limit=1, case=str)
    assert started == [0, 1]  # one at a time: nothing starts after the error
    assert [e["case"] for e in record.exchanges] == ["0", "1"]


class Window:
    """A rate-limited API on a fake clock: ``size`` requests per window of 10 s, then 429 until the reset."""

    def __init__(self, size: int) -> None:
        self.size, self.now = size, 1000.0
        self.lock = threading.Lock()
        self.reset_at, self.used, self.throttled, self.sleeps = self.now + 10, 0, 0, 0

    def clock(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.sleeps += 1
            self.now += seconds

    def handler(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            if self.now >= self.reset_at:
                self.reset_at, self.used = self.now + 10, 0
            self.used += 1
            if self.used > self.size:
                self.throttled += 1
                return httpx.Response(429, headers={"retry-after": "10"})
            headers = {
                "x-ratelimit-limit-requests": str(self.size),
                "x-ratelimit-remaining-requests": str(self.size - self.used),
                "x-ratelimit-reset-requests": f"{self.reset_at - self.now:.3f}s",
            }
        return httpx.Response(200, headers=headers)


def test_requests_at_once_still_pass_the_pacer(record: _context.CheckRecord) -> None:
    window = Window(size=6)
    pacer = Pacer(clock=window.clock, sleep=window.sleep)
    http = client(window.handler, concurrency=4, pacer=pacer)
    statuses = fanout.each(range(30), lambda i: http.get(f"https://api.example/{i}").status_code, limit=4)
    assert statuses == [200] * 30
    assert window.throttled == 0  # never sent past the window
    assert window.sleeps >= 4 and pacer.waited_s > 0  # it waited for the resets instead


def test_requests_in_flight_count_against_the_window(record: _context.CheckRecord) -> None:
    window = Window(size=10)
    pacer = Pacer(clock=window.clock, sleep=window.sleep)
    key = pacer.key("https://api.example/x", None)
    announced = {
        "x-ratelimit-limit-requests": "10",
        "x-ratelimit-remaining-requests": "3",
        "x-ratelimit-reset-requests": "10s",
    }
    pacer.observe(key, httpx.Response(200, headers=announced))
    # Three left, one kept in reserve: two may be in flight at once, the third waits for the reset.
    assert pacer.reserve(key)[0] == 0
    assert pacer.reserve(key)[0] == 0
    wait, why = pacer.reserve(key)
    assert wait > 0 and "waiting" in why
    # Whoever comes while that one waits for the reset waits too, though the window's count is now unknown.
    assert pacer.reserve(key)[0] > 0


@pytest.mark.asyncio
async def test_the_async_twin_runs_within_the_bound_in_order(record: _context.CheckRecord) -> None:
    import asyncio

    state = {"now": 0, "most": 0}
    full = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        if state["now"] >= 2:
            full.set()
        await asyncio.wait_for(full.wait(), HANG_GUARD_S)
        state["now"] -= 1
        return httpx.Response(200, json={"path": request.url.path})

    host = HostHTTP(guard=UrlGuard(), retry=None, concurrency=2)
    async with AsyncHostHTTP(host, transport=httpx.MockTransport(handler)) as http:

        async def case(index: int) -> str:
            return str((await http.get(f"https://t.example/{index}")).json()["path"])

        paths = await fanout.each_async(range(6), case, limit=http.concurrency, case=str)
    assert paths == [f"/{i}" for i in range(6)]
    assert state["most"] == 2
    assert [(e["url"], e["case"]) for e in record.exchanges] == [(f"https://t.example/{i}", str(i)) for i in range(6)]


def test_run_wide_lists_get_the_cases_entries_in_the_cases_order(record: _context.CheckRecord) -> None:
    count = 4
    done = [threading.Event() for _ in range(count)]
    seen: list[int] = []

    def case(index: int) -> None:
        if index + 1 < count:  # finish in reverse order
            assert done[index + 1].wait(HANG_GUARD_S)
        _context.in_order(lambda: seen.append(index))
        done[index].set()

    fanout.each(range(count), case, limit=count)
    assert seen == list(range(count))
    _context.in_order(lambda: seen.append(99))  # outside a case: at once
    assert seen[-1] == 99


@pytest.mark.parametrize(("setting", "cases"), [(None, 4), ("auto", 4), (1, 1), (9, 9)])
def test_a_checks_cases_at_once_follow_the_concurrency_setting(setting: object, cases: int) -> None:
    assert fanout.cases_at_once(setting) == cases
