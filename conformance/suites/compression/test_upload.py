"""Authentication, uploads (binary and by URL), downloads, error bodies and transport (IMG-AUTH, SHRINK, OUT, ERR,
TLS)."""

from __future__ import annotations

import base64
import json
import re
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from conformance import Failure, alone, expect, fail, needs, observe, rule
from conformance.config import Settings
from conformance.core import _budget
from conformance.host import Redactor, is_loopback_host
from conformance.host.http import HostHTTP, record_exchange
from conformance.judges.compression import count_of, image_header_problems
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._transport import loopback_run, transport_not_judged
from conformance.suites.compression import images
from conformance.suites.compression.client import (
    Api,
    ImageServer,
    decoded_or_fail,
    expect_json_error,
    json_body,
)


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def _credentials_message(response: httpx.Response, what: str) -> None:
    expect(response.status_code == 401, f"{what}: expected 401, got {response.status_code}")
    body = json_body(response)
    expect(isinstance(body, dict), f"{what}: the 401 body is not a JSON object")
    expect(isinstance(body.get("error"), str) and body["error"], f"{what}: the 401 body has no string `error`")
    message = body.get("message")
    expect(isinstance(message, str), f"{what}: the 401 body has no string `message`")
    says = re.search(r"credential", message, re.I) and re.search(r"invalid|incorrect|not valid|wrong", message, re.I)
    expect(says, f"{what}: the message {message!r} does not say that the credentials are invalid")


AUTH = "contract C, Authentication 1 (Basic api:<API_KEY> on every request); Errors 3"
# case -> the Authorization header made from the real key (None: no header); the rule's own cases are named.
BAD_CREDENTIALS: dict[str, Callable[[str], str] | None] = {
    "no Authorization header": None,
    "a wrong API key": lambda key: _basic("api", f"{key}-not-{uuid.uuid4().hex[:6]}")["Authorization"],
    "an empty API key (api:)": lambda key: _basic("api", "")["Authorization"],
    "the key with its last character changed": lambda key: _basic("api", key[:-1] + ("0" if key[-1:] != "0" else "1"))[
        "Authorization"
    ],
    "the key truncated by one character": lambda key: _basic("api", key[:-1])["Authorization"],
    "the key as a Bearer token": lambda key: f"Bearer {key}",
    "Basic credentials without a user (the key alone)": lambda key: "Basic " + base64.b64encode(key.encode()).decode(),
    "Basic credentials that are not base64": lambda key: "Basic @@not-base64@@",
}
# The endpoints the rule names: an upload, a download and a command on an existing output.
ENDPOINTS = ("POST /shrink", "GET /output/<id>", "POST /output/<id>")
NAMED_CREDENTIALS = ("no Authorization header", "a wrong API key")
AUTH01 = attack_table(
    "IMG-AUTH-01",
    *(
        Attack(f"{case} on {endpoint}", f"IMG-AUTH-01; {AUTH}", named=case in NAMED_CREDENTIALS)
        for endpoint in ENDPOINTS
        for case in BAD_CREDENTIALS
    ),
)
RESIZE_COMMAND = {"resize": {"method": "scale", "width": 50}}


def _send(api: Api, endpoint: str, output: str, headers: dict[str, str]) -> httpx.Response:
    """One request to ``endpoint`` (an upload, a download of ``output``, or a resize of it) with ``headers``."""
    if endpoint == "POST /shrink":
        return api.http.post(api.target.url("/shrink"), content=images.image("flat.jpg"), headers=headers)
    if endpoint == "GET /output/<id>":
        return api.http.get(output, headers=headers)
    return api.http.post(output, json=RESIZE_COMMAND, headers=headers)


