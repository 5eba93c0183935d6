"""The reviewer's report: one self-contained HTML file rendered from a :class:`RunReport`.

Reviewers decide from this file, and everything in evidence comes from targets, so it is hostile: jinja2
autoescapes every value, control and bidi-override characters are shown as escapes (they could reorder what a
reviewer reads), bodies are capped, and a Content-Security-Policy carrying the hashes of the inline CSS and JS stops
anything that might slip through from running or fetching. The only external links are RFCs on rfc-editor.org.
Every exchange of the report is in the file: a line each, the first and last ones (and those of failed cases) with
their details in the page, the others' details in an embedded JSON data block the script renders, as text, when a
line or a case row is opened. Content is plain HTML (readable without JavaScript; the data block is in the page
source); the script adds filters, search, pagination of long runs, copy buttons and those lazy details."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conformance.core._values import is_int
from conformance.core.rules import DOCUMENTS
from conformance.core.targets import suite_rank
from conformance.host import parse_json
from conformance.report.model import (
    REPORT_BODY_BYTES,
    ExchangeJSON,
    RuleResult,
    RunReport,
    throttle_summary,
    within_budget,
)
from conformance.report.model import format_duration as _format_duration
from conformance.report.placeholders import REDACTION
from conformance.report.placeholders import placeholder as _placeholder

# Worst first: the order of rules on the page and how a group of results is summarised.
STATUSES: tuple[str, ...] = ("failed", "error", "warning", "blocked", "skipped", "passed")
STATUS_ICONS = {"failed": "✗", "error": "⚠", "warning": "▲", "blocked": "⊘", "skipped": "↷", "passed": "✓"}
STATUS_HINTS = {
    "failed": "a MUST rule failed",
    "error": "the harness itself failed: the verdict on this rule is unknown",
    "warning": "a SHOULD rule failed",
    "blocked": "not run: a prerequisite rule failed",
    "skipped": "not run: something the check needs is missing",
    "passed": "the rule holds",
}
LEVELS: tuple[str, ...] = ("MUST", "SHOULD", "INFO")
FAILING = frozenset({"failed", "error", "warning"})

# The stage flow of linking a user (contract A, "States and transitions") and the rules that decide each stage.
# A stage is reached only when the ones before it work, so the first stage that fails is where linking breaks.
#   metadata           Unlinked → the host fetches protected resource metadata, then the AS metadata (PRM, ASM).
#   client identified  CIMD or DCR, and mTLS (the host's identity at the transport); the registered client must
#                      stay valid for the connection (DCR-02).
#   client ready       The user invokes a tool needing auth: the linking UI appears only when tools declare
#                      securitySchemes and the runtime challenge is complete (A Auth 7): TOOL-01..04/06, CHAL-*.
#   authorizing        Authorization code + PKCE with `resource`, returned `iss` equal to the issuer (FLOW, ISS).
#   linked             The tool server checks every token and serves valid results; re-authorization and the
#                      workspace domain restriction need a token too (TOK, TOOL-05, REAUTH, WS).
# Entries ending in "-" are prefixes; others are exact rule IDs and win over prefixes.
AUTH_STAGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("metadata", "Metadata", ("AUTH-PRM-", "AUTH-ASM-")),
    ("client-identified", "Client identified", ("AUTH-CIMD-", "AUTH-DCR-", "AUTH-MTLS-")),
    (
        "client-ready",
        "Client ready",
        ("AUTH-TOOL-01", "AUTH-TOOL-02", "AUTH-TOOL-03", "AUTH-TOOL-04", "AUTH-TOOL-06", "AUTH-CHAL-"),
    ),
    ("authorizing", "Authorizing", ("AUTH-FLOW-", "AUTH-ISS-")),
    ("linked", "Linked", ("AUTH-TOK-", "AUTH-TOOL-05", "AUTH-TOOL-07", "AUTH-REAUTH-", "AUTH-WS-")),
)

_SECTION_NAMES = {"Auth": "Authentication", "PRM table": "Protected resource metadata", "AS table": "AS metadata"}
_RFC = re.compile(r"^RFC\s*(\d{3,5})(?:\s*§\s*([0-9][0-9.]*[0-9]|[0-9]))?")

# Every exchange of the report is in the file: a line each, and its headers, bodies and reproducer either in the
# page (the first and last ones, those of failed cases: BODY_CHARS of each body) or, past the page's budget, in the
# file's embedded exchange data, which the script renders when the line is opened. The bodies of every exchange
# together are bounded by the report's own budget (``model.REPORT_BODY_BYTES``, applied again here to a report
# of another version): the file grows with the count of exchanges by their lines, not by their bodies
# (tests/report/test_html.py).
BODY_CHARS = {True: 4096, False: 1024}  # failing result → generous; passing → an excerpt
EXCHANGES_HEAD_TAIL = {True: (5, 15), False: (2, 4)}  # first and last exchanges opened in the page
EVIDENCE_BUDGET_BYTES = 400_000  # details rendered in the page, most severe results first; the rest as data
URL_CHARS = 200  # in an exchange's summary line; the reproducer has the whole URL
OUTSIDE_BUDGET = "left out of this file, over its size budget (report.json holds it)"

_BINARY_BODY = re.compile(r"^<binary body: (\d+) bytes, (.*)>$", re.S)
_TRUNCATED_BODY = re.compile(r"… \[(\d+) more characters\]$")
# C0/C1 controls (not \t \n), DEL, bidi marks, overrides and isolates, lone surrogates (possible in JSON strings).
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ANCHOR_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SCRIPT_UNSAFE = re.compile(r"<(?=[/!sS])")  # what could end or re-enter a script element's data
_CODE_SPAN = re.compile(r"`([^`]+)`")

_TEMPLATES = Path(__file__).with_name("templates")


def clean(value: Any) -> str:
    """Text safe to show: controls and bidi overrides become visible escapes, lone surrogates U+FFFD."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    # Every unsafe character is unprintable, and tabs and line feeds are safe: most texts are done here, at C speed.
    if text.replace("\n", " ").replace("\t", " ").isprintable():
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _UNSAFE_CHARS.sub(_visible, text) if _UNSAFE_CHARS.search(text) else text


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def pre_text(value: Any) -> Markup:
    """Escape for element content only (< and &; > for symmetry): quotes stay readable and bytes are spared.

    Never use it in an attribute value; autoescape covers those.
    """
    text = clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup(text)


