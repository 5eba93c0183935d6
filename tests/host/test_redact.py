"""Redaction as a property: a secret placed anywhere a credential travels never reaches a record or a writer."""

from __future__ import annotations

import base64
import html
import io
import json
import logging
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conformance.core import _context
from conformance.host._guard import UrlGuard
from conformance.host._redact import (
    _OUTER_ENCODINGS,
    _TEXT_ENCODINGS,
    REDACTED,
    Redactor,
    _base64_forms,
    _Index,
    _Loose,
    _replace_forms,
    encoded_forms,
    header_items,
    scrub_log_records,
    url_credentials,
)
from conformance.host.http import HostHTTP
from conformance.report.console import render_summary
from conformance.report.model import CheckOutcome, RunReport, Status
from tests._examples import examples

SECRETS = st.from_regex(r"sk_[A-Za-z0-9]{12,32}", fullmatch=True)
HEADER_NAMES = st.sampled_from(["Authorization", "Cookie", "X-Api-Key", "Proxy-Authorization"])
QUERY_NAMES = st.sampled_from(["access_token", "code", "client_secret", "api_key", "id_token_hint", "password"])
FORM_NAMES = st.sampled_from(["client_assertion", "code_verifier", "code", "refresh_token", "client_secret"])
JSON_NAMES = st.sampled_from(
    ["client_secret", "password", "access_token", "objstore_a_secret_access_key", "objstore_b_access_token"]
)
PLACES = st.sampled_from(
    ["header", "query", "form", "json", "response_json", "echoed_text", "echoed_basic", "redirect_with_code"]
)


def exchange_with_secret(place: str, name: str, secret: str, redactor: Redactor) -> dict[str, Any]:
    def handler(request: httpx.Request) -> httpx.Response:
        if place == "response_json":
            return httpx.Response(200, json={"token_type": "Bearer", name: secret, "input_tokens": 3})
        if place == "echoed_text":  # a target echoing a credential back in free text
            return httpx.Response(400, text=f"bad key {secret} given")
        if place == "echoed_basic":  # ... or the Authorization header it was sent, Base64 pair and all
            return httpx.Response(401, json={"error": "bad", "you_sent": request.headers["authorization"]})
        if place == "redirect_with_code":  # an authorization code the harness has not parsed yet
            page = f'<a href="https://app.example/cb?state=s&amp;code={secret}">continue</a>'
            location = f"https://app.example/cb?code={secret}&state=s"
            return httpx.Response(302, headers={"Location": location, "Content-Type": "text/html"}, text=page)
        return httpx.Response(200, json={"ok": True})

    client = HostHTTP(transport=httpx.MockTransport(handler), guard=UrlGuard(), redactor=redactor, retry=None)
    record = _context.begin()
    try:
        url = "https://target.example/v1/thing"
        if place == "header":
            value = f"Bearer {secret}" if "Authorization" in name else secret
            client.get(url, headers={name: value})
        elif place == "query":
            client.get(url, params={name: secret, "other": "visible"})
        elif place == "form":
            client.post(url, data={name: secret, "grant_type": "authorization_code"})
        elif place == "echoed_basic":
            client.get(url, headers={"Authorization": "Basic " + base64.b64encode(f"api:{secret}".encode()).decode()})
        elif place == "redirect_with_code":
            client.get(url)
        elif place in ("json", "response_json", "echoed_text"):
            client.post(url, json={"nested": {name: secret}, "list": [{name: secret}]})
    finally:
        _context.end()
    assert len(record.exchanges) == 1
    return record.exchanges[0]