@rule("IMG-AUTH-01")
def test_basic_auth(api: Api, host_http: HostHTTP) -> None:
    output = api.upload("flat.jpg").location
    run = AttackRun.of("IMG-AUTH-01")
    key = api.target.api_key or ""
    own = {key, api.target.auth.get("Authorization", "").partition(" ")[2]}  # the key, and the api:KEY pair sent
    sends: dict[str, tuple[str, str, dict[str, str]]] = {}  # attack -> (case, endpoint, headers)
    for case, make in BAD_CREDENTIALS.items():
        header = make(key) if make is not None and key else None
        if header is not None:
            # Nearly the real credentials (or wrong on purpose): never shown, and marked crafted unless it is the key
            # itself (a replay cannot send a crafted one again from the key).
            value = header.partition(" ")[2]
            host_http.redactor.add_secret(value, crafted=value not in own)
        for endpoint in ENDPOINTS:
            attack = f"{case} on {endpoint}"
            if make is not None and not key:
                run.not_tried(attack, "no API key configured to alter")
                continue
            sends[attack] = (case, endpoint, {"Authorization": header} if header is not None else {})

    def refused(attack: str) -> None:
        """One refused request: each attack is a request of its own, so they go at once."""
        case, endpoint, headers = sends[attack]
        _credentials_message(_send(api, endpoint, output, headers), f"{endpoint} with {case}")

    run.each(sends, refused, limit=api.http.concurrency)
    accepted = {
        "POST /shrink": (api.shrink(images.image("flat.jpg")), 201),
        "GET /output/<id>": (api.get(output), 200),
        "POST /output/<id>": (api.command(output, RESIZE_COMMAND), 200),
    }
    for endpoint, (response, status) in accepted.items():
        expect(
            response.status_code == status,
            f"{endpoint} with api:<key> was not accepted ({response.status_code}, expected {status})",
        )
    run.conclude()


def _check_upload(response: httpx.Response, sent: bytes, mime: str, what: str) -> None:
    """201, Location, an integer count and a record with ``input`` or ``output`` (the contract: an upload response
    "may carry `input`, or `output`"); ``input``, when present, describes the bytes sent."""
    expect(response.status_code == 201, f"{what}: expected 201, got {response.status_code}")
    expect(response.headers.get("location"), f"{what}: no Location header")
    expect(count_of(response) is not None, f"{what}: Compression-Count is missing or not an integer")
    record = json_body(response)
    parts = [name for name in ("input", "output") if isinstance(record, dict) and isinstance(record.get(name), dict)]
    expect(parts, f"{what}: the body is not a JSON record with an `input` or `output` object")
    assert isinstance(record, dict)
    if "input" not in parts:
        observe(f"{what}: the record carries `output` only (no `input` to compare with the upload)")
        return
    size = record["input"].get("size")
    expect(size == len(sent), f"{what}: input.size is {size!r}, the upload had {len(sent)} bytes")
    kind = record["input"].get("type")
    expect(kind == mime, f"{what}: input.type is {kind!r}, the bytes are {mime}")


@rule("IMG-SHRINK-01")
def test_upload_binary(api: Api) -> None:
    for name, mime in (("photo.jpg", images.JPEG), ("photo.png", images.PNG)):
        # An upload other checks already made is judged as it was answered; else upload now (and share it).
        cached = api.cached(name)
        sent = images.image(name)
        response = cached.response if cached else api.shrink(sent)
        _check_upload(response, sent, mime, f"upload of {name}")
        api.remember(name, sent, response)
    # The type comes from the bytes: a PNG declared as JPEG is still a PNG.
    sent = images.image("flat.png")
    _check_upload(api.shrink(sent, content_type="image/jpeg"), sent, images.PNG, "PNG sent as Content-Type: image/jpeg")
    observe(
        "photo.jpg, photo.png and a PNG sent as image/jpeg: 201 with Location, an integer Compression-Count and a "
        "record whose `input`, when present, has the size and type of the bytes sent"
    )


@rule("IMG-SHRINK-02")
def test_upload_by_url(
    api: Api, host_http: HostHTTP, image_server: ImageServer | None, conformance_settings: Settings
) -> None:
    url = conformance_settings.get("image_url")
    if url:
        fetched = host_http.get(url)
        sent = fetched.content
        mime = images.sniff(sent)
        if fetched.status_code != 200 or mime is None:
            needs("an --image-url that serves a PNG or JPEG image", "--image-url or CONFORMANCE_IMAGE_URL")
    elif image_server is not None:
        url = f"{image_server.base_url}/{image_server.token}/photo.jpg"
        sent, mime = images.image("photo.jpg"), images.JPEG
    else:
        needs("a URL the target can fetch (the harness serves one for local targets)", "--image-url")
    _check_upload(api.shrink_url(url), sent, mime, f"upload by URL {url}")
    if image_server is not None and not conformance_settings.get("image_url"):
        observe(f"the target fetched {len(image_server.hits)} time(s) from the harness's image server")


