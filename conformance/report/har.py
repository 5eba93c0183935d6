"""report.har: every recorded exchange of a run as an HTTP Archive 1.2, for a browser's network panel or a HAR viewer.

Written from the already-scrubbed :class:`RunReport` (the same evidence as report.json: headers redacted, bodies as
redacted excerpts), one entry per distinct exchange, with the rules whose evidence it is in ``comment`` and the
custom field ``_rules``. HAR has no place for what the harness knows but HTTP does not say (which target, inbound or
outbound, a transport error), so those ride in custom ``_`` fields, which the format allows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl

if TYPE_CHECKING:
    from conformance.report.model import ExchangeJSON, RunReport

HTTP_VERSION = "HTTP/1.1"  # the recorder does not keep the negotiated version; httpx speaks HTTP/1.1 by default
UNKNOWN_START = "1970-01-01T00:00:00.000Z"  # HAR requires a start time; an exchange recorded without one sorts first


def har_log(report: RunReport) -> dict[str, Any]:
    """The HAR document (``{"log": ...}``) of ``report``'s evidence. Its entries share the objects of the headers,
    cookies and query parameters they have alike (read once each): a document to write, not to edit."""
    try:
        return _har_log(report)
    finally:  # nothing of a report outlives its document
        _text_headers.cache_clear()
        _query_string.cache_clear()


def _har_log(report: RunReport) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    # An exchange that is evidence for several rules (one check deciding many) is one entry: found among those of
    # the same start and URL, compared whole.
    seen: dict[tuple[str, str], list[tuple[Mapping[str, Any], dict[str, Any]]]] = {}
    for result in report.results:
        for exchange in result.evidence:
            same = seen.setdefault((str(exchange.get("started_at")), str(exchange.get("url"))), [])
            entry = next((entry for other, entry in same if other == exchange), None)
            if entry is None:
                entry = _entry(exchange, report.started_at, result.where)
                same.append((exchange, entry))
                entries.append(entry)
            if result.rule not in entry["_rules"]:
                entry["_rules"].append(result.rule)
    ordered = sorted(entries, key=lambda e: e["startedDateTime"])  # stable: recording order within a stamp
    for entry in ordered:
        entry["comment"] = "evidence for " + ", ".join(entry["_rules"])
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": report.harness_name, "version": report.harness_version},
            "pages": [],
            "entries": ordered,
            "comment": "conformance evidence: headers redacted, bodies are redacted excerpts",
        }
    }


def write_har(
    report: RunReport, path: Path, scrub_tree: Callable[[Any], Any] | None = None, *, report_scrubbed: bool = False
) -> None:
    """Write report.har. ``scrub_tree``: the run's last redaction pass, applied to the document too, because a HAR
    also shows values decoded from the URL and headers (query parameters, cookies). With ``report_scrubbed`` (the
    caller vouches that ``report`` is the output of this very pass, with no secret learnt since) only those decoded
    values and the text joined here are scrubbed: every other string is a copy of one the pass already scrubbed."""
    document = har_log(report)
    if scrub_tree is not None and report_scrubbed:
        _scrub_new_values(document, scrub_tree)
    elif scrub_tree is not None:
        document = scrub_tree(document)
    write_document(document, path)


# Compact: with ``indent`` json falls back to its pure-Python encoder, several times slower on a run's evidence. No
# check for cycles (a document made of a JSON report has none): it costs a tenth of the encoding.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def write_document(document: Mapping[str, Any], path: Path) -> None:
    """Write a HAR document to ``path``: ``json.dumps(document, ensure_ascii=False, separators=(",", ":"))`` and a
    line feed, in UTF-8, an entry at a time (a run's HAR is megabytes: as one text, it is accumulated, joined,
    widened to two bytes a character by a single one in a body, and encoded whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("wb") as out:
        for piece in _pieces(document):
            # A lone surrogate a hostile target smuggled into a body must not keep the file from being written.
            out.write(piece.encode("utf-8", "replace"))
        out.write(b"\n")
    tmp.replace(path)  # a viewer never opens half a file


def _pieces(document: Mapping[str, Any]) -> Iterator[str]:
    """``document``'s text in pieces, each entry of its log one."""
    log = document.get("log")
    if len(document) != 1 or type(log) is not dict or type(log.get("entries")) is not list:
        yield _ENCODE(document)
        return
    yield '{"log":{'
    for index, (key, value) in enumerate(log.items()):
        yield f"{',' if index else ''}{_ENCODE(key)}:"
        if key != "entries":
            yield _ENCODE(value)
            continue
        yield "["
        for number, entry in enumerate(value):
            if number:
                yield ","
            yield _ENCODE(entry)
        yield "]"
    yield "}}"


def _scrub_new_values(document: dict[str, Any], scrub_tree: Callable[[Any], Any]) -> None:
    """Scrub, in place, what the HAR holds that the report does not: values decoded from URLs and headers
    (``queryString``, ``cookies``) and each entry's ``comment`` (rule IDs joined). One pass over all of them, each
    list of decoded values once however many entries share it (an empty one has nothing to scrub)."""
    entries = document["log"]["entries"]
    decoded: dict[int, list[Any]] = {}  # by identity (the document holds each meanwhile)
    for entry in entries:
        request, response = entry["request"], entry["response"]
        for values in (request["queryString"], request["cookies"], response["cookies"]):
            if values:
                decoded[id(values)] = values
    lists, comments = scrub_tree([list(decoded.values()), [entry["comment"] for entry in entries]])
    clean = dict(zip(decoded, lists, strict=True))
    for entry, comment in zip(entries, comments, strict=True):
        request, response = entry["request"], entry["response"]
        entry["comment"] = comment
        if request["queryString"]:
            request["queryString"] = clean[id(request["queryString"])]
        if request["cookies"]:
            request["cookies"] = clean[id(request["cookies"])]
        if response["cookies"]:
            response["cookies"] = clean[id(response["cookies"])]


def _entry(exchange: ExchangeJSON, fallback_start: str, target: str) -> dict[str, Any]:
    elapsed_ms = max(0.0, float(exchange.get("elapsed_s") or 0.0) * 1000.0)
    started = exchange.get("started_at") or fallback_start or UNKNOWN_START
    entry: dict[str, Any] = {
        "startedDateTime": started,
        "time": round(elapsed_ms, 3),
        "request": _request(exchange),
        "response": _response(exchange),
        "cache": {},
        # Only the whole duration is recorded: it is all "wait" (send and receive are required, -1 is not allowed).
        "timings": {"send": 0, "wait": round(elapsed_ms, 3), "receive": 0},
        "_rules": [],
        "_target": target,
    }
    for name in ("direction", "peer", "client", "document", "error"):
        if exchange.get(name):
            entry["_" + name] = exchange[name]
    return entry


def _request(exchange: ExchangeJSON) -> dict[str, Any]:
    url = str(exchange.get("url") or "")
    headers = _headers(exchange.get("request_headers"))
    body = exchange.get("request_body")
    request: dict[str, Any] = {
        "method": str(exchange.get("method") or "GET"),
        "url": url,
        "httpVersion": HTTP_VERSION,
        "headers": headers.entries,
        "queryString": _query_string(_query(url)),
        "cookies": headers.cookies,
        "headersSize": -1,
        "bodySize": _size(body),
    }
    if isinstance(body, str):
        request["postData"] = {"mimeType": headers.first.get("content-type") or "", "text": body}
    return request


def _response(exchange: ExchangeJSON) -> dict[str, Any]:
    headers = _headers(exchange.get("response_headers"))
    body = exchange.get("response_body")
    status = exchange.get("status")
    content: dict[str, Any] = {
        "size": _size(body),
        "mimeType": headers.first.get("content-type") or "",
    }
    if isinstance(body, str):
        content["text"] = body
    response: dict[str, Any] = {
        # No status: the exchange ended in a transport error (HAR viewers show status 0 as a failed request).
        "status": status if isinstance(status, int) else 0,
        "statusText": _reason(status),
        "httpVersion": HTTP_VERSION if isinstance(status, int) else "",
        "headers": headers.entries,
        "cookies": headers.set_cookies,
        "content": content,
        "redirectURL": headers.first.get("location") or "",
        "headersSize": -1,
        "bodySize": -1,  # the recorded body is an excerpt: its size on the wire is not known
    }
    if exchange.get("error"):
        response["_error"] = exchange["error"]
    return response


def _query(url: str) -> str:
    # Not urlsplit: a redacted userinfo (user:[REDACTED]@host) reads to it as a malformed IPv6 host and raises.
    return url.partition("#")[0].partition("?")[2]


@functools.lru_cache(maxsize=2048)
def _query_string(query: str) -> list[dict[str, str]]:
    """A query string's parameters, decoded. A run asks the same URLs again and again: each query is read once,
    its parameters shared by the entries (as their headers are)."""
    return [{"name": n, "value": v} for n, v in parse_qsl(query, keep_blank_values=True)]


def _size(body: Any) -> int:
    return len(body.encode("utf-8", "replace")) if isinstance(body, str) else 0


class _Headers(NamedTuple):
    """One side's headers as a HAR entry has them, with what the entry reads of them. The entries of a document
    share these objects (a run sends and receives the same headers again and again): it is written, never edited."""

    entries: list[dict[str, str]]  # {"name": ..., "value": ...} in the recorded order
    first: dict[str, str]  # the first value of each name, by its lower-case name
    cookies: list[dict[str, str]]  # of the Cookie headers
    set_cookies: list[dict[str, str]]  # of the Set-Cookie headers: the recorder joins repeated headers; one
    # that does not parse is left out (it is still in the headers)


def _headers(headers: Any) -> _Headers:
    if not isinstance(headers, Mapping):
        return _NO_HEADERS
    pairs = tuple(headers.items())
    # Cached for text names and values only: 1, 1.0 and True would be one key, and not one HAR text.
    if all(type(name) is str and type(value) is str for name, value in pairs):
        return _text_headers(pairs)
    return _read_headers(tuple((str(name), str(value)) for name, value in pairs))


@functools.lru_cache(maxsize=2048)
def _text_headers(pairs: tuple[tuple[str, str], ...]) -> _Headers:
    return _read_headers(pairs)


def _read_headers(pairs: tuple[tuple[str, str], ...]) -> _Headers:
    first: dict[str, str] = {}
    cookies: list[dict[str, str]] = []
    set_cookies: list[dict[str, str]] = []
    for name, value in pairs:
        lowered = name.lower()
        first.setdefault(lowered, value)
        if lowered == "cookie":
            cookies += _cookies(value)
        elif lowered == "set-cookie":
            set_cookies += _cookies(value)
    entries = [{"name": name, "value": value} for name, value in pairs]
    return _Headers(entries, first, cookies, set_cookies)


_NO_HEADERS = _Headers([], {}, [], [])


def _reason(status: Any) -> str:
    # Cached for int codes only: 200 and 200.0 would be one key (both are OK to HTTPStatus, True is not).
    return _int_reason(status) if type(status) is int else _any_reason(status)


@functools.lru_cache(maxsize=1024)
def _int_reason(status: int) -> str:
    return _any_reason(status)


def _any_reason(status: Any) -> str:
    try:
        return HTTPStatus(status).phrase
    except (ValueError, TypeError):
        return ""


def _cookies(value: str) -> list[dict[str, str]]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(value)
    except CookieError:
        return []
    return [{"name": name, "value": morsel.value} for name, morsel in jar.items()]