def same_text(a: str, b: str) -> bool:
    return a.rstrip(". ") == b.rstrip(". ")


def anchor(*parts: str) -> str:
    """An id/fragment made of safe characters only (rule IDs stay as they are: #AUTH-PRM-01)."""
    return "--".join(_ANCHOR_UNSAFE.sub("_", p).strip("_") or "_" for p in parts)


def inline_code(value: Any) -> Markup:
    """Escape, then show `backticked` spans of catalog text as code."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(clean(value)))))


@dataclass
class SourceRef:
    document: str | None
    section: str
    href: str | None = None


def parse_source(source: str | None) -> list[SourceRef]:
    """'A Endpoints; RFC 9728 §3' → the contract's section and a link to the RFC section.

    A part without a document letter belongs to the previous part's document ('A Errors; Endpoints').
    """
    refs: list[SourceRef] = []
    document: str | None = None
    for raw in clean(source).split(";"):
        part = raw.strip()
        if not part:
            continue
        rfc = _RFC.match(part)
        if rfc:
            number, section = rfc.groups()
            href = f"https://www.rfc-editor.org/rfc/rfc{number}" + (f"#section-{section}" if section else "")
            refs.append(SourceRef(None, part, href))
            document = None
            continue
        letter, _, rest = part.partition(" ")
        if letter in DOCUMENTS and rest:
            document, part = DOCUMENTS[letter].title, rest
        elif part.startswith(("OAuth", "MCP", "Field")):
            document = None
        for short, long in _SECTION_NAMES.items():
            part = re.sub(rf"^{re.escape(short)}\b", long, part)
        refs.append(SourceRef(document, "field practice (the contract is silent)" if part == "Field" else part))
    return refs


@dataclass(frozen=True)
class Body:
    text: str
    hidden_chars: int = 0  # cut here, beyond the excerpt report.json already holds


@dataclass
class Exchange:
    number: int
    method: str
    url: str
    status: int | None
    elapsed: str
    started_at: str
    error: str
    request_headers: str
    request_body: Body | None
    response_headers: str
    response_body: Body | None
    curl: str
    origin: str = ""  # who made the exchange when not the harness's own HTTP client ("inbound from ...", "via boto3")
    inbound: bool = False
    compact: bool = False  # its details are in the file's exchange data (rendered when opened), not in the page
    open: bool = False
    case: str = ""  # the case of the rule's table it was made for
    omitted: str = ""  # why the report keeps its metadata only, with what stays of its bodies
    omitted_line: str = ""  # the same, short, for its line
    line: Markup = field(default_factory=Markup)  # its summary line (``exchange_line``)
    item: Markup = field(default_factory=Markup)  # a compact one's list item (``_compact_item``)

    @property
    def status_class(self) -> str:
        return _status_class(self.status, self.error)


def _status_class(status: int | None, error: str) -> str:
    if error or status is None:
        return "hx"
    return f"h{status // 100}" if 100 <= status < 600 else "hx"


def exchange_line(fields: Mapping[str, Any]) -> Markup:
    """An exchange's summary line (who sent it when not the harness, method, URL, status, time, case): the
    markup of the page's line of each exchange, made once per exchange record rather than by the template at each
    of its lines. Every value is escaped as the template's autoescape escapes it."""
    status, error = fields["status"], fields["error"]
    parts = []
    if fields["origin"]:
        parts.append(f'<span class="via{" in" if fields["inbound"] else ""}">{escaped(fields["origin"])}</span> ')
    outcome = "error" if error else str(status) if status is not None else "no response"
    parts.append(
        f'<span class="m">{escaped(fields["method"])}</span> <span class="u">{escaped(fields["url"])}</span>'
        f' <span class="code {_status_class(status, error)}">→ {outcome}</span>'
    )
    if fields["elapsed"]:
        parts.append(f' <span class="t">{escaped(fields["elapsed"])}</span>')
    if fields["case"]:
        parts.append(f' <span class="case-tag" title="the case it was made for">{escaped(fields["case"])}</span>')
    return Markup("".join(parts))


def escaped(text: str) -> str:
    """``text`` escaped exactly as the template's autoescape escapes a value (``markupsafe.escape``), as plain text:
    what markup made in Python (thousands of exchange lines) joins, without a Markup object for each value."""
    text = text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    return text.replace("'", "&#39;").replace('"', "&#34;")


CASE_ORDER = ("failed", "not tried", "passed", "not applicable")


