"""``conformance replay REPORT RULE [CASE]``: send a recorded case's requests again and compare the answers.

The requests are those report.json recorded for one case of a rule's table (or, without a case, every exchange of
the rule's evidence), sent once more through the host's HTTP client (the URL guard, TLS trust, timeouts and
redaction of a run; no retry, no pacing) to the report's target, or to ``--target-url`` (a fixed build served
elsewhere). A redaction marker in a recorded request is filled from the environment: the target's own credential
(``CONFORMANCE_PLATFORM_API_KEY``, ``CONFORMANCE_COMPRESSION_API_KEY``; the tool server's access token) where the
marker stands in the target's ``Authorization`` header (for the tool server also where it stands for an
``access_token`` on the target's origin), else the variable the HTML report's curl reproducer names
(``${CLIENT_SECRET}``, ``${BASIC_CREDENTIALS}`` ...). The tool server's access token is ``CONFORMANCE_ACCESS_TOKEN``
when set; otherwise the replay links test account 1 as a run does (``suites/_linking.py``: discovery, the host's
client, the login, with the run's settings from the environment and configuration files: the test account, the
client's credentials or key, the publisher), once, when a request first needs it; what linking lacks is named.
An exchange whose variable is unset is not sent, and the output names the variable; nor is one that carried a
credential the run crafted for its case (``[REDACTED:crafted]``: an altered key, a forged token), which no variable
holds, nor one the report keeps the metadata of only (``omitted``: past the run's budget of bodies). No secret is
printed: the new exchanges are redacted as a run's are, with every value filled in registered as a secret.

Outcome. Each replayed exchange is compared with the recorded one by status class (2xx, 3xx, 4xx, 5xx, or no
answer): "same" or "differs". A case is also judged as its rule's table judges it when its record says what a
conforming target does (``expected``: "refused" means the case's last request gets no 2xx answer, or a 2xx that
refuses in band, a tool server's JSON-RPC error or error result): the output
shows the recorded outcome and the outcome now. The replay *reproduces* the report when every replayed exchange
answered in its recorded status class.

Exit codes: 0 reproduced; 1 an answer differs from the recorded one (for a failed case: the target now answers
otherwise, e.g. fixed); 2 usage error (unreadable report, unknown rule or case, nothing recorded to replay);
3 nothing differed but some exchange could not be replayed (a variable unset, a body the report does not hold, an
exchange the harness received rather than sent, the time bound spent).
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from conformance.core import _context
from conformance.core._exceptions import ConformanceError, TargetError
from conformance.core._values import is_int
from conformance.core.targets import TARGETS
from conformance.report.placeholders import CRAFTED, REDACTION, placeholder

REPRODUCED, DIFFERS, USAGE, INCOMPLETE = 0, 1, 2, 3
ACCESS_TOKEN_ENV = "CONFORMANCE_ACCESS_TOKEN"  # a bearer token for the tool server (else one is obtained by linking)
LINKED = "a fresh access token (test account 1 linked)"  # where a linked token came from, as the output says
DEFAULT_BOUND_S = 120.0  # the whole replay; each request also has the run's own timeouts
SKIPPED_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})
BINARY_BODY = "<binary body: "
TRUNCATED_BODY = " more characters]"
EXCERPT_CHARS = 160


@dataclass
class Replayed:
    """One recorded exchange and what became of it."""

    number: int  # its number (1-based) in the rule's evidence
    recorded: Mapping[str, Any]
    case: str | None
    now: dict[str, Any] | None = None  # the new exchange, redacted
    refused: str | None = None  # why it was not sent
    variables: list[str] = field(default_factory=list)  # the variables that filled its redaction markers

    @property
    def comparison(self) -> str:
        if self.now is None:
            return "not replayed"
        same = status_class(self.recorded.get("status")) == status_class(self.now.get("status"))
        return "same" if same else "differs"


@dataclass
class CaseVerdict:
    case: str
    expected: str | None
    recorded: str  # the case's outcome in the report
    now: str  # the outcome the replay judges ("not judged" when it cannot)


@dataclass
class Replay:
    rule: str
    target: str
    recorded_url: str
    url: str  # where the requests went
    case: str | None
    exchanges: list[Replayed]
    cases: list[CaseVerdict]

    @property
    def exit_code(self) -> int:
        comparisons = [e.comparison for e in self.exchanges]
        if "differs" in comparisons:
            return DIFFERS
        if "not replayed" in comparisons:
            return INCOMPLETE
        return REPRODUCED

    @property
    def verdict(self) -> str:
        return {REPRODUCED: "reproduced", DIFFERS: "differs", INCOMPLETE: "incomplete"}[self.exit_code]

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "target": self.target,
            "recorded_url": self.recorded_url,
            "url": self.url,
            "case": self.case,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "cases": [vars(c) for c in self.cases],
            "exchanges": [
                {
                    "number": e.number,
                    "case": e.case,
                    "comparison": e.comparison,
                    "refused": e.refused,
                    "variables": e.variables,
                    "recorded": dict(e.recorded),
                    "now": e.now,
                }
                for e in self.exchanges
            ],
        }


def status_class(status: Any) -> str:
    if is_int(status) and 100 <= status <= 599:
        return f"{status // 100}xx"
    return "no answer"


# -- what to replay -------------------------------------------------------------------------------------------------


def _select_result(report: Any, rule: str, target_name: str | None) -> Any:
    wanted = rule.strip().upper()
    found = [r for r in report.results if r.rule.upper() == wanted]
    if not found:
        raise ConformanceError(f"replay: the report has no result for rule {rule}")
    if target_name is not None:
        found = [r for r in found if r.target_name == target_name]
        if not found:
            raise ConformanceError(f"replay: the report has no result for {rule} on the target named {target_name}")
    if len(found) > 1:
        names = ", ".join(sorted(str(r.target_name) for r in found))
        raise ConformanceError(f"replay: {rule} has a result per named target ({names}); choose one with --target-name")
    return found[0]


def _select_case(result: Any, case: str) -> dict[str, Any]:
    records = list(result.cases)
    if not records:
        raise ConformanceError(f"replay: {result.rule} has no table of cases in this report; replay the rule alone")
    for match in (lambda c: c == case, lambda c: c.casefold() == case.casefold()):
        chosen = [r for r in records if match(str(r.get("case", "")))]
        if chosen:
            return chosen[0]
    names = "; ".join(str(r.get("case")) for r in records)
    raise ConformanceError(f"replay: {result.rule} has no case {case!r}; its cases: {names}")


def _recorded_url(report: Any, result: Any) -> str:
    if result.target_url:
        return str(result.target_url)
    key = f"{result.target_name}/{result.target}" if result.target_name else result.target
    url = report.targets.get(key)
    if not url:
        raise ConformanceError(f"replay: the report names no URL for its {result.target} target")
    return str(url)


# -- filling redaction markers ------------------------------------------------------------------------------------


@dataclass
class Credentials:
    """Where a marker's value comes from: the target's credential, else the reproducer's variable."""

    target: str
    origin: str  # the target's origin (where the requests go): only its requests carry the target's credential
    env: Mapping[str, str]
    settings: Any
    filled: set[str] = field(default_factory=set)  # every value filled in so far (secrets all)
    obtain: Callable[[], str] | None = None  # the tool server's fresh access token (linking an account)
    token_problem: str | None = None  # why ``obtain`` gave none
    _token: str | None = None

    def access_token(self) -> tuple[str, str | None]:
        """(where it came from, the tool server's access token or None): the variable when set, else one obtained
        by linking (once; ``token_problem`` says why not)."""
        if self.env.get(ACCESS_TOKEN_ENV):
            return ACCESS_TOKEN_ENV, self.env[ACCESS_TOKEN_ENV]
        if self._token is None and self.obtain is not None and self.token_problem is None:
            self._token = self.obtain()  # raises nothing: a problem is kept in token_problem
        return (LINKED, self._token) if self._token else (ACCESS_TOKEN_ENV, None)

    def credential(self, scheme: str) -> tuple[str, str | None] | None:
        """(variable, value or None) of the target's own credential under ``scheme``: as the run presents it
        under the target's own scheme (the api:KEY pair of a Basic target), the key itself under another scheme or
        none (a case sending the key otherwise: a crafted value is marked so, and never reaches here). None: the
        target has no such credential."""
        kind = TARGETS[self.target]
        if kind.api_key_setting is None:  # the tool server: its token, under its scheme or another (not crafted)
            return self.access_token()
        variable = kind.api_key_env or ""
        key = self.settings.get(kind.api_key_setting)
        if not key:
            return variable, None
        if scheme == kind.key_scheme == "basic":
            return variable, base64.b64encode(f"api:{key}".encode()).decode()
        return variable, str(key)

    def fill(self, text: str, header: str | None, url: str) -> tuple[str, list[str], list[str]]:
        """``text`` with each marker replaced: (text, variables used, variables missing). Every value filled in
        is also in ``self.filled``, for the redactor of the new exchanges."""
        used: list[str] = []
        missing: list[str] = []
        pieces: list[str] = []
        last = 0
        for match in REDACTION.finditer(text):
            before = text[: match.start()]
            pieces.append(text[last : match.start()])
            last = match.end()
            if match.group() == CRAFTED:
                missing.append(CRAFTED)
                continue
            variable, value = self._source(before, header, url)
            if value is None:
                missing.append(variable)
                continue
            used.append(variable)
            pieces.append(value)
            self.filled.add(value)
        pieces.append(text[last:])
        return "".join(pieces), used, missing

    def _source(self, before: str, header: str | None, url: str) -> tuple[str, str | None]:
        if header and header.lower() == "authorization" and _origin(url) == self.origin:
            scheme = before.strip().split(" ")[0].lower() if before.strip() else ""
            found = self.credential(scheme)
            if found is not None:
                return found
        name = placeholder(f"{header}: {before}" if header else before, header)
        if name == "ACCESS_TOKEN" and _origin(url) == self.origin and TARGETS[self.target].api_key_setting is None:
            return self.access_token()  # the tool server's token outside the header (a query or body access_token)
        return name, self.env.get(name) or None


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc.rpartition('@')[2]).lower()}"


