"""Redaction at capture time: secrets never reach an exchange record, so no writer can leak them.

Two layers. By name: headers, query parameters (also inside free text, e.g. a ``Location`` header or an HTML
redirect page), form fields and JSON keys that carry credentials. By value: every secret the harness knows
(configured API keys, credentials in target URLs, tokens and codes it obtained, assertions it signed) is scrubbed
wherever it appears, in every encoding it takes on the wire: raw, percent-encoded, JSON- and HTML-escaped (and
each of these inside a URL, JSON or HTML again, as an echoing target nests them), Base64 and Base64url (alone,
inside a ``user:secret`` Basic pair, or at any offset of a longer encoded string).

Secrets learnt late (an authorization code becomes known only after the redirect that carried it was recorded)
are caught by a last pass: :meth:`Redactor.scrub_tree` over the whole report, with every secret the run learnt.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import logging
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

import ahocorasick_rs

from conformance.host import _json as target_json

REDACTED = "[REDACTED]"
# A credential header whose value the harness crafted for a case (a key with a character changed, a forged or
# expired token): redacted all the same, but marked, so that a replay knows the request did not carry the run's own
# credential and cannot be refilled from it.
CRAFTED = "[REDACTED:crafted]"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "dpop",
    }
)

# Parameter and field names whose value is a secret wherever they appear (query, form, JSON).
SECRET_NAMES = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "id_token_hint",
        "client_secret",
        "client_assertion",
        "code_verifier",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "secret",
        "token",
        "assertion",
        "private_key",
        "registration_access_token",
    }
)
# `code` is the authorization code in queries and forms; in JSON bodies it is an error code, kept for evidence.
SECRET_QUERY_FORM_NAMES = SECRET_NAMES | {"code", "state_secret"}

_SECRET_NAME_PATTERN = re.compile(r"(secret|password|passwd|_token$|^token_|private_key|api_?key|credential)", re.I)
_JWT_PATTERN = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_PEM_PATTERN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)
# Names the patterns above would catch whose values are no secret: token counts, and the OAuth members that say how
# a token is presented or where it is asked for (RFC 6749 §5.1, RFC 7009 §2.1, RFC 7591 §2, RFC 8414 §2).
_NOT_SECRET = frozenset(
    {
        *("input_tokens", "max_tokens", "output_tokens", "max_output_tokens"),
        *("token_type", "token_type_hint", "token_endpoint", "token_endpoint_auth_method"),
        *("token_endpoint_auth_methods_supported", "token_endpoint_auth_signing_alg_values_supported"),
    }
)
# `name=value` after `?`, `#`, `&` (also HTML's `&amp;`, JSON's `\u0026`) or `;`: a URL parameter in free text.
# The user information of a URL in free text (``scheme://user:password@host``): a target's answer may carry one.
_USERINFO_PATTERN = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"'<>?#]+@")
_URL_PARAM_PATTERN = re.compile(r"((?:[?&;#]|\\u0026)([A-Za-z0-9_.-]+)=)([^&#;?\s\"'<>\\]+)")
# Encoded forms of a secret are only scrubbed from this many characters on (shorter ones match ordinary text).
MIN_ENCODED_LENGTH = 8


def is_secret_name(name: str, *, query_or_form: bool = False) -> bool:
    return _is_secret_name(name, query_or_form)


@functools.lru_cache(maxsize=4096)  # a run asks about the same few hundred names tens of thousands of times
def _is_secret_name(name: str, query_or_form: bool) -> bool:
    lowered = name.lower()
    if lowered in _NOT_SECRET:
        return False
    names = SECRET_QUERY_FORM_NAMES if query_or_form else SECRET_NAMES
    return lowered in names or bool(_SECRET_NAME_PATTERN.search(lowered))


class Redactor:
    """Scrubs secrets from the parts of an exchange. Thread-safe; secrets can be added at any time."""

    MIN_SECRET_LENGTH = 4  # shorter values would blank out ordinary text
    MERGE_RATIO = 2  # an index is merged into the new one while it has at most this many times its forms
    LOOSE_FORMS = 32  # new forms are found without an automaton while they are at most this many

    def __init__(self, secrets: Iterable[str] | None = None) -> None:
        self._secrets: set[str] = set()
        self._pairs: set[tuple[str, str]] = set()
        self._forms: set[str] = set()
        self._crafted: set[str] = set()
        # Forms are matched by a few immutable indexes (Aho-Corasick automata) of growing sizes, merged as they fill:
        # a run adds secrets all along, and rebuilding one index of every form at each addition would cost more
        # than the scrubbing itself. New forms wait in ``_pending`` until the next scrub indexes them in one batch.
        self._state = _State((), {})
        self._pending: list[str] = []
        self._lock = threading.Lock()
        for value in secrets or []:
            self.add_secret(value)

    def add_secret(self, value: str | bytes | None, *, user: str | None = None, crafted: bool = False) -> None:
        """Register a secret; with ``user``, also the ``user:secret`` pair it travels in (HTTP Basic). ``crafted``:
        a credential the harness made for a case (altered, forged, wrong on purpose): a credential header carrying
        exactly it reads ``CRAFTED`` instead of ``REDACTED``."""
        if value is None:
            return
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if len(text) < self.MIN_SECRET_LENGTH:
            return
        with self._lock:
            if crafted:
                self._crafted.add(text)
            if text not in self._secrets:
                self._secrets.add(text)
                self._add_forms(encoded_forms(text))
            if user is not None and (user, text) not in self._pairs:
                self._pairs.add((user, text))
                # RFC 7617 sends the pair as it is; RFC 6749 2.3.1 form-encodes each part first.
                for pair in {
                    f"{user}:{text}",
                    f"{quote(user, safe='', errors=_LONE)}:{quote(text, safe='', errors=_LONE)}",
                }:
                    self._add_forms(_base64_forms(pair.encode("utf-8", _LONE)))

    def _add_forms(self, forms: set[str]) -> None:  # with the lock held
        new = forms - self._forms
        self._forms |= new
        self._pending += new

    def _indexed(self, *, everything: bool = False) -> _State:
        """The state with every form registered so far indexed: pending forms join the last few ones found without
        an automaton (:class:`_Loose`); past ``LOOSE_FORMS`` they become one new index, merged with the last ones
        while they are not much larger (sizes grow geometrically: few indexes, each form rebuilt into a new index a
        logarithmic number of times); ``everything`` merges them all into one."""
        with self._lock:
            indexes: list[_Index | _Loose] = list(self._state.indexes)
            loose = indexes.pop().forms if indexes and type(indexes[-1]) is _Loose else ()
            if not self._pending and (not everything or (len(indexes) <= 1 and not loose)):
                return self._state
            forms = set(self._pending).union(loose)
            if everything or len(forms) > self.LOOSE_FORMS:
                while indexes and (everything or len(indexes[-1].forms) <= self.MERGE_RATIO * len(forms)):
                    forms.update(indexes.pop().forms)
                indexes.append(_Index(frozenset(forms)))
            else:
                indexes.append(_Loose(tuple(forms)))
            # A new cache: what was scrubbed before these forms were indexed may hold them. A text of the last
            # cache that holds none of them is scrubbed as it was (see ``_State``).
            earlier = self._state
            self._state = _State(tuple(indexes), {}, earlier.cache, tuple(self._pending))
            self._pending = []
            return self._state

    @property
    def generation(self) -> int:
        """Grows with every secret form registered: what was scrubbed at one generation needs no second pass
        while the generation stays the same (nothing new to find)."""
        with self._lock:
            return len(self._forms)

    def secrets(self) -> dict[str, list[Any]]:
        """Every secret registered so far (plain data: xdist workers hand theirs to the controller)."""
        with self._lock:
            return {"secrets": sorted(self._secrets), "pairs": sorted([u, s] for u, s in self._pairs)}

    def add_secrets(self, exported: dict[str, list[Any]]) -> None:
        """Register what :meth:`secrets` returned (of another process's redactor)."""
        for value in exported.get("secrets", []):
            self.add_secret(str(value))
        for user, value in exported.get("pairs", []):
            self.add_secret(str(value), user=str(user))

    def scrub(self, text: str) -> str:
        """Value-based redaction of free text (every encoding of every known secret), credential-named URL
        parameters and the user information of URLs wherever a URL appears in the text, and JWTs and private keys by
        shape."""
        if len(text) < self.MIN_SECRET_LENGTH:  # (a header's "0", "1.1") no form is shorter, nor what a pattern matches
            return text
        state = self._indexed() if self._pending else self._state  # (:meth:`_current`, inlined: a call per text)
        # The same strings come back all run long (header values, content types, URLs): each is scrubbed once
        # while no new form is indexed. Reads and writes of a dict are atomic; racing threads compute the same value.
        clean = state.cache.get(text)
        if clean is not None:
            return clean
        if state.earlier:  # scrubbed before the last forms were indexed: as it was if it holds none of them
            clean = state.earlier.get(text)
            if clean is not None:
                for form in state.new_forms:
                    if form in text:
                        clean = None
                        break
        if clean is None:
            clean = _replace_forms(text, state.indexes)
            # Each layer runs only where its pattern can match (its literal part is there): most texts have none.
            if "=" in clean:
                clean = _URL_PARAM_PATTERN.sub(_redact_url_param, clean)
            if "@" in clean and "://" in clean:
                clean = _USERINFO_PATTERN.sub(rf"\1{REDACTED}@", clean)
            if "-----BEGIN" in clean:
                clean = _PEM_PATTERN.sub(REDACTED, clean)
            if "eyJ" in clean:
                clean = _JWT_PATTERN.sub(REDACTED, clean)
        if len(text) <= _CACHED_LENGTH:
            _remember(state.cache, text, clean)
        return clean

    def _current(self) -> _State:
        return self._indexed() if self._pending else self._state

    def scrub_tree(self, value: Any) -> Any:
        """A copy of a JSON-like document with every string (keys included) scrubbed: the last pass over a
        report, when every secret of the run is known."""
        self._indexed(everything=True)  # one scan per string for a whole report
        # Each distinct string is scrubbed once: a report repeats most of its strings (header names and values,
        # an exchange that is evidence for several rules): 23 000 strings, 1 700 distinct, on auth+profile. Each
        # container is copied once too: an exchange that is evidence for several rules is one object in the
        # document, and one (scrubbed) object in the copy.
        done: dict[str, str] = {}
        copied: dict[int, Any] = {}  # the document holds every container it has: no id is reused meanwhile
        scrub = self.scrub

        def text(value: str) -> str:
            if value not in done:
                done[value] = scrub(value)
            return done[value]

        # Closures: a report has ~500 000 values to walk on a long run. The strings and numbers a container holds
        # (most of its values) are handled in its own loop, with no call but to scrub a string met for the first
        # time; only what holds more is walked.
        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return text(value)
            if not isinstance(value, _CONTAINERS):
                return value
            ident = id(value)
            if ident in copied:
                return copied[ident]
            if isinstance(value, dict):
                copy: Any = {}
                for key, item in value.items():
                    if type(key) is str:
                        key = done[key] if key in done else text(key)
                    elif isinstance(key, str):
                        key = text(key)
                    kind = type(item)
                    if kind is str:
                        item = done[item] if item in done else text(item)
                    elif not (item is None or kind is int or kind is float or kind is bool):
                        item = walk(item)
                    copy[key] = item
            else:
                copy = list(value)
                for index, item in enumerate(copy):
                    kind = type(item)
                    if kind is str:
                        copy[index] = done[item] if item in done else text(item)
                    elif not (item is None or kind is int or kind is float or kind is bool):
                        copy[index] = walk(item)
            copied[ident] = copy
            return copy

        return walk(value)

    def header(self, name: str, value: str) -> str:
        if name.lower() in SECRET_HEADERS:
            # Keep the scheme (Bearer, Basic): it is evidence and harmless.
            scheme, _, rest = value.partition(" ")
            if name.lower() in {"authorization", "proxy-authorization"} and rest and scheme.isalpha():
                return f"{scheme} {CRAFTED if rest.strip() in self._crafted else REDACTED}"
            return CRAFTED if value.strip() in self._crafted else REDACTED
        return self.scrub(value)

    def headers(self, headers: Any) -> dict[str, str]:
        return self.header_items(header_items(headers))

    def header_items(self, items: list[tuple[str, str]]) -> dict[str, str]:
        """:meth:`headers` of what :func:`header_items` read (once: httpx decodes its headers on every read; their
        names lowercased)."""
        redacted: dict[str, str] = {}
        for key, value in items:
            if key == "location":
                self.learn_from_url(value)
        # The names are lowercased already; most values were scrubbed before with the same forms (read from the
        # state's cache here, as :meth:`scrub` would: a run's headers are a few hundred values over and over).
        cache = self._current().cache
        for key, value in items:
            if key in SECRET_HEADERS:
                clean = self.header(key, value)
            elif value in cache:
                clean = cache[value]
            else:
                clean = self.scrub(value)
            # Repeated headers (Set-Cookie, WWW-Authenticate) are joined, as HTTP allows for most.
            redacted[key] = f"{redacted[key]}, {clean}" if key in redacted else clean
        return redacted

    def learn_from_url(self, url: str) -> None:
        """Credentials a redirect carries (an authorization code, an implicit token) become known secrets at once:
        the same value may sit in free text elsewhere (a page that prints it), and the harness may never parse this
        redirect as a callback (an attack case that only checks where it led)."""
        for match in _URL_PARAM_PATTERN.finditer(url):
            if is_secret_name(match.group(2), query_or_form=True):
                value = match.group(3)
                self.add_secret(value)
                self.add_secret(unquote_plus(value))

    def query(self, query: str) -> str:
        """A query (or form body) with each credential-named parameter's value redacted and every other value
        scrubbed decoded, encoded again as ``urlencode(..., safe="[]")`` does."""
        if not query:
            return query
        pairs = _query_pairs(query) if len(query) <= _CACHED_LENGTH else parse_qsl(query, keep_blank_values=True)
        scrub = self.scrub
        return "&".join(
            f"{_quoted(k)}={_QUOTED_REDACTED if is_secret_name(k, query_or_form=True) else _quoted(scrub(v))}"
            for k, v in pairs
        )

    def url(self, url: str) -> str:
        # A run requests the same URLs again and again (most calls on auth+profile): each is redacted once
        # while no new form is indexed, as :meth:`scrub` remembers its texts.
        state, key = self._current(), ("url", url)
        clean = state.cache.get(key)
        if clean is None:
            clean = self._url(url)
            if len(url) <= _CACHED_LENGTH:
                _remember(state.cache, key, clean)
        return clean

    def _url(self, url: str) -> str:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:  # user:password@host
            netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
        return self.scrub(urlunsplit((parts.scheme, netloc, parts.path, self.query(parts.query), parts.fragment)))

    def json_value(self, value: Any) -> Any:
        """A copy of a JSON value with each string scrubbed and the value of each member whose name is a secret's
        (not null, not empty) redacted; names are kept."""
        return _json_scrubbed(value, self._current().cache, self.scrub)

    def body(self, body: bytes | None, content_type: str | None, limit: int) -> str | None:
        """A redacted, size-limited text excerpt of a body; binary bodies are described, not shown."""
        if not body:
            return None
        if len(body) > _CACHED_BODY or type(body) is not bytes:  # a bytearray is no dict key
            return self._body(body, content_type, limit)
        # Half of the bodies of a run are ones seen before (the same error, the same listing page).
        state, key = self._current(), ("body", body, content_type, limit)
        clean = state.cache.get(key)
        if clean is None:
            clean = self._body(body, content_type, limit)
            _remember(state.cache, key, clean)
        return clean

    def _body(self, body: bytes, content_type: str | None, limit: int) -> str:
        ctype = (content_type or "").lower()
        text: str | None = None
        if "json" in ctype or body[:1] in (b"{", b"["):
            try:
                parsed = target_json.loads(body)
            except (ValueError, UnicodeDecodeError):
                parsed = None
            if parsed is not None:
                text = json.dumps(self.json_value(parsed), ensure_ascii=False)
        if text is None and "x-www-form-urlencoded" in ctype:
            text = self.query(body.decode("utf-8", "replace"))
        if text is None:
            if _looks_binary(body):
                return f"<binary body: {len(body)} bytes, {content_type or 'unknown type'}>"
            window = limit + _SCRUB_MARGIN  # only what the excerpt can show is scrubbed, with a margin (see above)
            head = bytes(body[: 4 * window]).decode("utf-8", "replace")  # (at most 4 bytes a character)
            if len(head) <= window:
                text = self.scrub(head)
            else:
                text = self.scrub(head[:window])[:limit]
                return text + f"… [{len(body.decode('utf-8', 'replace')) - limit} more characters]"
        if len(text) > limit:
            text = text[:limit] + f"… [{len(text) - limit} more characters]"
        return text


def header_items(headers: Any) -> list[tuple[str, str]]:
    """(lowercased name, value) of each header of a mapping (or httpx ``Headers``), read once: a repeated header's
    values joined with ", ", as ``httpx.Headers.items`` joins them."""
    # httpx's Headers: their raw bytes decoded once (items() reads the encoding twice a line). Looked up, not
    # imported: this module loads before the plugin imports httpx without its command-line client.
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(headers, httpx.Headers):
        encoding, joined = headers.encoding, dict[str, str]()
        for key, value in headers.raw:
            name, text = key.decode(encoding).lower(), value.decode(encoding)
            joined[name] = f"{joined[name]}, {text}" if name in joined else text
        return list(joined.items())
    return [(str(name).lower(), str(value)) for name, value in headers.items()]


_CONTAINERS = (dict, list, tuple)  # (a union written in a call makes a new object at every call)


def _json_scrubbed(value: Any, cache: dict[Any, str], scrub: Callable[[str], str]) -> Any:
    """:meth:`Redactor.json_value`, with the state's cache read here as :meth:`Redactor.scrub` would: a body's strings
    are a few hundred values, most of them scrubbed before. (A function, not a closure: a closure that calls itself is
    a cycle left for the collector on every body.)"""
    if isinstance(value, str):
        clean = cache.get(value)
        return scrub(value) if clean is None else clean
    # The strings and numbers a container holds (most of its values) are handled in its own loop: a call only for
    # what holds more, or a string met for the first time.
    if isinstance(value, dict):
        copy: dict[Any, Any] = {}
        for k, v in value.items():
            kind = type(v)
            if isinstance(k, str) and _is_secret_name(k, False) and v not in (None, ""):
                copy[k] = REDACTED
            elif kind is str:
                clean = cache.get(v)
                copy[k] = scrub(v) if clean is None else clean
            elif v is None or kind is int or kind is float or kind is bool:
                copy[k] = v
            else:
                copy[k] = _json_scrubbed(v, cache, scrub)
        return copy
    if isinstance(value, list):
        items = list(value)
        for index, v in enumerate(items):
            kind = type(v)
            if kind is str:
                clean = cache.get(v)
                items[index] = scrub(v) if clean is None else clean
            elif not (v is None or kind is int or kind is float or kind is bool):
                items[index] = _json_scrubbed(v, cache, scrub)
        return items
    return value


# A run's URLs repeat their queries and their parameters (a client's id, a redirect URI, a scope): each parsed and
# each name and value encoded once (``urlencode`` with ``safe="[]"`` encodes each one so, and joins them).
@functools.lru_cache(maxsize=4096)
def _query_pairs(query: str) -> tuple[tuple[str, str], ...]:
    return tuple(parse_qsl(query, keep_blank_values=True))


def _quoted(text: str) -> str:
    return _quoted_short(text) if len(text) <= _CACHED_LENGTH else quote_plus(text, safe="[]")


@functools.lru_cache(maxsize=8192)
def _quoted_short(text: str) -> str:
    return quote_plus(text, safe="[]")


_QUOTED_REDACTED = quote_plus(REDACTED, safe="[]")


def _redact_url_param(match: re.Match[str]) -> str:
    if is_secret_name(match.group(2), query_or_form=True):
        return match.group(1) + REDACTED
    return match.group(0)


def encoded_forms(secret: str) -> set[str]:
    """The strings a secret can appear as on the wire or in a captured document: each text encoding, and each
    encoding of an encoding (a target echoing a request as JSON inside a percent-encoded header, as HTML, ...)."""
    # A token, a code: every text encoding leaves it as it is (most secrets). (A byte table's deletion, not a regex:
    # a signed token is hundreds of characters.)
    if secret.isascii() and not (data := secret.encode("ascii")).translate(None, _UNCHANGED_BYTES):
        forms = _base64_forms(data)
        forms.add(secret)
    else:
        once = {encode(secret) for encode in _TEXT_ENCODINGS}
        twice = {encode(form) for form in once for encode in _OUTER_ENCODINGS}
        forms = {secret} | once | twice
        # Base64 of the value as it is and form-encoded (RFC 6749 2.3.1 encodes a client secret before Basic).
        forms |= _base64_forms(secret.encode("utf-8", _LONE))
        forms |= _base64_forms(quote(secret, safe="", errors=_LONE).encode())
    return {f for f in forms if len(f) >= Redactor.MIN_SECRET_LENGTH}


# The characters no encoding of _TEXT_ENCODINGS and _OUTER_ENCODINGS changes (URL-unreserved: ALPHA DIGIT - . _ ~).
_UNCHANGED_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-"


# A lone surrogate (a target's JSON may hold one, e.g. "\udcff") cannot be UTF-8: its bytes are encoded as they are.
_LONE = "surrogatepass"
_TEXT_ENCODINGS: tuple[Callable[[str], str], ...] = (
    lambda s: quote(s, safe="", errors=_LONE),
    lambda s: quote(s, errors=_LONE),
    lambda s: quote_plus(s, errors=_LONE),
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
    html.escape,
    lambda s: html.escape(s, quote=False),
    lambda s: repr(s)[1:-1],  # an exception message or an f-string's {value!r}
)
# What a target wraps an encoded value in: a URL (query, header), a JSON document, an HTML page.
_OUTER_ENCODINGS: tuple[Callable[[str], str], ...] = (
    lambda s: quote(s, safe="", errors=_LONE),
    lambda s: quote(s, errors=_LONE),
    lambda s: quote_plus(s, errors=_LONE),
    lambda s: json.dumps(s)[1:-1],
    html.escape,
)


def _base64_forms(data: bytes) -> set[str]:
    """Base64 and Base64url of ``data``, padded and not, and the part of its encoding that is the same wherever
    it sits in a longer encoded string (Base64 of a value depends on its offset modulo 3 and on its neighbours)."""
    whole = base64.b64encode(data).decode("ascii")
    forms = {whole, whole.rstrip("=")}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode("ascii") if shift else whole
        # Characters wholly made of this value's bits: from ceil(8*shift/6) to floor(8*(shift+len)/6).
        core = encoded[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]
        if len(core) >= MIN_ENCODED_LENGTH:  # shorter cores would match ordinary text
            forms.add(core)
    return forms | {f.replace("+", "-").replace("/", "_") for f in forms}  # (str.translate is 20 times slower)


# Texts (URLs, bodies) up to this long are remembered with their redacted form, up to this many entries (then all
# forgotten at once): a few megabytes at most.
_CACHED_LENGTH = 512
# A long text body is scrubbed only as far as its excerpt shows, plus this margin (characters): any secret that starts
# within the excerpt ends within the margin (a PEM private key, a JWT), so it is found whole; the rest of a body of
# megabytes is never copied and scanned for an excerpt of two thousand characters.
_SCRUB_MARGIN = 64 * 1024
_CACHED_BODY = 2048
_CACHED_STRINGS = 10_000


def _remember(cache: dict[Any, str], key: Any, clean: str) -> None:
    if len(cache) >= _CACHED_STRINGS:
        cache.clear()
    cache[key] = clean


class _Index:
    """An immutable set of forms found in one scan: an Aho-Corasick automaton (``ahocorasick_rs``, compiled code)
    of the forms' first ``PREFIX`` characters reports every place where a form may start, then the whole forms
    that begin with that prefix are compared there.

    The prefixes keep the automaton small and cheap to build (signed tokens are ~800 characters with a dozen
    encoded forms each: an automaton of the whole forms takes 20 times longer to build, and an index is rebuilt
    as it grows); compared whole, the result is the same whatever their length. An automaton's size, and the time
    to build it, grow with the prefixes' characters, while a scan meets as few false starts with 8 characters as
    with 32 (8 characters of a random token are as rare in a text as more; the forms of tokens that share a longer
    prefix, such as a JWT's header, share one at any length): a run builds an index every few exchanges (each
    login, each token teaches new secrets). Figures: docs/performance.md.
    """

    PREFIX = 8

    def __init__(self, forms: frozenset[str]) -> None:
        self.forms = forms
        by_prefix: dict[str, list[str]] = {}
        for form in forms:
            by_prefix.setdefault(form[: self.PREFIX], []).append(form)
        # The forms of each prefix, longest first: the first one that is there is the longest at that place.
        self._forms = [sorted(group, key=len, reverse=True) for group in by_prefix.values()]
        self._automaton = ahocorasick_rs.AhoCorasick(
            [_scannable(prefix) for prefix in by_prefix], implementation=ahocorasick_rs.Implementation.ContiguousNFA
        )

    def starts(self, text: str, found: dict[int, list[list[str]]]) -> None:
        """Add to ``found`` every place of ``text`` where a form of this index may start: place -> groups of
        forms, longest first (one group per prefix that is there: every overlapping occurrence is reported)."""
        for index, start, _ in self._automaton.find_matches_as_indexes(text, overlapping=True):
            found.setdefault(start, []).append(self._forms[index])


class _Loose:
    """A few forms found without an automaton (``str.find``): the forms of the last secrets, until they are enough
    to be worth building an :class:`_Index` (a build costs as much as scanning many texts for a few forms)."""

    def __init__(self, forms: tuple[str, ...]) -> None:
        self.forms = forms

    def starts(self, text: str, found: dict[int, list[list[str]]]) -> None:
        """:meth:`_Index.starts`: each place where a form is (the form itself, a group of one)."""
        for form in self.forms:
            start = text.find(form)
            while start >= 0:
                found.setdefault(start, []).append([form])
                start = text.find(form, start + 1)


def _scannable(text: str) -> str:
    """``text`` with the same length and each character the automaton cannot read (a lone surrogate: Rust strings
    are UTF-8) as ``?``: places found in it are compared whole with the original text, so a ``?`` matching a ``?``
    is only a candidate, and a form holding a surrogate is still found where it is."""
    if text.isascii():  # most texts: a flag of the string, no scan
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _replace_forms(text: str, indexes: tuple[_Index | _Loose, ...]) -> str:
    """Every form of the indexes replaced: at the leftmost place where any form occurs, the longest form there,
    then on after it (what one regex of every form, longest first at each place, would do)."""
    if not indexes:
        return text
    found: dict[int, list[list[str]]] = {}
    try:
        for index in indexes:
            index.starts(text, found)
    except UnicodeEncodeError:
        found.clear()
        scannable = _scannable(text)
        for index in indexes:
            index.starts(text if type(index) is _Loose else scannable, found)
    if not found:
        return text
    parts: list[str] = []
    done = 0
    for start in sorted(found):
        if start < done:
            continue
        longest = 0
        for group in found[start]:
            for form in group:
                if len(form) <= longest:
                    break
                if text.startswith(form, start):
                    longest = len(form)
                    break
        if longest:
            parts += (text[done:start], REDACTED)
            done = start + longest
    return "".join(parts) + text[done:] if parts else text


class _State(NamedTuple):
    """What a scrub reads, replaced as a whole (threads scrub without the lock): the indexes of every form
    indexed so far, and the redacted form of texts (keyed by the text), URLs (``("url", url)``) and bodies
    (``("body", body, content_type, limit)``) already redacted with exactly these indexes."""

    indexes: tuple[_Index | _Loose, ...]
    cache: dict[Any, str]
    # The texts' cache of the state before, and the forms indexed since: a text none of these forms is in is
    # scrubbed as before (the same places match, the same forms are replaced there); the texts only, since a URL's
    # or a body's redaction also reads what it decodes.
    earlier: dict[Any, str] | None = None
    new_forms: tuple[str, ...] = ()


def redactor_for(settings: Any) -> Redactor:
    """The run's redactor: every configured secret, the Basic pair each keyed target is sent with, and the
    credentials in target URLs (``https://user:pw@host/?api_key=...``)."""
    redactor = Redactor(settings.secrets())
    for target in settings.targets().values():
        if target.api_key and target.scheme == "basic":
            redactor.add_secret(target.api_key, user="api")
        for value, user in url_credentials(target.base_url):
            redactor.add_secret(value, user=user)
    return redactor


def shown_url(url: str) -> str:
    """A URL to show in a message (e.g. a configuration error): userinfo and credential parameters redacted."""
    try:
        return Redactor().url(url)
    except ValueError:  # not even parseable: show none of it
        return "<an unparseable URL>"


def url_credentials(url: str) -> list[tuple[str, str | None]]:
    """(secret, Basic user or None) for the credentials a URL carries: userinfo and credential-named parameters.

    A user with a password is a name (kept); a user alone (``https://TOKEN@host``) is itself the credential."""
    parts = urlsplit(url)
    found: list[tuple[str, str | None]] = []
    if parts.username is not None or parts.password is not None:
        user = unquote(parts.username or "")
        if parts.password is not None:
            password = unquote(parts.password)
            found += [(password, user), (parts.password, None), (parts.netloc.rsplit("@", 1)[0], None)]
        else:
            found += [(user, None), (f"{user}:", None)]  # httpx sends it as Basic with an empty password
    found += [
        (v, None) for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(k, query_or_form=True)
    ]
    return found


# Libraries whose logged exceptions are the ones they raise to the harness: their records keep a one-line summary.
QUIET_TRACEBACKS = frozenset({"mcp"})


class _ScrubbingRecords:
    """A log record factory whose records carry their message already scrubbed (and their traceback text)."""

    def __init__(self, redactor: Redactor, inner: Callable[..., logging.LogRecord]) -> None:
        self.redactor, self.inner = redactor, inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        try:
            record.msg, record.args = self.redactor.scrub(record.getMessage()), None
        except Exception:  # a record whose arguments do not format: logging reports it, we only scrub
            return record
        if record.exc_info and record.name.partition(".")[0] in QUIET_TRACEBACKS:
            # A library logging the exception it then raises: the check reports that exception as the target's
            # failure; the library's traceback (its own frames) would read as the harness crashing.
            kind, error = record.exc_info[0], record.exc_info[1]
            summary = str(error).strip().splitlines()[0] if error is not None and str(error).strip() else ""
            name = kind.__name__ if kind is not None else "exception"
            record.msg = self.redactor.scrub(f"{record.msg} ({name}{': ' + summary if summary else ''})")
            record.exc_info, record.exc_text = None, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self.redactor.scrub("".join(traceback.format_exception(*record.exc_info)).rstrip())
        if record.stack_info:
            record.stack_info = self.redactor.scrub(record.stack_info)
        return record


def scrub_log_records(redactor: Redactor) -> Callable[[], None]:
    """Scrub every log record the process emits from now on (httpx logs each URL it requests, for one); returns
    the function that restores the previous record factory."""
    previous = logging.getLogRecordFactory()
    logging.setLogRecordFactory(_ScrubbingRecords(redactor, previous))
    return lambda: logging.setLogRecordFactory(previous)


def scrub_log_file(handler: logging.Handler, redactor: Redactor) -> None:
    """Rewrite an open log file with the secrets learnt since its lines were written; the handler goes on."""
    stream = getattr(handler, "stream", None)
    path = getattr(handler, "baseFilename", None)
    if stream is None or path is None or getattr(stream, "closed", True):
        return
    with handler.lock or threading.Lock():
        stream.flush()
        with open(path, encoding="utf-8", errors="replace") as written:
            text = written.read()
        clean = redactor.scrub(text)
        if clean != text:
            stream.seek(0)
            stream.truncate()
            stream.write(clean)
            stream.flush()


def _looks_binary(body: bytes) -> bool:
    sample = body[:512]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sample's end is still text.
        return exc.start < len(sample) - 3
    return False