@dataclass
class CaseView:
    """One row of a rule's case table: the case, what a conforming target does, what this one did, the citation,
    and links to the case's own exchanges."""

    case: str
    expected: str
    outcome: str
    got: str
    source: str
    exchanges: list[int]

    @property
    def outcome_class(self) -> str:
        return self.outcome.replace(" ", "-")


@dataclass
class ResultView:
    anchor: str
    target: str
    target_url: str
    status: str
    message: str
    need: str
    option: str
    blocked_by: str
    blocked_by_anchor: str | None
    baseline: str
    checks: list[str]
    duration: str
    exchanges: list[Exchange] = field(default_factory=list)
    total_exchanges: int = 0
    dropped: int = 0  # a report of an older version: exchanges its recorder did not keep (evidence_dropped)
    change: str = ""  # with --compare: regression, fix, changed or new (see conformance.report.diff)
    previous: str = ""  # with --compare: the status in the compared run
    cases: list[CaseView] = field(default_factory=list)  # failed first
    target_name: str = ""  # the named target of a fleet run (the replay command names it)
    data: dict[str, dict[str, Any]] = field(default_factory=dict)  # number -> details rendered by the script

    @property
    def cases_failed(self) -> int:
        return sum(c.outcome == "failed" for c in self.cases)


@dataclass
class RuleView:
    anchor: str
    id: str
    level: str
    suite: str
    title: str
    text: str
    sources: list[SourceRef]
    results: list[ResultView]
    status: str = "passed"
    counts: list[tuple[str, int]] = field(default_factory=list)
    stage: str | None = None
    change: str = ""  # with --compare: the most notable change among its results
    example: Any = None  # a failed rule's passing corpus document (conformance.judges.examples.Example)


@dataclass
class StageView:
    key: str
    name: str
    status: str | None  # None: no rule of the stage was run
    counts: list[tuple[str, int]]
    problems: list[tuple[str, str]]  # (rule ID, anchor) of failing rules
    total: int
    breaks: bool = False


def _worst(statuses: list[str]) -> str:
    known = [s for s in statuses if s in STATUSES]
    return min(known, key=STATUSES.index) if known else "error"


def _stage_status(statuses: list[str]) -> str | None:
    """A stage's verdict: its worst problem; else passed when anything passed (skips are listed in the counts)."""
    if not statuses:
        return None
    worst = _worst(statuses)
    return "passed" if worst == "skipped" and "passed" in statuses else worst


def _counts(statuses: list[str]) -> list[tuple[str, int]]:
    tally = Counter(statuses)
    return [(s, tally[s]) for s in STATUSES if tally[s]]


def auth_stage(rule_id: str) -> str | None:
    """The key of the auth stage a rule decides, or None."""
    for key, _, entries in AUTH_STAGES:
        if rule_id in entries:
            return key
    for key, _, entries in AUTH_STAGES:
        if any(e.endswith("-") and rule_id.startswith(e) for e in entries):
            return key
    return None


VERDICT_LABELS = {
    "ACCEPTED": "Accepted",
    "PASSED LOCALLY": "Passed locally",
    "NOT ACCEPTED": "Not accepted",
    "INCOMPLETE": "Incomplete",
}


def _format_time(stamp: Any) -> str:
    if not stamp:
        return "unknown"
    try:
        moment = datetime.fromisoformat(str(stamp))
    except ValueError:
        return clean(stamp)
    if moment.utcoffset() is not None and not moment.utcoffset():
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return moment.isoformat(sep=" ", timespec="seconds")


def _same_day(start: str, end: str) -> str:
    """The end time without its date when the run did not cross midnight."""
    return end[11:] if len(end) > 11 and start[:11] == end[:11] else end


def _optional_texts(*values: Any) -> bool:
    return all(value is None or type(value) is str for value in values)


_TEXT = frozenset({str})


def _text_dict(headers: dict[Any, Any]) -> bool:
    """Text names and values only: what a cache may key on (1, 1.0 and True would be one key, and different
    words in the page). Types read at C speed: a run has tens of thousands of headers."""
    return _TEXT.issuperset(map(type, headers)) and _TEXT.issuperset(map(type, headers.values()))


def _header_lines(headers: Any) -> str:
    if isinstance(headers, dict) and _text_dict(headers):
        return _text_header_lines(tuple(headers.items()))
    return _any_header_lines(headers)


@functools.lru_cache(maxsize=2048)
def _text_header_lines(pairs: tuple[tuple[str, str], ...]) -> str:
    """Headers of text names and values as the page shows them. A run sends the same request headers again and
    again (and a fleet's targets answer alike): each set is laid out once, and each header line once. (The lines
    :func:`_any_header_lines` writes: cleaning is character by character but for a CR LF, and with a CR anywhere
    it cleans each name and value.)"""
    return "\n".join([_text_header_line(name, value) for name, value in pairs])


@functools.lru_cache(maxsize=4096)
def _text_header_line(name: str, value: str) -> str:
    return f"{clean(name)}: {clean(value)}"


def _any_header_lines(headers: Any) -> str:
    if isinstance(headers, dict):
        pairs = list(headers.items())
    elif isinstance(headers, list):
        pairs = [tuple(p) for p in headers if isinstance(p, list | tuple) and len(p) == 2]
    else:
        pairs = []
    if all(type(k) is str and type(v) is str for k, v in pairs):
        text = "\n".join(f"{k}: {v}" for k, v in pairs)
        if "\r" not in text:  # the lines cleaned at once: clean() works character by character but for CR LF
            return clean(text)
    return "\n".join(f"{clean(k)}: {clean(v)}" for k, v in pairs)


