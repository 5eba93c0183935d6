"""The assertion probes' cases on one grant: at once while every one is refused, in turn on a fresh grant once one
is accepted (its rotation may have staled the refresh token the others carried)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.core import _context
from conformance.host.oauth import TokenResult
from conformance.suites.auth.test_cimd import AssertionProbe


class FakeTokens:
    """A token endpoint on a refresh-token grant: ``accept`` names the assertions it takes (rotating the token)."""

    def __init__(self, accept: set[str], grant: str) -> None:
        self.accept = accept
        self.grant = grant
        self.sent: list[tuple[str, str]] = []  # (refresh token, assertion), as they came
        self.lock = threading.Lock()
        self.together: threading.Barrier | None = None  # the first two cases must be in flight at once

    def request(self, form: dict[str, str], *, method: str, assertion: str) -> TokenResult:
        if self.together is not None and assertion in ("assertion-0", "assertion-1"):
            self.together.wait()
        with self.lock:
            self.sent.append((form["refresh_token"], assertion))
            if assertion in self.accept:
                body: dict[str, Any] = {"access_token": "a", "token_type": "Bearer", "refresh_token": f"{assertion}-r"}
                return TokenResult(httpx.Response(200, json=body), body, method)
            body = {"error": "invalid_client"}
            return TokenResult(httpx.Response(401, json=body), body, method)


@dataclass
class FakeAccount:
    tokens: FakeTokens
    refresh_token: str
    resource: str = "https://tools.example"


@dataclass
class FakeHTTP:
    concurrency: int
    secrets: list[str] = field(default_factory=list)

    @property
    def redactor(self) -> FakeHTTP:
        return self

    def add_secret(self, value: str) -> None:
        self.secrets.append(value)


class FakeLinker:
    def __init__(self, concurrency: int, accept: set[str]) -> None:
        self.http = FakeHTTP(concurrency)
        self.accept = accept
        self.grants = 0

    def link(self) -> FakeAccount:
        self.grants += 1
        return FakeAccount(FakeTokens(self.accept, f"grant-{self.grants}"), f"refresh-{self.grants}")


def probe_for(linker: FakeLinker) -> AssertionProbe:
    return AssertionProbe(linker, linker.link())  # type: ignore[arg-type]


CASES = {f"case {n}": f"assertion-{n}" for n in range(6)}


def test_refused_cases_go_at_once_on_one_grant_and_come_back_in_order() -> None:
    linker = FakeLinker(concurrency=4, accept=set())
    probe = probe_for(linker)
    probe.account.tokens.together = threading.Barrier(2, timeout=30)
    _context.begin(["AUTH-CIMD-03"])
    try:
        results = list(probe.each(CASES))
    finally:
        _context.end()
    assert [case for case, _ in results] == list(CASES)
    assert all(result.error == "invalid_client" for _, result in results)
    assert linker.grants == 1
    assert sorted(assertion for _, assertion in probe.account.tokens.sent) == sorted(CASES.values())
    assert {token for token, _ in probe.account.tokens.sent} == {"refresh-1"}
    assert sorted(linker.http.secrets) == sorted(CASES.values())


def test_an_accepted_case_sends_every_case_again_in_turn_on_a_fresh_grant() -> None:
    linker = FakeLinker(concurrency=4, accept={"assertion-2"})
    probe = probe_for(linker)
    record = _context.begin(["AUTH-CIMD-03"])
    try:
        results = dict(probe.each(CASES))
    finally:
        _context.end()
    assert linker.grants == 2
    again = probe.account.tokens.sent
    assert [assertion for _, assertion in again] == list(CASES.values())  # in turn, in the table's order
    # the accepted case's rotated token carries the cases after it, as a host keeps what it was given
    assert [token for token, _ in again] == ["refresh-2"] * 3 + ["assertion-2-r"] * 3
    assert results["case 2"].ok and not results["case 3"].ok
    assert any("sent again in turn" in note for note in record.notes)