SHRINK03 = "IMG-SHRINK-03"
TYPES = "contract C, What the service does 1 (a JPEG or PNG image)"
SOURCE_BODY = "contract C, Endpoints (POST /shrink by URL: {source: {url: <image_url>}})"
TRUNCATED = f"{SHRINK03} (a truncated image: a 4xx JSON error or a valid output, reported); contract C, Errors 1-2"
BAD_UPLOADS = {  # case -> (test image name, or "" for an empty body; source)
    "an empty body": ("", f"{SHRINK03} (empty)"),
    "plain text": ("text.txt", f"{SHRINK03} (non-image)"),
    "a PNG signature followed by garbage": ("fake.png", f"{SHRINK03} (non-image); {TYPES}"),
    "a truncated JPEG": ("truncated.jpg", TRUNCATED),
    "a truncated PNG": ("truncated.png", TRUNCATED),
    "a GIF image": ("photo.gif", f"{SHRINK03} (non-image: not a type the service takes); {TYPES}"),
}
BAD_SOURCES = {  # case -> (the JSON body, or None: a URL case; source)
    "a JSON body without source": ({}, SOURCE_BODY),
    "source without url": ({"source": {}}, SOURCE_BODY),
    "source.url as a number": ({"source": {"url": 5}}, SOURCE_BODY),
    "source as a string": ({"source": "http://127.0.0.1:1/photo.png"}, SOURCE_BODY),
    "the URL 'not a url'": (None, f"{SHRINK03} (bad source URL)"),
    "an empty URL": (None, f"{SHRINK03} (bad source URL)"),
    "an ftp URL": (None, f"{SHRINK03} (bad source URL); contract C (HTTPS)"),
    "a URL nothing listens on": (None, f"{SHRINK03} (bad source URL)"),
    "a URL serving text": (None, f"{SHRINK03} (bad source URL: non-image)"),
    "a URL answering 404": (None, f"{SHRINK03} (bad source URL)"),
    "a URL serving a truncated JPEG": (None, f"{TRUNCATED}, by URL"),
}
# Truncated images may be refused or compressed: either outcome is reported, a broken output fails.
TOLERATED = {"a truncated JPEG", "a truncated PNG", "a URL serving a truncated JPEG"}
NAMED_UPLOADS = {"an empty body", "plain text", "a truncated JPEG", "a truncated PNG", "the URL 'not a url'"}
SHRINK03_TABLE = attack_table(
    "IMG-SHRINK-03",
    *(Attack(c, src, named=c in NAMED_UPLOADS) for c, (_, src) in (*BAD_UPLOADS.items(), *BAD_SOURCES.items())),
)
SERVED = {
    "a URL serving text": "notes.txt",
    "a URL answering 404": "missing.png",
    "a URL serving a truncated JPEG": "truncated.jpg",
}


def _truncated_outcome(api: Api, response: httpx.Response, mime: str, what: str) -> tuple[str, bool]:
    """A truncated image's answer: refused (a 4xx JSON error) or accepted with an output that downloads as an image
    of its type; anything else fails. The outcome in words, and whether it was accepted."""
    location = response.headers.get("location")
    if response.status_code == 201 and location:
        download = api.get(location)
        decoded = decoded_or_fail(download, f"{what}: accepted (201), its output")
        expect(decoded.mime == mime, f"{what}: accepted (201), but its output is {decoded.mime}, not {mime}")
        return f"{what}: accepted, a valid {decoded.mime} {decoded.width}x{decoded.height} output", True
    if 200 <= response.status_code < 300:
        fail(f"{what}: answered {response.status_code} without a Location: neither refused nor an output")
    expect_json_error(response, what)
    return f"{what}: refused ({response.status_code})", False