def render_everything(exchange: dict[str, Any], tmp: Path) -> str:
    outcome = CheckOutcome(
        nodeid="t::x", rules=("AUTH-PRM-01",), status=Status.FAILED, message="m", evidence=(exchange,)
    )
    report = RunReport.build([outcome], strict=False, suites_run=(), implemented=(), targets={}, harness_version="0")
    out = io.StringIO()
    render_summary(report, out, color=False)
    texts = [json.dumps(report.to_json()), out.getvalue()]
    try:
        from conformance.report.html import render_html
    except ImportError:
        pass
    else:
        texts.append(render_html(report))
    return "\n".join(texts)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(secret=SECRETS, place=PLACES, header=HEADER_NAMES, query=QUERY_NAMES, form=FORM_NAMES, field=JSON_NAMES)
def test_secret_never_reaches_any_writer(
    tmp_path: Path, secret: str, place: str, header: str, query: str, form: str, field: str
) -> None:
    name = {"header": header, "query": query, "form": form}.get(place, field)
    redactor = Redactor()
    if place == "echoed_text":
        redactor.add_secret(secret)  # known secrets are scrubbed by value anywhere
    if place == "echoed_basic":
        redactor.add_secret(secret, user="api")  # the compression key, sent as Basic api:<key>
    exchange = exchange_with_secret(place, name, secret, redactor)
    encoded = {secret, base64.b64encode(f"api:{secret}".encode()).decode(), base64.b64encode(secret.encode()).decode()}
    assert not [form for form in encoded if form in json.dumps(exchange)]
    assert not [form for form in encoded if form in render_everything(exchange, tmp_path)]


def test_redaction_keeps_evidence_useful() -> None:
    redactor = Redactor()
    assert redactor.header("authorization", "Bearer abc.def") == f"Bearer {REDACTED}"
    assert redactor.header("content-type", "application/json") == "application/json"
    body = redactor.body(b'{"error": {"code": "slow_down"}, "input_tokens": 12}', "application/json", 1000)
    assert body is not None and "slow_down" in body and "12" in body
    assert "visible" in redactor.url("https://a.example/cb?code=SECRETCODE&state=visible")
    assert "SECRETCODE" not in redactor.url("https://a.example/cb?code=SECRETCODE&state=visible")


def test_jwts_and_private_keys_are_scrubbed_by_shape() -> None:
    redactor = Redactor()
    jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    pem = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----"
    text = redactor.scrub(f"token {jwt} and {pem}")
    assert jwt not in text and "MIIB" not in text


def test_binary_bodies_are_described_not_dumped() -> None:
    body = Redactor().body(b"\x89PNG\r\n\x1a\n\x00\x00binary", "image/png", 100)
    assert body is not None and body.startswith("<binary body")


def test_long_bodies_are_cut() -> None:
    body = Redactor().body(b"x" * 10_000, "text/plain", 100)
    assert body is not None and len(body) < 200 and "more characters" in body


# -- every encoding a secret takes on the wire ------------------------------------------------------------------

ANY_SECRETS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=Redactor.MIN_SECRET_LENGTH
).filter(lambda s: s.strip() == s and len(s.strip()) >= Redactor.MIN_SECRET_LENGTH)
USERS = st.sampled_from(["api", "client-1", "https://host.example/cimd.json", "alice"])
CONTEXT = st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=12)


def _encodings(secret: str, user: str) -> dict[str, str]:
    raw = secret.encode()
    pair = f"{user}:{secret}".encode()
    form_pair = f"{quote(user, safe='')}:{quote(secret, safe='')}".encode()
    return {
        "raw": secret,
        "percent": quote(secret, safe=""),
        "percent_plus": quote_plus(secret),
        "json": json.dumps(secret)[1:-1],
        "json_ascii": json.dumps(secret, ensure_ascii=True)[1:-1],
        "html": html.escape(secret),
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode(),
        "base64url_unpadded": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "basic_pair": base64.b64encode(pair).decode(),
        "basic_pair_url": base64.urlsafe_b64encode(pair).decode(),
        "basic_pair_form_encoded": base64.b64encode(form_pair).decode(),
        # A target echoing a request nests them: JSON in a URL or a header, JSON in HTML, a URL in a URL.
        "json_in_url": quote(json.dumps(secret)[1:-1], safe=""),
        "json_in_header": quote(json.dumps(secret)[1:-1]),
        "json_in_html": html.escape(json.dumps(secret)[1:-1]),
        "url_in_url": quote(quote(secret, safe=""), safe=""),
        "form_in_json": json.dumps(quote_plus(secret))[1:-1],
    }