def _moved(url: str, recorded: str, target: str) -> str:
    """``url`` sent to the moved target: under the recorded target URL, its path moves with it; elsewhere on the
    recorded target's origin (its discovery documents), only the origin changes; other origins stay."""
    if url == recorded or url.startswith((recorded + "/", recorded + "?")):
        return target + url[len(recorded) :]
    origin = _origin(recorded)
    if _origin(url) == origin:
        return _origin(target) + url[len(origin) :]
    return url


@dataclass
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    variables: list[str]  # the variables that filled its redaction markers


def _request(exchange: Mapping[str, Any], credentials: Credentials, rebase: tuple[str, str] | None) -> Request | str:
    """The request to send again, or why it cannot be (its variables are named)."""
    if exchange.get("direction") == "inbound":
        return "the target's request to the harness (inbound), not one the harness sent"
    if "omitted" in exchange:
        return "the report keeps its metadata only (its bodies were past the run's budget)"
    if exchange.get("client"):
        return f"made by another client ({exchange['client']}) than the host's HTTP client"
    recorded_headers = exchange.get("request_headers")
    header_names = {str(n).lower() for n in recorded_headers} if isinstance(recorded_headers, dict) else set()
    if "x-amz-date" in header_names:
        return "a signed request (AWS Signature V4): its signature covers the time it was sent"
    method = str(exchange.get("method") or "")
    url = str(exchange.get("url") or "")
    if not method or not url:
        return "the report holds no method or URL for it"
    if rebase:
        url = _moved(url, *rebase)
    missing: list[str] = []
    used: list[str] = []
    url, u, m = credentials.fill(url, None, url)
    used += u
    missing += m
    headers: dict[str, str] = {}
    for name, value in recorded_headers.items() if isinstance(recorded_headers, dict) else ():
        if str(name).lower() in SKIPPED_HEADERS:
            continue
        text, u, m = credentials.fill(str(value), str(name), url)
        headers[str(name)] = text
        used += u
        missing += m
    body: bytes | None = None
    recorded_body = exchange.get("request_body")
    if recorded_body is not None:
        text = recorded_body if isinstance(recorded_body, str) else json.dumps(recorded_body)
        if text.startswith(BINARY_BODY):
            return "its body was binary and the report keeps only its size"
        if text.endswith(TRUNCATED_BODY):
            return "its body was cut in the report (only the first characters are kept)"
        text, u, m = credentials.fill(text, None, url)
        used += u
        missing += m
        body = text.encode("utf-8")
    if CRAFTED in missing:
        return (
            "it carried a credential the run crafted for the case (altered, forged or wrong on purpose), which the "
            "report does not keep: judge this case with a run"
        )
    if missing:
        unset = ", ".join(dict.fromkeys(missing))
        if ACCESS_TOKEN_ENV in missing and credentials.token_problem:
            return (
                f"a redacted value in it needs {unset}: set it in the environment, or supply what linking an "
                f"account needs to obtain a fresh one ({credentials.token_problem}), to replay this exchange"
            )
        return f"a redacted value in it needs {unset}: set it in the environment to replay this exchange"
    return Request(method, url, headers, body, list(dict.fromkeys(used)))