@alone("reads the account's Compression-Count before and after its operations, which any other check's moves")
@rule("IMG-SHRINK-03")
def test_bad_uploads(api: Api, image_server: ImageServer | None) -> None:
    run = AttackRun.of("IMG-SHRINK-03")
    urls = {
        "the URL 'not a url'": "not a url",
        "an empty URL": "",
        "an ftp URL": "ftp://127.0.0.1/photo.png",
        "a URL nothing listens on": "http://127.0.0.1:1/photo.png",
    }
    for case, name in SERVED.items():
        if image_server is None:
            run.not_tried(case, "the target is not on loopback: the harness serves no URL it can reach")
        else:
            urls[case] = f"{image_server.base_url}/{image_server.token}/{name}"
    truncated: dict[str, tuple[str, bool]] = {}  # a tolerated case -> its outcome in words, whether it was accepted

    def send(case: str) -> None:
        uploaded = case in BAD_UPLOADS
        name, body = (BAD_UPLOADS[case][0], None) if uploaded else (None, BAD_SOURCES[case][0])
        if uploaded:
            response = api.shrink(images.image(name) if name else b"")
        elif body is None:
            response = api.shrink_url(urls[case])
        else:
            response = api.http.post(api.target.url("/shrink"), json=body, headers=api.target.auth)
        if case in TOLERATED:  # a truncated image: uploaded as itself, or a JPEG served by URL
            mime = (images.sniff(images.image(name)) or "") if name else images.JPEG
            truncated[case] = _truncated_outcome(api, response, mime, case)
        else:
            expect_json_error(response, f"upload of {case}" if uploaded else f"upload by {case}")

    cases = [*BAD_UPLOADS, *(c for c, (body, _) in BAD_SOURCES.items() if body is not None or c in urls)]
    before = api.count()
    run.each(cases, send, limit=api.http.concurrency)  # the cases at once: the count is read around them all
    after = api.count()
    outcomes = [truncated[case][0] for case in cases if case in truncated]  # in the table's order
    accepted = sum(truncated[case][1] for case in cases if case in truncated)
    if after - before > accepted:
        run.problems.append(
            f"refused uploads raised Compression-Count from {before} to {after}"
            + (f" ({accepted} truncated upload(s) accepted, counting {accepted})" if accepted else "")
        )
    if outcomes:
        observe("truncated images: " + "; ".join(outcomes))
    run.conclude()


@rule("IMG-SHRINK-04")
def test_output_is_faithful(api: Api) -> None:
    """The output decodes with the upload's type and dimensions. An output larger than its upload passes the rule
    and is reported as a warning note (the contract promises optimization, no size)."""
    problems = []
    larger = []
    for name in ("photo.jpg", "photo.png", "flat.png", "flat.jpg"):
        upload = api.upload(name)
        source = images.decode(upload.sent)
        assert source is not None  # our own images always decode
        response = api.get(upload.location)
        out = decoded_or_fail(response, f"download of {name}")
        if out.mime != source.mime:
            problems.append(f"{name}: the output is {out.mime}")
        if (out.width, out.height) != (source.width, source.height):
            problems.append(f"{name}: {out.width}x{out.height} instead of {source.width}x{source.height}")
        size = len(response.content)
        if size > len(upload.sent):
            larger.append(f"{name}: output {size} bytes > input {len(upload.sent)} bytes")
    if problems:
        fail("; ".join(problems))
    observe("photo.jpg, photo.png, flat.png, flat.jpg: each output decodes with the upload's type and dimensions")
    if larger:
        observe("warning: an output is larger than its upload: " + "; ".join(larger))


@rule("IMG-OUT-01")
def test_download(api: Api) -> None:
    for name in ("photo.jpg", "photo.png"):
        upload = api.upload(name)
        response = api.get(upload.location)
        decoded = decoded_or_fail(response, f"download of {name}")
        problems = image_header_problems(response, decoded)
        expect(not problems, f"{name}: " + "; ".join(problems))
    observe(
        "downloads of photo.jpg and photo.png: 200, Content-Type, Content-Length, Image-Width/Height and "
        "Compression-Count agree with the image"
    )
    unknown = api.upload("photo.jpg").location.rsplit("/", 1)[0] + "/" + "unknown" + uuid.uuid4().hex
    response = api.get(unknown)
    expect_json_error(response, "an unknown output id")
    expected = "as expected" if response.status_code == 404 else "404 expected"
    observe(f"an unknown output id: {response.status_code} with a JSON error ({expected})")