def _body(value: Any, cap: int) -> Body | None:
    if value is None or value == "":
        return None
    return _text_body(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), cap)


@functools.lru_cache(maxsize=2048)
def _text_body(text: str, cap: int) -> Body:
    """A body as the page shows it. A run's evidence repeats most of its bodies (the same document fetched again,
    the same error, an exchange that is evidence for several rules): each is laid out once."""
    try:  # compact JSON from the recorder reads better indented; excerpts cut mid-way stay as they are
        parsed = parse_json(text)
        if isinstance(parsed, dict | list):
            text = json.dumps(parsed, indent=2, ensure_ascii=False)
    except ValueError:
        pass
    text = clean(text)
    if len(text) > cap:
        return Body(text[:cap], len(text) - cap)
    return Body(text)


def _shell_word(text: str, header: str | None, names: list[str]) -> str:
    """Single-quoted shell word with each redaction marker replaced by "${NAME}" (a placeholder to set); the names
    of its placeholders added to ``names`` (each once, in order)."""
    word, found = _text_shell_word(text, header)
    names += [name for name in found if name not in names]
    return word


@functools.lru_cache(maxsize=4096)
def _text_shell_word(text: str, header: str | None) -> tuple[str, tuple[str, ...]]:
    """:func:`_shell_word` of a text, and the names of its placeholders. A run's requests repeat their headers
    (the same user agent, content type, bearer token marker): each header line's word is made once."""
    pieces: list[str] = []
    names: list[str] = []
    last = 0
    for match in REDACTION.finditer(text):
        literal = text[last : match.start()]
        if literal:
            pieces.append(shlex.quote(literal))
        name = _placeholder(text[: match.start()], header, match.group())
        if name not in names:
            names.append(name)
        pieces.append(f'"${{{name}}}"')
        last = match.end()
    if last < len(text) or not pieces:
        pieces.append(shlex.quote(text[last:]))
    return "".join(pieces), tuple(names)


# curl computes these itself; replaying them would only get in the way.
_CURL_SKIP_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})


def curl_command(exchange: dict[str, Any]) -> str:
    """A copy-pasteable curl reproducer of a recorded (redacted) request; secrets become ${PLACEHOLDERS}."""
    method, url, body = exchange.get("method"), exchange.get("url"), exchange.get("request_body")
    headers = exchange.get("request_headers")
    if not isinstance(headers, dict):
        headers = {}
    if _optional_texts(method, url, body) and _text_dict(headers):
        return _text_curl_command(method, url, tuple(headers.items()), body)
    return _curl_command(method, url, tuple(headers.items()), body)


@functools.lru_cache(maxsize=2048)
def _text_curl_command(
    method: str | None, url: str | None, headers: tuple[tuple[str, str], ...], body: str | None
) -> str:
    """The reproducer of a request made of text only. A run repeats most of its requests (the same metadata
    fetched again, one request that is evidence for several rules, a fleet's targets asked alike): each is
    written once."""
    return _curl_command(method, url, headers, body)


def _curl_command(method: Any, url: Any, pairs: tuple[tuple[Any, Any], ...], body: Any) -> str:
    method = clean(method or "GET").upper()
    if body is not None and not isinstance(body, str):
        body = json.dumps(body, ensure_ascii=False)
    names: list[str] = []
    notes: list[str] = []
    args = ["curl -sS -i"]
    if method == "HEAD":
        args[0] += " -I"
    elif not (method == "GET" and not body) and not (method == "POST" and body):
        args[0] += f" -X {shlex.quote(method)}"
    args[0] += " " + _shell_word(clean(url or ""), None, names)
    for name, value in pairs:
        text = type(name) is str and type(value) is str  # a cache's key (1, 1.0 and True are one)
        argument, found = _text_header_argument(name, value) if text else _header_argument(name, value)
        if argument:
            args.append(argument)
            names += [n for n in found if n not in names]
    if body:
        binary = _BINARY_BODY.match(body)
        if binary:
            notes.append(f"# body: binary ({binary.group(1)} bytes, {clean(binary.group(2))}), not in the report;")
            notes.append("# save it as body.bin")
            args.append("--data-binary @body.bin")
        else:
            truncated = _TRUNCATED_BODY.search(body)
            if truncated:
                notes.append(f"# body truncated in the report ({truncated.group(1)} characters missing)")
                body = body[: truncated.start()]
            args.append("--data-raw " + _shell_word(clean(body), None, names))
    if names:
        notes.insert(0, "# set " + ", ".join(names) + " first: redacted in this report")
    return "\n".join([*notes, " \\\n  ".join(args)])


def _header_argument(name: Any, value: Any) -> tuple[str, tuple[str, ...]]:
    """A header's argument of a reproducer ("" for one curl sets itself), and the names of its placeholders."""
    if str(name).lower() in _CURL_SKIP_HEADERS:
        return "", ()
    word, names = _text_shell_word(f"{clean(name)}: {clean(value)}", str(name))
    return "-H " + word, names


@functools.lru_cache(maxsize=2048)
def _text_header_argument(name: str, value: str) -> tuple[str, tuple[str, ...]]:
    """:func:`_header_argument` of a text header: most of a run's requests send the same ones."""
    return _header_argument(name, value)