def _linked_token(http: Any, settings: Any, credentials: Credentials) -> str:
    """A fresh access token from linking test account 1, as a run does; "" (and ``token_problem``) when the
    configuration lacks something linking needs, or the target broke a rule on the way."""
    from conformance.suites._linking import fresh_access_token
    from conformance.verdict._verdicts import Blocked, NeedsUnmet

    try:
        token = fresh_access_token(http, settings)
    except NeedsUnmet as exc:
        credentials.token_problem = f"needs {exc.need}" + (f": {exc.option}" if exc.option else "")
    except Blocked as exc:
        credentials.token_problem = f"linking failed at {exc.rule_id}: {exc.reason}"
    except (ConformanceError, TargetError) as exc:
        credentials.token_problem = f"linking failed: {exc}"
    except Exception as exc:  # a target's answer the linking client could not handle: said, never a crash
        credentials.token_problem = f"linking failed: {type(exc).__name__}: {exc}"
    else:
        http.redactor.add_secret(token)
        return token
    credentials.token_problem = http.redactor.scrub(credentials.token_problem)
    return ""


# -- sending ----------------------------------------------------------------------------------------------------------


def _send(http: Any, request: Request, timeout: float) -> dict[str, Any]:
    """Send once (no retry, no pacing) and return the new exchange, redacted as a run records it."""
    _context.begin(("replay",))
    error: str | None = None
    try:
        http.request(
            request.method,
            request.url,
            headers=request.headers,
            content=request.body,
            retry=None,
            follow_redirects=False,
            timeout=timeout,
        )
    except TargetError as exc:
        error = http.redactor.scrub(str(exc))
    finally:
        record = _context.end()
    exchange = record.last_exchange if record is not None else None
    if exchange is None:
        return {"method": request.method, "url": http.redactor.url(request.url), "status": None, "error": error}
    return dict(exchange)