@rule("IMG-ERR-01")
def test_error_bodies(api: Api, host_http: HostHTTP) -> None:
    location = api.upload("photo.jpg").location
    probes = [
        ("upload without credentials", lambda: api.shrink(images.image("flat.jpg"), auth=False)),
        ("unknown output", lambda: api.get(location + "-unknown")),
        ("empty upload", lambda: api.shrink(b"")),
        ("non-image upload", lambda: api.shrink(images.image("text.txt"))),
        (
            "invalid JSON command",
            lambda: host_http.post(
                location,
                content=b"{not json",
                headers={**api.target.auth, "Content-Type": "application/json"},
            ),
        ),
        ("unknown resize method", lambda: api.command(location, {"resize": {"method": "stretch", "width": 10}})),
    ]
    problems = []
    seen = 0
    for what, send in probes:
        response = send()
        if response.status_code < 400:
            continue  # whether it should have failed is another rule's business
        seen += 1
        body = json_body(response)
        if not isinstance(body, dict):
            problems.append(f"{what}: {response.status_code} body is not a JSON object")
            continue
        for name in ("error", "message"):
            if not isinstance(body.get(name), str) or not body[name].strip():
                problems.append(f"{what}: {response.status_code} body has no string `{name}`")
    expect(seen, "none of the error probes produced an error answer")
    if problems:
        fail("; ".join(problems))
    observe(f"{seen} error answer(s) of {len(probes)} probes: each a JSON object with string error and message")


@dataclass
class PlainAnswer:
    """An HTTP answer to the plain-TCP probe."""

    status_line: str
    status: int  # 0 when the status line has no numeric code
    headers: dict[str, str]

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == name), "")


def _plain_http_exchange(
    redactor: Redactor, host: str, port: int, url: str, headers: dict[str, str], body: bytes, method: str = "POST"
) -> PlainAnswer | None:
    """Send ``method`` with ``body`` to ``url`` over plain TCP and record the exchange as evidence; the parsed
    answer, or None when nothing HTTP-like came back."""
    target = urlsplit(url)
    head = f"{method} {target.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    started = time.monotonic()
    answer = b""
    error = None
    try:
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.settimeout(5)
            sock.sendall(head.encode() + body)
            # Bounded in size and in time (a target dripping its answer a byte at a time holds no run).
            while len(answer) < 65536 and time.monotonic() - started < 10 and not _budget.spent():
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    parsed: PlainAnswer | None = None
    response_body = answer
    if answer.startswith(b"HTTP/"):
        raw_head, _, response_body = answer.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        code = lines[0].split()[1] if len(lines[0].split()) > 1 else ""
        fields = (line.split(":", 1) for line in lines[1:] if ":" in line)
        parsed = PlainAnswer(lines[0], int(code) if code.isdigit() else 0, {k.strip(): v.strip() for k, v in fields})
    elif answer and error is None:
        error = "the answer is not HTTP (e.g. a TLS alert)"
    elif error is None:
        error = "the connection closed without an answer"
    record_exchange(
        redactor,
        method=method,
        url=url,
        status=(parsed.status or None) if parsed else None,
        request_headers=headers,
        request_body=body,
        response_headers=parsed.headers if parsed else {},
        response_body=response_body or None,
        elapsed_s=time.monotonic() - started,
        error=error,
        client="raw socket",
    )
    return parsed


PLAIN = "IMG-TLS-01 (plain HTTP is refused: not served, or redirected to HTTPS without processing)"
TLS01 = attack_table(
    "IMG-TLS-01",
    Attack("POST /shrink (an upload)", f"{PLAIN}; contract compression, Endpoints (POST /shrink)", named=True),
    Attack("GET /output/<id> (a download)", f"{PLAIN}; contract compression, Endpoints (GET /output/<output_id>)"),
    Attack("POST /output/<id> (a resize)", f"{PLAIN}; contract compression, Endpoints (POST /output/<output_id>)"),
)
PLAIN_LISTENER = (
    "an HTTPS target whose host also listens on plain HTTP, or a given plain-HTTP URL",
    "--compression-plain-url or CONFORMANCE_COMPRESSION_PLAIN_URL",
)