class _Budget:
    def __init__(self, size: int) -> None:
        self.left = size

    def take(self, size: int) -> bool:
        if size > self.left:
            self.left = 0  # once exhausted stay exhausted: later (less severe) results are all compact
            return False
        self.left -= size
        return True


def _page_bytes(*texts: str) -> int:
    """What texts weigh in the file: UTF-8, after escaping (texts already through clean(), as ``pre_text`` has
    them: & becomes 5 characters, < and > 4)."""
    return sum(map(_text_bytes, texts))


@functools.lru_cache(maxsize=4096)  # the same header lines, reproducers and bodies come back all run long
def _text_bytes(text: str) -> int:
    return len(text.encode("utf-8", "replace")) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def _origin(raw: dict[str, Any]) -> str:
    """A label for exchanges the harness's own client did not send: the target calling the harness, or a probe
    made with another client (boto3, a raw socket)."""
    if raw.get("direction") == "inbound":
        peer = clean(raw.get("peer"))
        document = clean(raw.get("document"))
        return "inbound" + (f" from {peer}" if peer else "") + (f" · {document}" if document else "")
    client = clean(raw.get("client"))
    return f"via {client}" if client else ""


def _omitted(raw: dict[str, Any]) -> tuple[str, str]:
    """What the report says of an exchange it keeps the metadata of only: (the line's note, what stays of its
    bodies and headers)."""
    omitted = raw.get("omitted")
    if not isinstance(omitted, dict):
        return "", ""
    parts = []
    for side in ("request", "response"):
        body = omitted.get(f"{side}_body")
        if isinstance(body, dict):
            parts.append(f"{side} body {clean(body.get('chars'))} characters, sha256 {clean(body.get('sha256'))[:16]}…")
        headers = omitted.get(f"{side}_headers")
        if is_int(headers) and headers:
            parts.append(f"{headers} {side} header{'s' if headers != 1 else ''}")
    note = f"body omitted: {clean(omitted.get('reason')) or 'omitted'}"
    return "details omitted", f"{note} ({'; '.join(parts)})" if parts else note


def _exchange(
    raw: dict[str, Any], number: int, failing: bool, budget: _Budget, inline: bool, laid_out: _LaidOut
) -> tuple[Exchange, _Record]:
    """The exchange's line and its details: in the page when ``inline`` and the page's budget allows, else kept
    for the file's exchange data (``compact``); and its record as laid out. ``laid_out``: the exchanges laid out
    so far in this page, by the identity of their record and ``failing`` (an exchange that is evidence for several
    rules is one record)."""
    key = (id(raw), failing)
    known = laid_out.get(key)
    if known is None:
        known = laid_out[key] = _Record(*_lay_out(raw, failing), raw)
    view = Exchange(number=number, **known.fields)
    view.compact = not (inline and budget.take(known.size))
    return view, known


@dataclass
class _Record:
    """An exchange record laid out for the page, once however many results it is evidence for."""

    fields: dict[str, Any]
    size: int  # what its details weigh in the page
    raw: dict[str, Any]  # the record kept alive: its id stays its own
    data: dict[str, Any] | None = None  # its details as the file's data (``_data``), once it is compact somewhere


_LaidOut = dict[tuple[int, bool], _Record]


def _lay_out(raw: dict[str, Any], failing: bool) -> tuple[dict[str, Any], int]:
    """An exchange's fields as the page shows them (all but its number and where its details go), and what its
    details weigh in the page."""
    status = raw.get("status")
    url = clean(raw.get("url"))
    cap = BODY_CHARS[failing]
    request_body = _body(raw.get("request_body"), cap)
    response_body = _body(raw.get("response_body"), cap)
    omitted_line, omitted = _omitted(raw)
    fields: dict[str, Any] = {
        "method": clean(raw.get("method") or "?"),
        "url": url if len(url) <= URL_CHARS else url[:URL_CHARS] + "…",
        "status": status if is_int(status) else None,
        "elapsed": _format_duration(raw.get("elapsed_s")),
        "started_at": clean(raw.get("started_at")),
        "error": clean(raw.get("error")),
        "request_headers": _header_lines(raw.get("request_headers")),
        "request_body": request_body,
        "response_headers": _header_lines(raw.get("response_headers")),
        "response_body": response_body,
        "curl": "" if "omitted" in raw else curl_command(raw),  # no body to send: its line says what it was
        "origin": _origin(raw),
        "inbound": raw.get("direction") == "inbound",
        "case": clean(raw.get("case")),
        "omitted_line": omitted_line,
        "omitted": omitted,
    }
    fields["line"] = exchange_line(fields)
    bodies = [b.text for b in (request_body, response_body) if b]
    texts = (fields["request_headers"], fields["response_headers"], fields["curl"], omitted, *bodies)
    return fields, _page_bytes(*texts) + 400  # + markup


def _data(view: Exchange) -> dict[str, Any]:
    """An exchange's details as the script renders them (plain text only: it sets them as text, never as markup);
    one whose details the report omitted has no reproducer (its line and key headers say all there is)."""
    data: dict[str, Any] = {} if view.omitted else {"curl": view.curl}
    for key in ("error", "request_headers", "response_headers", "started_at", "omitted"):
        if getattr(view, key):
            data[key] = getattr(view, key)
    for key in ("request_body", "response_body"):
        body = getattr(view, key)
        if body is not None:
            data[key] = [body.text, body.hidden_chars]
    if view.status is not None:
        data["status"] = view.status
    if view.inbound:
        data["inbound"] = True
    return data