def replay(
    report_path: Path,
    rule: str,
    case: str | None = None,
    *,
    target_url: str | None = None,
    target_name: str | None = None,
    bound_s: float = DEFAULT_BOUND_S,
    env: Mapping[str, str] | None = None,
    config: Path | None = None,
) -> Replay:
    """Replay one case (or a rule's evidence) of the report at ``report_path``; see the module's docstring."""
    from conformance.config import read_config_files, resolve
    from conformance.host import HostHTTP
    from conformance.report.summary import load_report

    env = os.environ if env is None else env
    report = load_report(report_path, "replay")
    result = _select_result(report, rule, target_name)
    recorded_url = _recorded_url(report, result)
    evidence = list(result.evidence)
    record = _select_case(result, case) if case is not None else None
    if record is not None:
        numbers = [n for n in record.get("exchanges") or [] if isinstance(n, int) and 1 <= n <= len(evidence)]
        if not numbers:
            raise ConformanceError(
                f"replay: the report holds no exchange of {result.rule}'s case {record.get('case')!r} "
                f"(outcome {record.get('outcome')}: {record.get('got')}): the case sent nothing (or the report, "
                "of an older version, did not keep its exchanges)"
            )
    else:
        numbers = list(range(1, len(evidence) + 1))
        if not numbers:
            raise ConformanceError(f"replay: the report holds no exchange of {result.rule}")
    cli: dict[str, Any] = {}
    if report.config.get("allow_insecure_loopback"):
        cli["allow_insecure_loopback"] = True  # what the run was allowed (plain HTTP and self-signed on loopback)
    base = recorded_url.rstrip("/")
    rebase = (base, target_url.rstrip("/")) if target_url else None
    if result.target == "tool_server":
        cli[TARGETS["tool_server"].url_setting] = rebase[1] if rebase else base  # where a fresh token is for
    settings = resolve(cli=cli, env=env, files=read_config_files(Path.cwd(), config))
    credentials = Credentials(result.target, _origin(rebase[1] if rebase else base), env, settings)
    http = HostHTTP.from_settings(settings, retry=None, pacer=None)
    if result.target == "tool_server":
        credentials.obtain = lambda: _linked_token(http, settings, credentials)
    for kind in TARGETS.values():  # the keys and the api:KEY pair, configured with or without the target's URL
        key = settings.get(kind.api_key_setting) if kind.api_key_setting else None
        if key:
            http.redactor.add_secret(str(key), user="api" if kind.key_scheme == "basic" else None)
    done: list[Replayed] = []
    deadline = time.monotonic() + bound_s
    try:
        for number in numbers:
            exchange = evidence[number - 1]
            item = Replayed(number, exchange, exchange.get("case") if isinstance(exchange.get("case"), str) else None)
            done.append(item)
            request = _request(exchange, credentials, rebase)
            if isinstance(request, str):
                item.refused = request
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                item.refused = f"the replay's time bound ({bound_s:g}s, --timeout) was spent"
                continue
            item.variables = request.variables
            for value in credentials.filled:
                http.redactor.add_secret(value)
            item.now = _send(http, request, min(left, float(settings.get("total_timeout", left))))
    finally:
        http.close()
    return Replay(
        rule=result.rule,
        target=result.target,
        recorded_url=recorded_url,
        url=rebase[1] if rebase else base,
        case=str(record.get("case")) if record is not None else None,
        exchanges=done,
        cases=_judge_cases(result, record, done),
    )