def _plain_refused(answer: PlainAnswer | None, where: str) -> str:
    """Fails unless the plain-HTTP answer is none, a refusal, or a redirect to https; the observation otherwise."""
    if answer is None:
        return f"{where}: no HTTP answer (not served)"
    if 200 <= answer.status < 300:
        raise Failure(f"plain HTTP {where} was served: {answer.status_line}")
    if 300 <= answer.status < 400:
        expect(
            answer.header("location").lower().startswith("https://"),
            f"plain HTTP {where} answered {answer.status} without redirecting to https",
        )
    return f"{where}: {answer.status_line!r}"


def _plain_listeners(api: Api, settings: Settings) -> list[str]:
    """Where plain HTTP is tried: the target URL's http:// twin (its host, on its port or 80) and the given
    plain-HTTP URL of the deployment."""
    parts = urlsplit(api.target.base_url)
    listeners = [f"http://{parts.netloc}{parts.path.rstrip('/')}"]
    given = settings.get("compression_plain_url")
    if given and given.rstrip("/") not in listeners:
        listeners.append(given.rstrip("/"))
    return listeners


@alone("reads the account's Compression-Count before and after its operations, which any other check's moves")
@rule("IMG-TLS-01")
def test_plain_http_refused(api: Api, conformance_settings: Settings) -> None:
    parts = urlsplit(api.target.base_url)
    if loopback_run(api.http, api.target.base_url):
        transport_not_judged("plain HTTP refused")
    if parts.scheme == "http":
        fail("the target is configured with a plain-HTTP URL")
    image = images.image("flat.png")
    resize = json.dumps({"resize": {"method": "scale", "width": 50}}).encode()
    base = parts.path.rstrip("/")
    output = urlsplit(api.url(api.upload("flat.png").location)).path
    output = output[len(base) :] if base and output.startswith(base + "/") else output
    cases: dict[str, tuple[str, str, bytes, str]] = {  # case -> (method, path below the base, body, content type)
        "POST /shrink (an upload)": ("POST", "/shrink", image, "application/octet-stream"),
        "GET /output/<id> (a download)": ("GET", output, b"", ""),
        "POST /output/<id> (a resize)": ("POST", output, resize, "application/json"),
    }
    listeners = _plain_listeners(api, conformance_settings)
    run = AttackRun.of("IMG-TLS-01")
    seen: list[str] = []
    heard = False  # some listener answered HTTP: the host listens on plain HTTP
    for case, (method, path, body, content_type) in cases.items():
        with run.attempt(case):
            for listener in listeners:
                plain = urlsplit(listener)
                host, port = plain.hostname or "", plain.port or 80
                headers = {"Host": plain.netloc, "Content-Length": str(len(body)), "Connection": "close"}
                if content_type:
                    headers["Content-Type"] = content_type
                # Credentials go over plain HTTP only on loopback; elsewhere the probe carries none.
                loopback = is_loopback_host(host)
                if loopback:
                    headers.update(api.target.auth)
                before = api.count() if loopback and method == "POST" else None
                url = f"http://{plain.netloc}{plain.path.rstrip('/')}{path}"
                answer = _plain_http_exchange(api.http.redactor, host, port, url, headers, body, method)
                heard = heard or answer is not None
                seen.append(_plain_refused(answer, f"{method} {url}"))
                if before is not None:
                    after = api.count()
                    expect(after == before, f"plain-HTTP {case} was processed: Compression-Count {before} -> {after}")
    observe("plain HTTP answers: " + "; ".join(seen))
    if not heard and not run.problems:
        needs(f"{PLAIN_LISTENER[0]} (nothing answered plain HTTP at {', '.join(listeners)})", PLAIN_LISTENER[1])
    run.conclude()