def exchange_data(views: Sequence[ResultView]) -> str:
    """The file's exchange data: the details of every exchange not rendered in the page, by result anchor and
    number, as JSON safe inside a ``<script type="application/json">``: no ``</``, ``<!--`` nor ``<script`` in it
    (each such ``<`` is written ``\\u003c``; other characters as they are, so that a body stays its size)."""
    data = {view.anchor: view.data for view in views if view.data}
    # No check for cycles (there can be none in data made of a JSON report): it costs a tenth of the encoding.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), check_circular=False)
    return _SCRIPT_UNSAFE.sub(r"\\u003c", text)


def _result(raw: RuleResult, targets: Mapping[str, str], rule_anchor: str) -> ResultView:
    target = clean(raw.where)  # in a fleet, "name/kind"
    return ResultView(
        anchor=anchor(rule_anchor, target) if target else rule_anchor,
        target=target,
        target_url=clean(targets.get(raw.where, raw.target_url)),
        status=raw.status.value,
        message=clean(raw.message),
        need=clean(raw.need),
        option=clean(raw.option),
        blocked_by=clean(raw.blocked_by),
        blocked_by_anchor=None,
        baseline=clean(raw.baseline),
        checks=[clean(c) for c in raw.checks],
        duration=_format_duration(raw.duration_s),
        total_exchanges=len(raw.evidence),
        dropped=raw.evidence_dropped,
        cases=_cases(raw.cases),
        target_name=clean(raw.target_name),
    )


def _cases(raw: Sequence[Mapping[str, Any]]) -> list[CaseView]:
    views = [
        CaseView(
            case=clean(c.get("case")),
            expected=clean(c.get("expected")),
            outcome=clean(c.get("outcome")),
            got=clean(c.get("got")),
            source=clean(c.get("source")),
            exchanges=[n for n in c.get("exchanges") or () if isinstance(n, int)],
        )
        for c in raw
    ]
    order = {outcome: i for i, outcome in enumerate(CASE_ORDER)}
    return sorted(views, key=lambda c: order.get(c.outcome, len(order)))  # stable: the table's order within


def _attach_evidence(view: ResultView, evidence: Sequence[ExchangeJSON], budget: _Budget, laid_out: _LaidOut) -> None:
    """Every exchange the report holds is in the file, a line each: the first and last ones (they set the scene
    and usually decide) and those of failed cases with their details in the page while its budget lasts, the
    others' details in the file's exchange data (rendered when opened)."""
    failing = view.status in FAILING
    head, tail = EXCHANGES_HEAD_TAIL[failing]
    count = len(evidence)
    of_failed_cases = {n for c in view.cases if c.outcome == "failed" for n in c.exchanges}
    result_anchor = escaped(view.anchor)
    for number, raw in enumerate(evidence, 1):
        inline = number <= head or number > count - tail or number in of_failed_cases
        exchange, record = _exchange(raw, number, failing, budget, inline, laid_out)
        view.exchanges.append(exchange)
        if exchange.compact:
            if record.data is None:
                record.data = _data(exchange)  # the same for every view of the record
            view.data[str(number)] = record.data
            exchange.item = _compact_item(result_anchor, exchange)
    if failing and view.exchanges and not view.exchanges[-1].compact:
        view.exchanges[-1].open = True  # the last exchange is usually the one that decided the failure


def _compact_item(result_anchor: str, exchange: Exchange) -> Markup:
    """The list item of an exchange whose details are in the file's data (most of a long run's), made here rather
    than by the template at each of thousands; every value escaped as the template's autoescape escapes it."""
    number = exchange.number
    omitted = f' <span class="omit">{escaped(exchange.omitted_line)}</span>' if exchange.omitted_line else ""
    return Markup(
        f'<li value="{number}" class="cx" id="{result_anchor}-x{number}" tabindex="0">{exchange.line}{omitted}</li>'
    )


CHANGE_ORDER = ("regression", "fix", "changed", "new")


def _compare(
    report: RunReport, compare: RunReport | None, pairs: list[tuple[ResultView, RuleResult]]
) -> dict[str, Any] | None:
    """Marks every result that changed since the ``compare`` run and lists the changes (and the removed results)."""
    if compare is None:
        return None
    from conformance.report.diff import compare_map, index

    marks = compare_map(compare, report)
    changes: list[tuple[str, str, str, str | None, str, str]] = []  # kind, rule, target, anchor, old, new
    for view, raw in pairs:
        mark = marks.get((raw.where, raw.rule))
        if mark is not None:
            view.change, view.previous = mark[0], clean(mark[1] or "")
            changes.append((view.change, clean(raw.rule), view.target, view.anchor, view.previous, view.status))
    current = index(report)
    removed = [(clean(k[1]), clean(k[0]), clean(r.status)) for k, r in index(compare).items() if k not in current]
    changes.sort(key=lambda c: CHANGE_ORDER.index(c[0]))
    counts = Counter(c[0] for c in changes)
    return {
        "started": _format_time(compare.started_at),
        "verdict": clean(compare.verdict.status),
        "changes": changes,
        "removed": removed,
        "counts": [(k, counts[k]) for k in CHANGE_ORDER] + [("removed", len(removed))],
    }