@settings(max_examples=examples(150), deadline=None)
@given(secret=ANY_SECRETS, user=USERS, before=CONTEXT, after=CONTEXT)
def test_every_encoding_of_a_known_secret_is_scrubbed(secret: str, user: str, before: str, after: str) -> None:
    redactor = Redactor()
    redactor.add_secret(secret, user=user)
    for name, encoded in _encodings(secret, user).items():
        scrubbed = redactor.scrub(f"{before}{encoded}{after}")
        assert encoded not in scrubbed, name
        assert REDACTED in scrubbed, name


def _recoverable(text: str, secret: bytes) -> bool:
    """Whether any run of Base64(url) characters left in ``text`` decodes, at any alignment, to bytes holding
    ``secret``."""
    for run in re.findall(r"[A-Za-z0-9+/_-]+", text):
        run = run.translate(str.maketrans("-_", "+/"))
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[:-1] if len(chunk) % 4 == 1 else chunk  # one lone character decodes to nothing
            if secret in base64.b64decode(chunk + "=" * (-len(chunk) % 4)):
                return True
    return False


@settings(max_examples=examples(150), deadline=None)
@given(
    secret=st.from_regex(r"[A-Za-z0-9_.~-]{8,40}", fullmatch=True),
    prefix=st.binary(max_size=10),
    suffix=st.binary(max_size=10),
    urlsafe=st.booleans(),
)
def test_base64_of_a_secret_at_any_offset_is_scrubbed(secret: str, prefix: bytes, suffix: bytes, urlsafe: bool) -> None:
    """A secret inside a longer encoded value (``user:secret-suffix``, a token holding it) cannot be decoded back."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    encoded = encode(prefix + secret.encode() + suffix).decode()
    assert _recoverable(encoded, secret.encode())  # the check below can fail
    scrubbed = Redactor([secret]).scrub(f"Basic {encoded}")
    assert not _recoverable(scrubbed, secret.encode()), scrubbed


def test_a_secret_learnt_late_is_scrubbed_by_the_last_pass() -> None:
    """A code or token captured before it was known (a redirect's body, a target's echo) goes at report time."""
    redactor = Redactor()
    captured = {"response_body": 'you said "late-secret-0a1b2c" (bGF0ZS1zZWNyZXQtMGExYjJj)', "n": 3, "l": ["x"]}
    assert redactor.scrub_tree(captured) == captured
    redactor.add_secret("late-secret-0a1b2c")
    assert "late-secret" not in json.dumps(redactor.scrub_tree(captured))
    assert "bGF0ZS1zZWNyZXQtMGExYjJj" not in json.dumps(redactor.scrub_tree(captured))


@pytest.mark.parametrize(
    "text",
    [
        "Location: https://host.example/cb?state=s1&code=UNKNOWN-CODE-1&iss=x",
        '<meta http-equiv="refresh" content="0;url=/cb?state=s1&amp;code=UNKNOWN-CODE-1">',
        '{"redirect": "https://host.example/cb?iss=x\\u0026code=UNKNOWN-CODE-1"}',
        "https://host.example/cb#access_token=UNKNOWN-CODE-1&token_type=Bearer",
        "see https://host.example/mcp?x=1;api_key=UNKNOWN-CODE-1",
    ],
)
def test_credential_named_url_parameters_in_free_text_are_scrubbed_unknown(text: str) -> None:
    scrubbed = Redactor().scrub(text)
    assert "UNKNOWN-CODE-1" not in scrubbed and REDACTED in scrubbed
    assert "state=s1" in scrubbed or "state" not in text  # other parameters stay, as evidence


def test_credentials_in_a_target_url() -> None:
    url = "https://user:p%40ss-word-1@host.example/mcp?api_key=key-in-query-2&tenant=t1"
    redactor = Redactor()
    for value, user in url_credentials(url):
        redactor.add_secret(value, user=user)
    shown = redactor.url(url)
    assert "p%40ss-word-1" not in shown and "key-in-query-2" not in shown and "user" not in shown
    assert "tenant=t1" in shown and "host.example/mcp" in shown
    basic = base64.b64encode(b"user:p@ss-word-1").decode()  # what httpx sends for the URL's userinfo
    assert redactor.scrub(f"echo: Basic {basic}, p@ss-word-1, key-in-query-2") == (
        f"echo: Basic {REDACTED}, {REDACTED}, {REDACTED}"
    )


def test_many_secrets_stay_cheap_to_scrub() -> None:
    """Secrets are added all run long; scrubbing is one pass with a pattern recompiled only now and then."""
    redactor = Redactor()
    for i in range(600):
        redactor.add_secret(f"token-{i:04d}-{'x' * 20}")
        redactor.scrub("a short header value")
    text = "lorem token-0599-" + "x" * 20 + " ipsum token-0001-" + "x" * 20
    assert redactor.scrub(text) == f"lorem {REDACTED} ipsum {REDACTED}"


def test_a_token_as_url_user_is_a_secret() -> None:
    redactor = Redactor()
    for value, user in url_credentials("https://tok-as-user-1234@host.example/mcp"):
        redactor.add_secret(value, user=user)
    basic = base64.b64encode(b"tok-as-user-1234:").decode()  # httpx: the user, an empty password
    assert redactor.scrub(f"{basic} tok-as-user-1234") == f"{REDACTED} {REDACTED}"


def test_a_code_in_a_redirect_is_learnt_and_scrubbed_from_the_page_that_prints_it() -> None:
    """An attack case may never parse its redirect as a callback; a second '?' must not hide the code either."""
    redactor = Redactor()
    headers = redactor.headers({"Location": "https://host/cb?probe=1?code=Zx9-code-value&state=s1"})
    assert "Zx9-code-value" not in headers["location"]
    assert "Zx9-code-value" not in redactor.scrub("<p>your code: Zx9-code-value</p>")
    assert "probe=1" in headers["location"]


def test_long_secrets_sharing_a_prefix_and_short_secrets_inside_them_are_all_found() -> None:
    """Merged forms are found by a regex of their first characters, then compared whole: forms that
    share those characters, a short secret that begins a long one, and a near miss must each come out right."""
    shared = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIi"  # longer than the regex's prefix
    first, second, short = shared + "OiJhbGljZSJ9.sig-one", shared + "OiJib2IifQ.sig-two-longer", shared[:12]
    redactor = Redactor([first, second, short])
    near_miss = shared + "OiJldmUifQ.sig-three"  # begins like both, is neither: only its first 12 characters go
    text = f"a {second} b {first} c {near_miss} d {short}x"
    scrubbed = redactor.scrub_tree(text)  # the whole-report pass: every form in one merged level
    assert scrubbed == f"a {REDACTED} b {REDACTED} c {REDACTED}{near_miss[12:]} d {REDACTED}x"
    assert redactor.scrub(text) == scrubbed


def leftmost_longest(text: str, forms: Iterable[str]) -> str:
    """The reference the engine must equal, written the slow and obvious way: at the leftmost place where any form
    occurs, the longest form there is replaced, then on after it."""
    forms = set(forms)
    parts, done, place = [], 0, 0
    while place < len(text):
        longest = max((len(f) for f in forms if text.startswith(f, place)), default=0)
        if longest:
            parts += [text[done:place], REDACTED]
            place = done = place + longest
        else:
            place += 1
    return "".join(parts) + text[done:]


# Small alphabets, so that forms overlap, share prefixes, and contain one another.
FORM_TEXT = st.text(alphabet="ab%", min_size=4, max_size=8)


class _ShortPrefixIndex(_Index):
    PREFIX = 3  # prefixes shorter than the forms: candidates compared whole


@given(forms=st.frozensets(FORM_TEXT, min_size=1, max_size=12), text=st.text(alphabet="ab%x", max_size=60))
@example(forms=frozenset({"aaaa%b", "bbbb"}), text="aaaaa%b")  # a prefix that leads nowhere, a form one further
@example(forms=frozenset({"abab", "ababa"}), text="xababab")  # the longest form at a position
@example(forms=frozenset({"aaab", "aab%", "ab%%"}), text="aaab%%")  # the leftmost wins over a longer one after it
@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
def test_a_form_index_replaces_leftmost_longest(forms: frozenset[str], text: str) -> None:
    """An index (an automaton of the forms' prefixes) replaces exactly what the reference does, and so do
    several indexes of parts of the forms (a run indexes new forms in batches)."""
    expected = leftmost_longest(text, forms)
    assert _replace_forms(text, (_Index(forms),)) == expected
    assert _replace_forms(text, (_ShortPrefixIndex(forms),)) == expected
    ordered = sorted(forms)
    split = (_ShortPrefixIndex(frozenset(ordered[::2])), _Index(frozenset(ordered[1::2])))
    assert _replace_forms(text, split) == expected
    # The last forms, found without an automaton, alone and beside an index.
    assert _replace_forms(text, (_Loose(tuple(ordered)),)) == expected
    assert _replace_forms(text, (_ShortPrefixIndex(frozenset(ordered[::2])), _Loose(tuple(ordered[1::2])))) == expected


def test_a_form_index_finds_forms_of_different_lengths_at_any_offset() -> None:
    index = _ShortPrefixIndex(frozenset({"abcd", "abcdef", "zzzzzz", "bcdefg"}))
    assert _replace_forms("xabcdefg abcd zzzzzzz abc", (index,)) == f"x{REDACTED}g {REDACTED} {REDACTED}z abc"


def _reference_forms(secrets: list[tuple[str, str | None]]) -> set[str]:
    """Every form the reference looks for: each encoding of each secret, and the Base64 forms of each Basic pair
    (as sent, and form-encoded first)."""
    forms: set[str] = set()
    for secret, user in secrets:
        forms |= encoded_forms(secret)
        if user is not None:
            encoded = f"{quote(user, safe='', errors='surrogatepass')}:{quote(secret, safe='', errors='surrogatepass')}"
            for pair in (f"{user}:{secret}", encoded):
                forms |= _base64_forms(pair.encode("utf-8", "surrogatepass"))
    return forms


# Secrets that share prefixes (some longer than an index's 32-character prefix), contain one another, and hold
# characters each encoding changes (and a lone surrogate, which the automaton cannot read as UTF-8).
RANDOM_SECRETS = st.builds(
    lambda stem, tail: stem + tail,
    st.sampled_from(["", "sk_live_0123456789abcdef0123456789ab", "eyJhbGciOiJSUzI1NiJ9", "tok"]),
    st.text(alphabet=st.sampled_from("ab/+=&% \"'<é\udcff"), min_size=1, max_size=12),
).filter(lambda s: len(s) >= Redactor.MIN_SECRET_LENGTH)


def _every_encoding(secret: str) -> set[str]:
    once = {encode(secret) for encode in _TEXT_ENCODINGS}
    twice = {encode(form) for form in once for encode in _OUTER_ENCODINGS}
    as_bytes = [secret.encode("utf-8", "surrogatepass"), quote(secret, safe="", errors="surrogatepass").encode()]
    forms = {secret} | once | twice | _base64_forms(as_bytes[0]) | _base64_forms(as_bytes[1])
    return {form for form in forms if len(form) >= Redactor.MIN_SECRET_LENGTH}


@settings(max_examples=examples(150), deadline=None)
@given(secret=st.one_of(st.from_regex(r"[A-Za-z0-9._~-]{4,60}", fullmatch=True), ANY_SECRETS, RANDOM_SECRETS))
def test_encoded_forms_are_every_encoding_and_every_encoding_of_one(secret: str) -> None:
    """A plain token skips the encodings (none changes it); its forms are still all of them."""
    assert encoded_forms(secret) == _every_encoding(secret)


@pytest.mark.parametrize("char", list("/+=&%:@?#!$'\"<>\\ é\t"))
def test_a_token_with_one_character_an_encoding_changes_has_every_encoding(char: str) -> None:
    secret = f"tok{char}en-1"
    assert encoded_forms(secret) == _every_encoding(secret) != {secret} | _base64_forms(secret.encode())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), secrets=st.lists(st.tuples(RANDOM_SECRETS, st.sampled_from([None, "api", "c l"])), max_size=6))
def test_the_redactor_replaces_every_form_leftmost_longest(
    data: st.DataObject, secrets: list[tuple[str, str | None]]
) -> None:
    """The engine against the reference on random texts holding random secrets in random encodings, with secrets
    learnt one by one between scrubs (the last few forms found without an automaton, new forms indexed in batches,
    indexes merged; and every batch indexed at once) and by the last pass."""
    redactors, plain, known = (Redactor(), _EveryFormIndexed()), Redactor(), []
    filler = st.text(alphabet=st.sampled_from("ab/=%x é\udcff"), max_size=6)
    for secret, user in [*secrets, ("", None)]:
        forms = sorted(_reference_forms(known))
        pieces = st.one_of(filler, st.sampled_from(forms)) if forms else filler
        text = "".join(data.draw(st.lists(pieces, max_size=8)))
        # The by-name layers (URL parameters, JWT and PEM shapes) are the same with or without secrets.
        expected = plain.scrub(leftmost_longest(text, forms))
        for redactor in redactors:
            assert redactor.scrub(text) == expected
            assert redactor.scrub(text) == expected  # scrubbed once, remembered
            if secret:
                redactor.add_secret(secret, user=user)
        if secret:
            known.append((secret, user))
    text = "".join(data.draw(st.lists(st.sampled_from(sorted(_reference_forms(known))), max_size=8))) if known else ""
    expected = plain.scrub(leftmost_longest(text, _reference_forms(known)))
    for redactor in redactors:
        assert redactor.scrub_tree({"k": [text]}) == {"k": [expected]}


class _EveryFormIndexed(Redactor):
    LOOSE_FORMS = 0  # every batch of new forms an automaton at once


def test_a_string_scrubbed_before_a_secret_was_learnt_is_scrubbed_again_after() -> None:
    """Scrubbed strings are remembered only while no new form is known."""
    redactor = Redactor(["first-secret-1"])
    text = "first-secret-1 then late-secret-2"
    assert redactor.scrub(text) == f"{REDACTED} then late-secret-2"
    generation = redactor.generation
    redactor.add_secret("late-secret-2")
    assert redactor.generation > generation
    assert redactor.scrub(text) == f"{REDACTED} then {REDACTED}"


def test_urls_and_bodies_redacted_before_a_secret_was_learnt_are_redacted_again_after() -> None:
    """URLs and bodies are remembered too, only while no new form is known."""
    redactor = Redactor()
    url, body = "https://host.example/p/late-secret-3?x=late-secret-3", b'{"echo": "late-secret-3"}'
    assert redactor.url(url) == url
    assert redactor.body(body, "application/json", 1000) == body.decode()
    assert redactor.url(url) == url  # remembered
    redactor.add_secret("late-secret-3")
    assert redactor.url(url) == f"https://host.example/p/{REDACTED}?x={REDACTED}"
    assert redactor.body(body, "application/json", 1000) == f'{{"echo": "{REDACTED}"}}'
    assert redactor.body(bytearray(body), "application/json", 1000) == f'{{"echo": "{REDACTED}"}}'


def test_secrets_added_and_scrubbed_from_many_threads() -> None:
    """Each thread adds its own secrets while the others scrub: a scrub after an addition finds the secret."""
    redactor = Redactor()
    errors: list[str] = []

    def work(n: int) -> None:
        for i in range(60):
            secret = f"thread-{n}-secret-{i:03d}-" + "x" * (i % 40)
            redactor.add_secret(secret, user="api" if i % 3 == 0 else None)
            encoded = base64.b64encode(secret.encode()).decode()
            if redactor.scrub(f"<{secret}> {encoded} {quote(secret)}") != f"<{REDACTED}> {REDACTED} {REDACTED}":
                errors.append(secret)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(redactor.secrets()["secrets"]) == 240


def test_a_crafted_credential_is_redacted_and_marked() -> None:
    """A credential the harness crafted for a case (a key with a character changed, a forged token) is redacted as
    any secret is, and its credential header says it was crafted: a replay then knows the run's own credential was
    not what the request carried."""
    from conformance.host import CRAFTED
    from conformance.report.placeholders import CRAFTED as MARKER_OF_THE_REPORT

    assert CRAFTED == MARKER_OF_THE_REPORT
    redactor = Redactor(["sk-real-key-1234"])
    redactor.add_secret("sk-real-key-12340", crafted=True)
    assert redactor.header("Authorization", "Bearer sk-real-key-1234") == f"Bearer {REDACTED}"
    assert redactor.header("Authorization", "Bearer sk-real-key-12340") == f"Bearer {CRAFTED}"
    assert redactor.header("authorization", "sk-real-key-12340") == CRAFTED
    assert redactor.header("x-api-key", "sk-real-key-1234") == REDACTED
    assert "sk-real-key-1234" not in redactor.scrub("echo: sk-real-key-12340 and sk-real-key-1234")


def test_the_last_pass_scrubs_each_distinct_string_once() -> None:
    """A report repeats most of its strings: the last pass scrubs each distinct one once, and every
    occurrence, keys included, still comes out scrubbed."""
    scrubbed: list[str] = []

    class Counting(Redactor):
        def scrub(self, text: str) -> str:
            scrubbed.append(text)
            return super().scrub(text)

    redactor = Counting(["late-secret-0a1b2c"])
    exchange = {"url": "https://x/cb?v=late-secret-0a1b2c", "late-secret-0a1b2c": "same", "n": 1}
    document = {"results": [{"evidence": [exchange, dict(exchange)]} for _ in range(50)]}
    clean = redactor.scrub_tree(document)
    assert "late-secret-0a1b2c" not in json.dumps(clean)
    assert clean["results"][49]["evidence"][1] == {"url": f"https://x/cb?v={REDACTED}", REDACTED: "same", "n": 1}
    assert sorted(scrubbed) == sorted(
        {"results", "evidence", "url", exchange["url"], "late-secret-0a1b2c", "same", "n"}
    )


def test_the_names_of_how_a_token_is_presented_are_no_secrets() -> None:
    """token_endpoint_auth_method, the token endpoint's URL and token_type are evidence a reviewer needs: never
    masked, while the secrets beside them are."""
    from conformance.host.exchange import Exchange

    redactor = Redactor()
    sent = {"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "client_secret_post"}
    got = {"client_id": "abc", "client_secret": "s3cr3t-value", "token_endpoint_auth_method": "client_secret_post"}
    exchange = Exchange.capture(
        redactor,
        method="POST",
        url="https://as.test/register",
        request_headers={"content-type": "application/json"},
        request_body=json.dumps(sent).encode(),
        status=201,
        response_headers={"content-type": "application/json"},
        response_body=json.dumps(got).encode(),
    ).to_json()
    assert '"token_endpoint_auth_method": "client_secret_post"' in exchange["request_body"]
    assert '"client_secret": "[REDACTED]"' in exchange["response_body"]
    assert '"token_endpoint_auth_method": "client_secret_post"' in exchange["response_body"]
    form = b"token_type_hint=access_token&token=abcdef123456&token_endpoint=https%3A%2F%2Fas.test%2Ftoken"
    revoked = Exchange.capture(
        redactor,
        method="POST",
        url="https://as.test/revoke",
        request_headers={"content-type": "application/x-www-form-urlencoded"},
        request_body=form,
        status=200,
    ).to_json()
    assert "token_type_hint=access_token" in revoked["request_body"] and "abcdef123456" not in revoked["request_body"]
    assert "token_endpoint=https" in revoked["request_body"]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secrets=st.lists(st.text(alphabet='abcdXYZ019-_~%+/ "<&é', min_size=4, max_size=12), min_size=1, max_size=5),
    texts=st.lists(st.text(alphabet='abcdXYZ019-_~%+/ "<&é=?', max_size=40), min_size=1, max_size=6),
)
def test_a_text_scrubbed_before_secrets_were_learnt_is_scrubbed_as_a_fresh_redactor_would(
    secrets: list[str], texts: list[str]
) -> None:
    """The cache carried over when new secrets are indexed: after each secret, every text (scrubbed before, some
    holding the new secret's forms) reads as a redactor that knew every secret from the start scrubs it."""
    redactor = Redactor()
    texts = texts + [f"x{s}y" for s in secrets] + [quote(s, safe="") for s in secrets]
    for learnt, secret in enumerate(secrets, 1):
        for text in texts:
            redactor.scrub(text)
        redactor.add_secret(secret)
        fresh = Redactor(secrets[:learnt])
        assert [redactor.scrub(t) for t in texts] == [fresh.scrub(t) for t in texts]
    assert redactor.scrub_tree({"texts": texts}) == {"texts": [Redactor(secrets).scrub(t) for t in texts]}


def test_the_last_pass_copies_a_shared_exchange_once() -> None:
    """An exchange that is evidence for several rules is one object in the report's document: one scrubbed object
    in the copy, equal to what separate copies of it give."""
    redactor = Redactor(["late-secret-0a1b2c"])
    exchange = {"url": "https://x/cb?v=late-secret-0a1b2c", "headers": {"a": "late-secret-0a1b2c"}, "n": [1, 2.5]}
    document = {"results": [{"evidence": [exchange, exchange]}, {"evidence": (exchange,)}]}
    clean = redactor.scrub_tree(document)
    first, second, third = (*clean["results"][0]["evidence"], clean["results"][1]["evidence"][0])
    assert first is second is third
    assert clean == redactor.scrub_tree(json.loads(json.dumps(document)))
    assert "late-secret" not in json.dumps(clean)


def test_header_items_of_httpx_headers_are_its_items_lowercased() -> None:
    raw = [(b"Set-Cookie", b"a=1"), (b"X-Name", b"caf\xc3\xa9"), (b"set-cookie", b"b=2"), (b"Location", b"/x?code=c")]
    for headers in (httpx.Headers(raw), httpx.Headers([*raw, (b"X-Latin", b"\xe9t\xe9")])):
        expected = [(name.lower(), value) for name, value in headers.items()]
        assert header_items(headers) == expected and expected[0] == ("set-cookie", "a=1, b=2")


def test_a_library_logging_the_exception_it_raises_keeps_a_line_not_a_traceback() -> None:
    """The MCP SDK logs the parse error it then raises (the check reports it): its record says what failed in a
    line; a record of any other logger keeps its traceback."""
    restore = scrub_log_records(Redactor(["sekrit-123"]))
    try:
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        for name in ("mcp.client.streamable_http", "conformance.test"):
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            try:
                raise ValueError("bad JSON from sekrit-123\nsecond line")
            except ValueError:
                logger.exception("Failed to parse")
            finally:
                logger.removeHandler(handler)
    finally:
        restore()
    sdk, ours = stream.getvalue().split("Failed to parse", 2)[1:]
    assert "Traceback" not in sdk and "(ValueError: bad JSON from [REDACTED])" in sdk and "second line" not in sdk
    assert "Traceback" in ours and "sekrit-123" not in ours