def _judge_cases(result: Any, chosen: dict[str, Any] | None, done: Sequence[Replayed]) -> list[CaseVerdict]:
    """Each case replayed, judged as its table judges it where the record says what a conforming target does."""
    records = [chosen] if chosen is not None else list(result.cases)
    verdicts = []
    for record in records:
        name = str(record.get("case"))
        mine = [e for e in done if e.number in (record.get("exchanges") or [])]
        if not mine:
            continue
        expected = record.get("expected")
        recorded = str(record.get("outcome"))
        answered = [e for e in mine if e.now is not None and status_class(e.now.get("status")) != "no answer"]
        if all(e.now is None for e in mine):
            now = "not replayed"
        elif expected != "refused" or recorded not in ("passed", "failed"):
            now = "not judged"
        elif not answered or answered[-1] is not mine[-1]:
            now = "not tried"
        else:
            last = answered[-1].now or {}
            now = "failed" if status_class(last.get("status")) == "2xx" and not _refused_in_band(last) else "passed"
        verdicts.append(CaseVerdict(name, expected if isinstance(expected, str) else None, recorded, now))
    return verdicts


def _refused_in_band(exchange: Mapping[str, Any]) -> bool:
    """A 2xx answer that still refuses: a tool server's JSON-RPC error, or an error result (``isError``), which the
    contract accepts beside a 401 ("401 or an error result carrying a challenge"); the tool did not run for the
    caller. A body that is no JSON-RPC (a platform's JSON) is an answer with data, as its 2xx says."""
    from conformance.host.jsonrpc import jsonrpc_messages

    headers = {str(k).lower(): str(v) for k, v in (exchange.get("response_headers") or {}).items()}
    body = exchange.get("response_body")
    if not isinstance(body, str):
        return False
    messages = [m for m in jsonrpc_messages(headers.get("content-type"), body.encode()) if isinstance(m, dict)]
    answers = [m for m in messages if m.get("jsonrpc") == "2.0" and ("result" in m or "error" in m)]
    return bool(answers) and all(
        "error" in m or (isinstance(m.get("result"), dict) and m["result"].get("isError") is True) for m in answers
    )