def _group(
    results: Sequence[RuleResult], targets: Mapping[str, str]
) -> tuple[dict[str, RuleView], list[tuple[ResultView, RuleResult]]]:
    """One view per rule (in the report's order), holding one view per target; every anchor unique."""
    groups: dict[str, RuleView] = {}
    rule_anchors: set[str] = set()
    pairs: list[tuple[ResultView, RuleResult]] = []
    for raw in results:
        rule_id = clean(raw.rule)
        rule = groups.get(rule_id)
        if rule is None:
            rule_anchor, n = anchor(rule_id), 2
            while rule_anchor in rule_anchors:  # only hostile IDs ever collide
                rule_anchor, n = f"{anchor(rule_id)}-{n}", n + 1
            rule_anchors.add(rule_anchor)
            rule = groups[rule_id] = RuleView(
                anchor=rule_anchor,
                id=rule_id,
                level=clean(raw.level),
                suite=clean(raw.suite),
                title=clean(raw.title) or rule_id,
                text=clean(raw.text),
                sources=parse_source(raw.source),
                results=[],
                stage=auth_stage(rule_id),
            )
        view = _result(raw, targets, rule.anchor)
        rule.results.append(view)
        pairs.append((view, raw))
    # Unique anchors even when sanitizing made two targets look alike.
    seen = {r.anchor for r in groups.values()}
    for view, _ in pairs:
        base, n = view.anchor, 2
        while view.anchor in seen:
            view.anchor, n = f"{base}-{n}", n + 1
        seen.add(view.anchor)
    return groups, pairs


def _stages(groups: dict[str, RuleView], rules: list[RuleView]) -> tuple[list[StageView], StageView | None]:
    """The auth stage flow, and the first stage that breaks."""
    stages: list[StageView] = []
    for key, name, _ in AUTH_STAGES:
        stage_results = [v.status for rule in groups.values() if rule.stage == key for v in rule.results]
        problems = [(r.id, r.anchor) for r in rules if r.stage == key and r.status in {"failed", "error"}]
        stages.append(
            StageView(
                key=key,
                name=name,
                status=_stage_status(stage_results),
                counts=_counts(stage_results),
                problems=problems,
                total=len(stage_results),
            )
        )
    broken = next((s for s in stages if s.status in {"failed", "error"}), None)
    if broken:
        broken.breaks = True
    return stages, broken


def _order(groups: dict[str, RuleView], config_suites: Sequence[Any]) -> tuple[list[str], list[RuleView]]:
    """The suites in the contract's order, and the rules worst first, then by suite (the report's order within)."""
    suites: list[str] = []
    for suite in [*config_suites, *(r.suite for r in groups.values())]:
        if isinstance(suite, str) and clean(suite) not in suites:
            suites.append(clean(suite))
    suites.sort(key=suite_rank)  # stable for suites the table does not know
    anchors = {r.id: r.anchor for r in groups.values()}
    for rule in groups.values():
        statuses = [r.status for r in rule.results]
        rule.status = _worst(statuses)
        rule.counts = _counts(statuses)
        rule.change = next((k for k in CHANGE_ORDER if any(v.change == k for v in rule.results)), "")
        if rule.status in FAILING:
            from conformance.judges.examples import passing_example

            rule.example = passing_example(rule.id)
        for view in rule.results:
            view.blocked_by_anchor = anchors.get(view.blocked_by)
    return suites, sorted(groups.values(), key=lambda r: (STATUSES.index(r.status), suites.index(r.suite)))


