"""The platform suite's client: the calls its checks make (:class:`PlatformApi`), and what the platform and campaigns
suites share: JSON error bodies, the ledger of every answer's rate-limit headers (judged by
:mod:`conformance.judges.platform`), Hypothesis settings for checks that talk to a target."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import Phase, settings

from conformance import Failure, hypothesis_profile, observe
from conformance.config import Target
from conformance.core import _context
from conformance.core._exceptions import InvalidResponse
from conformance.host import parse_json
from conformance.host.http import HostHTTP
from conformance.judges.platform import PROJECT, header_values, project_header_problems, rate_limit_problems
from conformance.verdict._signals import host_verdicts, with_host_verdicts
from conformance.verdict._verdicts import Throttled

# RL-07: what every token-count answer carries.
TOKEN_COUNT_HEADERS = tuple(
    f"x-ratelimit-{what}-{unit}" for unit in ("requests", "tokens") for what in ("limit", "remaining", "reset")
)


def parse_retry_after(text: str | None) -> float | None:
    """Retry-After as delta-seconds (the form rate limiters send); None when absent or unparseable."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        from conformance.host import parse_retry_after as parse_http_date

        return parse_http_date(text)
    return value if value >= 0 else None


def json_body(response: httpx.Response) -> Any:
    try:
        return parse_json(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


def error_object(response: httpx.Response) -> dict[str, Any] | None:
    """The ``error`` object of a JSON error body, or None."""
    body = json_body(response)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return None


def describe(response: httpx.Response) -> str:
    text = response.text[:200].replace("\n", " ")
    return f"{response.request.method} {response.request.url.path} → {response.status_code} {text}"


def expect_json_error(response: httpx.Response, statuses: range | tuple[int, ...], what: str) -> dict[str, Any]:
    """Fail unless the response has one of ``statuses`` and a JSON ``{"error": {...}}`` body."""
    if response.status_code not in statuses:
        raise Failure(f"{what}: expected status in {_show(statuses)}, got {describe(response)}")
    error = error_object(response)
    if error is None:
        raise Failure(f"{what}: the {response.status_code} body is not a JSON error object: {describe(response)}")
    return error


def _show(statuses: range | tuple[int, ...]) -> str:
    if isinstance(statuses, range):
        return f"{statuses.start}..{statuses.stop - 1}"
    return ", ".join(str(s) for s in statuses)


CLIENT_ERROR = range(400, 500)


def key_fingerprint(authorization: str | None) -> str:
    """What the ledger keeps of the ``Authorization`` header a response answered (never the key itself)."""
    return hashlib.sha256((authorization or "").encode()).hexdigest()[:16]


@dataclass
class KeyAnswers:
    """The answers one key got (RL-05 tells keys with a project-scoped token limit from those without)."""

    responses: int = 0
    with_project_headers: int = 0
    example: str = ""  # the first answer that carried a project-token header


EXAMPLES = 10  # a few examples say enough


@dataclass
class RateLimitLedger:
    """Every response the platform and campaigns checks receive from one target passes through its ledger (their
    API wrappers feed it), so RL-01, RL-04, RL-05 and RL-07, which run last, judge all of that target's answers,
    not only their own requests. Checks whose bodies overlap feed it at once: one answer is absorbed at a time."""

    responses: int = 0
    with_headers: int = 0
    with_project_headers: int = 0
    problems: dict[str, list[str]] = field(default_factory=lambda: {"RL-01": [], "RL-07": []})
    project_apart: list[str] = field(default_factory=list)  # RL-05's reported form: the three not together
    by_key: dict[str, KeyAnswers] = field(default_factory=dict)  # key_fingerprint -> its answers
    token_counts: int = 0  # 2xx token-count answers (RL-07 judges their headers)
    overloaded: httpx.Response | None = None  # the first 503 seen (RL-04 judges it when no fault switch is set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def absorb(self, response: httpx.Response) -> httpx.Response:
        with self.lock:
            self._absorb(response)
        return response

    def _absorb(self, response: httpx.Response) -> None:
        headers = header_values(response)
        self.responses += 1
        self.with_headers += any(name.startswith("x-ratelimit-") for name in headers)
        project = any(name in headers for name in PROJECT)
        self.with_project_headers += project
        key = self.by_key.setdefault(key_fingerprint(response.request.headers.get("authorization")), KeyAnswers())
        key.responses += 1
        key.with_project_headers += project
        if project and not key.example:
            key.example = describe(response)[:70]
        if response.status_code == 503 and self.overloaded is None:
            self.overloaded = response

        def seen() -> str:  # the answer as an example shows it: made only for an example kept
            return f"{describe(response)[:70]}: "

        found = rate_limit_problems(headers)
        if found and len(self.problems["RL-01"]) < EXAMPLES:
            self.problems["RL-01"].append(seen() + "; ".join(found))
        apart = project_header_problems(headers)
        if apart and len(self.project_apart) < EXAMPLES:
            self.project_apart.append(seen() + "; ".join(apart))
        if response.request.url.path.endswith(TOKENS_PATH) and 200 <= response.status_code < 300:
            self.token_counts += 1
            missing = [name for name in TOKEN_COUNT_HEADERS if name not in headers]
            if missing and len(self.problems["RL-07"]) < EXAMPLES:
                self.problems["RL-07"].append(seen() + f"without {', '.join(missing)}")


LEDGERS: dict[str, RateLimitLedger] = {}  # one per target: a fleet's targets may share a process


def ledger_of(target: Target) -> RateLimitLedger:
    """The ledger of every response ``target`` gave this process."""
    ledger = LEDGERS.get(target.base_url)
    return ledger if ledger is not None else LEDGERS.setdefault(target.base_url, RateLimitLedger())


def target_settings(**overrides: Any) -> settings:
    """The ``conformance`` Hypothesis profile for checks that talk to a target: no shrinking (every replay costs
    requests and the target's state moves on), one reported failure."""
    base = hypothesis_profile()
    values: dict[str, Any] = {
        "phases": (Phase.explicit, Phase.reuse, Phase.generate),
        "report_multiple_bugs": False,
        "print_blob": False,
    }
    values.update(overrides)
    return settings(base, **values)


def run_property(test: Callable[[], None]) -> None:
    """Run a Hypothesis test; a flaky or grouped failure is reported as its first Failure (a verdict), not as a
    harness error — a target that answers differently on replay has still broken the rule. So is a failure whose
    replay the target throttled: the answer that broke the rule was real (without one, throttling blocks)."""
    hypothesis = getattr(test, "hypothesis", None)
    examples = 0
    if hypothesis is not None:  # each example meets the host's signals as verdicts (a throttle ends it at once)
        inner = with_host_verdicts(hypothesis.inner_test)

        @functools.wraps(inner)
        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal examples
            examples += 1
            return inner(*args, **kwargs)

        hypothesis.inner_test = counted
    try:
        with host_verdicts():
            test()
        if examples:  # what a pass rests on
            observe(f"the property held on {examples} generated example(s)")
    except Throttled as exc:
        record = _context.current()
        first = record.first_failure if record is not None else None
        if isinstance(first, AssertionError | InvalidResponse):
            observe(f"a replay of the failing case was throttled ({exc.reason})")
            raise first from None
        raise
    except BaseExceptionGroup as group:
        failures = [e for e in _leaves(group) if isinstance(e, AssertionError | InvalidResponse)]
        if failures:
            raise Failure(str(failures[0])) from None
        raise


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


TOKENS_PATH = "/v1/responses/input_tokens"


@dataclass
class PlatformApi:
    """The calls the platform checks make. They go out without host retries so that every answer is the target's
    own (a retried 503 would hide what RL-04 is looking at); only a throttled answer met by a check of another rule
    is waited out by the host (see ``conformance.host.Pacer``). ``pace=False``: the rate-limit checks' own window."""

    http: HostHTTP
    target: Target
    model: str
    # RL-01 or RL-05 added a response of every kind to the ledger in this run (test_ratelimits._sample)
    sampled: bool = field(default=False, init=False)

    def headers(self, api_key: str | None = None) -> dict[str, str]:
        if api_key is None:
            return dict(self.target.auth)
        return {"Authorization": f"Bearer {api_key}"}

    def count_raw(
        self, body: Any, *, api_key: str | None = None, headers: dict[str, str] | None = None, pace: bool = True
    ) -> httpx.Response:
        sent = self.headers(api_key) if headers is None else headers
        url = self.target.url(TOKENS_PATH)
        return ledger_of(self.target).absorb(self.http.post(url, json=body, headers=sent, retry=None, pace=pace))

    def post_content(self, path: str, content: str) -> httpx.Response:
        """A raw (possibly malformed) JSON body."""
        headers = {**self.headers(), "Content-Type": "application/json"}
        response = self.http.post(self.target.url(path), content=content, headers=headers, retry=None)
        return ledger_of(self.target).absorb(response)

    def body(self, **fields: Any) -> dict[str, Any]:
        return {"model": self.model, **fields}

    def get(self, path: str, *, api_key: str | None = None, **kwargs: Any) -> httpx.Response:
        response = self.http.get(self.target.url(path), headers=self.headers(api_key), retry=None, **kwargs)
        return ledger_of(self.target).absorb(response)