# -- output ---------------------------------------------------------------------------------------------------------


def _line(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """One printable line of hostile text: controls escaped, cut at ``limit``."""
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    shown = "".join(c if c.isprintable() else ("\\n" if c == "\n" else f"\\x{ord(c):02x}") for c in text)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def _answer(exchange: Mapping[str, Any] | None) -> str:
    if exchange is None:
        return "-"
    status = exchange.get("status")
    if status_class(status) == "no answer":
        return f"no answer ({_line(exchange.get('error') or 'no response')})"
    return f"{status} {_line(exchange.get('response_body'))}".rstrip()


def render(replay: Replay, out: TextIO) -> None:
    what = f"case {replay.case!r} of {replay.rule}" if replay.case else f"{replay.rule} (every recorded exchange)"
    out.write(f"replay of {what}\n")
    moved = f" (recorded at {_line(replay.recorded_url)})" if replay.url != replay.recorded_url.rstrip("/") else ""
    out.write(f"target: {replay.target} {_line(replay.url)}{moved}\n")
    out.write(
        "compared: each answer's status class with the recorded one; a case expected to be refused is judged on "
        "its last request (a 2xx answer with data fails it)\n\n"
    )
    for item in replay.exchanges:
        recorded = item.recorded
        case = f" · case {_line(item.case, 80)!r}" if item.case else ""
        out.write(f"#{item.number}{case}\n")
        out.write(f"  {_line(recorded.get('method'), 10)} {_line(recorded.get('url'), 200)}\n")
        out.write(f"  recorded  {_answer(recorded)}\n")
        if item.refused:
            out.write(f"  not replayed: {item.refused}\n")
            continue
        filled = f" [filled from {', '.join(item.variables)}]" if item.variables else ""
        sent_to = (item.now or {}).get("url")
        if sent_to and sent_to != recorded.get("url"):
            out.write(f"  sent to   {_line(sent_to, 200)}\n")
        out.write(f"  now       {_answer(item.now)}{filled}\n")
        out.write(
            f"  {item.comparison}: {status_class(recorded.get('status'))} recorded, "
            f"{status_class(item.now.get('status') if item.now else None)} now\n"
        )
    out.write("\n")
    for verdict in replay.cases:
        expected = f" (expected: {verdict.expected})" if verdict.expected else ""
        out.write(f"case {verdict.case!r}{expected}: recorded {verdict.recorded}, now {verdict.now}\n")
    counts = {k: sum(e.comparison == k for e in replay.exchanges) for k in ("same", "differs", "not replayed")}
    tally = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    out.write(f"replay: {replay.verdict} ({tally})\n")


def add_arguments(parser: Any) -> None:
    parser.add_argument("report", help="the run's report.json")
    parser.add_argument("rule", help="the rule whose requests to send again (e.g. TOK-07)")
    parser.add_argument("case", nargs="?", help="one case of the rule's table (default: every recorded exchange)")
    parser.add_argument("--target-url", help="send to this base URL instead of the report's target (a fixed build)")
    parser.add_argument("--target-name", help="in a fleet report: the named target whose result to replay")
    parser.add_argument("--timeout", type=float, default=DEFAULT_BOUND_S, help="bound on the whole replay (seconds)")
    parser.add_argument("--config", help="configuration file (default conformance.toml, then pyproject.toml)")
    parser.add_argument("--json", action="store_true", help="the recorded and new exchanges as JSON")


def run(args: Any, out: TextIO) -> int:
    if args.timeout <= 0:
        raise ConformanceError("replay: --timeout must be positive")
    done = replay(
        Path(args.report),
        args.rule,
        args.case,
        target_url=args.target_url,
        target_name=args.target_name,
        bound_s=args.timeout,
        config=Path(args.config) if args.config else None,
    )
    if args.json:
        out.write(json.dumps(done.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        render(done, out)
    return done.exit_code