def build_view(report: RunReport, compare: RunReport | None = None) -> dict[str, Any]:
    """The template's context: rules grouped and ordered worst first, matrix, stage flow, header facts; with
    ``compare`` (an earlier report) the changes since that run, marked on each rule. Every value is cleaned
    (controls, bidi overrides); the template escapes. The report's shape is trusted: ``RunReport.from_json``
    checked it against the schema."""
    # A run's report is within this budget already (its margin covers the redaction markers the report was scrubbed
    # with after its budget was spent); a report of another version, or edited, is brought within it.
    results = within_budget(report.results, REPORT_BODY_BYTES + REPORT_BODY_BYTES // 4, OUTSIDE_BUDGET)
    groups, pairs = _group(results, report.targets)
    budget = _Budget(EVIDENCE_BUDGET_BYTES)  # spent on the most severe results first
    laid_out: _LaidOut = {}
    for view, raw in sorted(pairs, key=lambda p: STATUSES.index(p[0].status)):
        _attach_evidence(view, raw.evidence, budget, laid_out)
    comparison = _compare(report, compare, pairs)
    config = report.config
    suites, rules = _order(groups, config.get("suites") or [])
    totals = Counter(v.status for v, _ in pairs)
    matrix = []
    for suite in suites:
        row = Counter(v.status for rule in groups.values() if rule.suite == suite for v in rule.results)
        if sum(row.values()) or suite in (config.get("suites") or []):
            matrix.append((suite, [row[s] for s in STATUSES], sum(row.values())))
    stages, broken = _stages(groups, rules)
    baseline_counts = Counter(v.baseline for v, _ in pairs if v.baseline)
    return {
        **_header(report),
        "baseline_expected": baseline_counts.get("expected", 0),
        "baseline_stale": baseline_counts.get("stale", 0),
        "suites": suites,
        "multi_target": len({v.target for v, _ in pairs}) > 1,
        "totals": [(s, totals[s]) for s in STATUSES],
        "total": len(pairs),
        "warnings": totals["warning"],
        "matrix": matrix,
        "matrix_totals": [totals[s] for s in STATUSES],
        "stages": stages if any(s.total for s in stages) else [],
        "broken": broken,
        "rules": rules,
        "levels": [lv for lv in LEVELS if any(r.level == lv for r in rules)]
        + sorted({r.level for r in rules} - set(LEVELS)),
        "suite_counts": Counter(r.suite for r in rules for _ in r.results),
        "compare": comparison,
        "exchange_data": Markup(exchange_data([v for v, _ in pairs])),
    }


def _header(report: RunReport) -> dict[str, Any]:
    """The page's header facts: verdict, harness, times, configuration, targets."""
    verdict, config = report.verdict, report.config
    label = VERDICT_LABELS.get(verdict.status) or ("Accepted" if verdict.accepted else "Not accepted")
    other_config = [
        (clean(k), clean(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v))
        for k, v in config.items()
        if k not in {"strict", "expected_failures", "suites"}
    ]
    started = _format_time(report.started_at)
    return {
        "accepted": verdict.accepted,
        "verdict_label": label,
        # PASSED LOCALLY exits 0 but is not a certification: shown apart from both ok and ko.
        "verdict_class": "ok" if verdict.accepted else "local" if label == "Passed locally" else "ko",
        "reason": clean(verdict.reason),
        "exit_code": verdict.exit_code,
        "harness_name": clean(report.harness_name or "conformance"),
        "harness_version": clean(report.harness_version or "unknown"),
        "started": started,
        "finished": _same_day(started, _format_time(report.finished_at)),
        "duration": _format_duration(report.duration_s) or "unknown",
        "throttle": throttle_summary(report.throttle),
        "strict": bool(config.get("strict")),
        "baseline_file": clean(config.get("expected_failures")),
        "other_config": other_config,
        "targets": [(clean(name), clean(url)) for name, url in report.targets.items()],
        # a fleet: one row per named target (name, verdict label, its class, reason)
        "fleet": [
            (
                clean(row.name),
                VERDICT_LABELS.get(row.verdict.status, clean(row.verdict.status)),
                "ok" if row.verdict.accepted else "local" if row.verdict.status == "PASSED LOCALLY" else "ko",
                clean(row.verdict.reason),
            )
            for row in report.fleet
        ],
    }


class _DedentLoader(jinja2.FileSystemLoader):
    """Drops template indentation: over thousands of results it would be megabytes of spaces.

    Safe because multi-line <pre> content only ever comes from values, never from template text.
    """

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        return "\n".join(line.lstrip() for line in source.splitlines()), filename, uptodate


@functools.cache  # compiling the template costs more than rendering a full run
def _environment() -> jinja2.Environment:
    options: dict[str, Any] = {
        "autoescape": True,  # every value is escaped; the templates are HTML whatever their file name
        "undefined": jinja2.StrictUndefined,
        "trim_blocks": True,
        "lstrip_blocks": True,
    }
    env = jinja2.Environment(loader=_DedentLoader(_TEMPLATES), bytecode_cache=_bytecode_cache(repr(options)), **options)
    env.filters["code"] = inline_code
    env.filters["pre"] = pre_text
    env.filters["shell"] = lambda value: shlex.quote(clean(value))
    env.tests["same_text"] = same_text
    env.globals.update(STATUSES=STATUSES, ICONS=STATUS_ICONS, HINTS=STATUS_HINTS)
    return env


class _QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """A cache that never fails a report: an unreadable entry is compiled again, an unwritable one not kept."""

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache(options: str) -> jinja2.BytecodeCache | None:
    """The templates compiled once per user, not in every run (compiling them costs more than rendering a run).

    In the per-user cache directory, one subdirectory per jinja2 version and environment options (the compiled code
    depends on both; jinja2 checks the Python version and each template's source itself)."""
    from conformance.core._cache import cache_dir

    key = hashlib.sha256(f"{jinja2.__version__} {options}".encode()).hexdigest()[:16]
    directory = cache_dir() / "jinja2" / key
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _QuietBytecodeCache(str(directory))


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_html(report: RunReport, compare: RunReport | None = None) -> str:
    """The report as one self-contained HTML document (with ``compare``: changes since that run marked)."""
    css, script, csp = _assets()
    template = _environment().get_template("report.html.j2")
    try:
        view = build_view(report, compare)
    finally:
        _forget_laid_out()
    return template.render(view=view, css=Markup(css), script=Markup(script), csp=csp)


def _forget_laid_out() -> None:
    """Empty the caches of what a page laid out once per distinct content: nothing of a report outlives its page."""
    laid_out = (_text_header_lines, _text_header_line, _text_curl_command, _text_header_argument, _text_shell_word)
    for cached in (*laid_out, _text_bytes):
        cached.cache_clear()


@functools.cache
def _assets() -> tuple[str, str, str]:
    """The inline CSS and JS, and the policy that lets exactly them (and nothing from the network) in."""
    css = (_TEMPLATES / "report.css").read_text(encoding="utf-8")
    script = (_TEMPLATES / "report.js").read_text(encoding="utf-8")
    csp = (
        f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(script)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    return css, script, csp


def write_html(report: RunReport, path: Path, compare: RunReport | None = None) -> None:
    """Write the report to `path` (UTF-8), creating its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report, compare), encoding="utf-8")
