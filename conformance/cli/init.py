"""``conformance init``: the files a vendor starts from, written once.

- ``conformance.toml``: the settings, commented, with the URLs given and the secrets named (never written);
- ``login_steps.toml``: the login steps, started from the target's real login page (``--login-url``, or the page an
  authorization request for ``--client-id``, or else for the host's CIMD client while its publisher runs
  (``--publisher-certfile``/``--publisher-keyfile``), reaches after discovery from ``--target-url``): its forms and
  fields are listed, the obvious ones filled (user, password), the rest left commented;
- ``conformance-baseline.toml``: an empty baseline of expected failures;
- ``.github/workflows/conformance.yml`` (``--ci github``, the default) or ``conformance.gitlab-ci.yml``
  (``--ci gitlab``, to ``include:``): the CI job (see docs/ci.md).

Idempotent: a file that exists is left alone (and said so) unless ``--force``; a second run changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.core._exceptions import ConformanceError
from conformance.core.targets import API_KEY_OPTION, TARGETS, TOOL_SERVER, suite_rank, suites_of
from conformance.host.login import Element, Page, parse_page

CONFIG_FILE = "conformance.toml"
LOGIN_FILE = "login_steps.toml"
BASELINE_FILE = "conformance-baseline.toml"
CI_FILES = {"github": ".github/workflows/conformance.yml", "gitlab": "conformance.gitlab-ci.yml"}
ACTION_REF = "OWNER/conformance@v1"
# The redirect URI the harness uses for a predefined client (conformance/suites/_linking.py): register it once.
PREDEFINED_REDIRECT_URI = (
    "http://127.0.0.1/oauth/callback/conformance"  # the repository that holds action.yml, at a release tag
)

_USER_HINT = re.compile(r"user|login|e-?mail|account|identifier|^id$|^uid$|^name$", re.I)
_FIELD_NAME = re.compile(r"[A-Za-z_][\w.-]*")  # what a login step can name bare (else a selector is needed)
_RANDOM_SEGMENT = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{12,}$|^[A-Za-z0-9_-]{24,}$")  # session or interaction ids
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped (a lone surrogate, which TOML
    cannot hold, becomes U+FFFD)."""
    out = []
    for char in value:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif _UNPRINTABLE.match(char):
            code = 0xFFFD if 0xD800 <= ord(char) <= 0xDFFF else ord(char)
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def comment(value: object, limit: int = 120) -> str:
    """Text from a page made safe for a TOML comment: one line, no control characters."""
    text = " ".join(_UNPRINTABLE.sub(" ", str(value)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the login page ---------------------------------------------------------------------------------------------


@dataclass
class FormSummary:
    index: int
    selector: str | None
    method: str
    action: str
    user: str | None
    password: str | None
    others: list[Element]
    hidden: list[str]
    buttons: list[Element]


def _label(element: Element) -> str:
    name = element.get("name") or element.get("id") or ""
    kind = element.get("type") or element.tag
    return f"{name} ({kind})" if name else f"({kind})"


def summarize_forms(page: Page) -> list[FormSummary]:
    """Each form of the page: what a login step would fill, what it would leave, what it would click."""
    forms = []
    for index, form in enumerate(page.forms):
        fields = [e for e in page.elements if e.form == index]
        inputs = [e for e in fields if e.tag in ("input", "select", "textarea") and e.get("name")]
        hidden = [str(e.get("name")) for e in inputs if (e.get("type") or "").lower() == "hidden"]
        visible = [
            e
            for e in inputs
            if (e.get("type") or "text").lower() not in ("hidden", "submit", "image", "button", "reset")
        ]
        password = next((e for e in visible if (e.get("type") or "").lower() == "password"), None)
        user = next(
            (
                e
                for e in visible
                if e is not password
                and (e.get("type") or "text").lower() in ("text", "email", "tel", "")
                and (
                    (e.get("type") or "").lower() == "email"
                    or _USER_HINT.search(e.get("name") or "")
                    or (e.get("autocomplete") or "").lower() in ("username", "email")
                )
            ),
            None,
        )
        buttons = [
            e
            for e in fields
            if (e.tag == "button" and (e.get("type") or "submit").lower() == "submit")
            or (e.tag == "input" and (e.get("type") or "").lower() in ("submit", "image"))
        ]
        ident = form.get("id")
        forms.append(
            FormSummary(
                index=index,
                selector=f"form#{ident}" if ident and _FIELD_NAME.fullmatch(ident) else None,
                method=(form.get("method") or "get").upper(),
                action=form.get("action") or "",
                user=user.get("name") if user is not None else None,
                password=password.get("name") if password is not None else None,
                others=[e for e in visible if e is not user and e is not password],
                hidden=hidden,
                buttons=buttons,
            )
        )
    return forms


def match_pattern(url: str) -> str:
    """A ``match`` regex for the page's path, with session-like segments (``/interaction/3f9c…``) generalized."""
    path = urlsplit(url).path or "/"
    parts = ["[^/?#]+" if _RANDOM_SEGMENT.match(p) else re.escape(p) for p in path.split("/")]
    return "/".join(parts)


def _fill_line(form: FormSummary) -> tuple[str, list[str]]:
    fill: list[str] = []
    notes: list[str] = []
    for name, value in ((form.user, "{user}"), (form.password, "{password}")):
        if name is None:
            continue
        if _FIELD_NAME.fullmatch(name):
            fill.append(f"{toml_string(name)} = {toml_string(value)}")
        else:  # a name a bare key cannot address: the step must use a selector, left to the vendor
            notes.append(f"# the field {comment(name)!r} ({value}) needs a selector as fill key, e.g. input[type=text]")
    return ", ".join(fill), notes


def login_steps_from_page(page: Page, source_url: str) -> str:
    """login_steps.toml text for ``page``: the password form filled, every other form and field commented."""
    forms = summarize_forms(page)
    lines = [
        "# Login and consent steps for the form and browser login drivers (option login_steps).",
        f"# Started by `conformance init` from {comment(source_url)}",
        f"# page title: {comment(page.title) or '(none)'}; {len(forms)} form(s) found.",
        "#",
        "# On each page the driver takes the first step whose `match` (a regex searched in the URL) and fields fit;",
        '# it fills `fill` and clicks `click` or submits the form. "{user}" and "{password}" come from the',
        "# environment variables below (never a file or the command line); hidden fields are sent as the page has",
        "# them. Check each step, then run once with --login-driver browser if the page needs JavaScript.",
        "",
        'user_env = "CONFORMANCE_TEST_USER"',
        'password_env = "CONFORMANCE_TEST_PASSWORD"',
    ]
    login = next((f for f in forms if f.password is not None), None)
    pattern = match_pattern(page.url)
    for form in forms:
        lines.append("")
        where = f"{form.method} {comment(form.action) or '(this page)'}"
        lines.append(f"# form {form.index + 1}: {where}")
        for element in form.others:
            lines.append(f"#   field {comment(_label(element))}: not filled")
        if form.hidden:
            lines.append(f"#   hidden (sent as is): {comment(', '.join(form.hidden))}")
        for button in form.buttons:
            label = comment(button.text or button.get("value") or "")
            lines.append(f"#   button {comment(_label(button))}{f': {label}' if label else ''}")
        fill, notes = _fill_line(form) if form is login else ("", [])
        lines.extend(notes)
        body = [
            "[[steps]]",
            f"name = {toml_string('login' if form is login else f'form {form.index + 1}')}",
            f"match = {toml_string(pattern)}",
        ]
        if form.selector:
            body.append(f"form = {toml_string(form.selector)}")
        if fill:
            body.append(f"fill = {{ {fill} }}")
        if len(form.buttons) > 1:
            body.append(f"# click = {toml_string(_click(form.buttons[0]))}  # which button: several submit the form")
        if form is login and (fill or form.selector):
            lines.extend(body)
        else:  # not obviously part of the login: left for the vendor to enable
            lines.extend(f"# {line}" for line in body)
    if login is None:
        lines += ["", "# No form with a password field was found on this page: write the login step by hand."]
    lines += [
        "",
        "# Consent, when the authorization server asks for it (decision limits a step to approving or denying):",
        "# [[steps]]",
        '# name = "approve consent"',
        '# match = "/consent"',
        '# decision = "approve"',
        '# click = "button[value=approve]"',
    ]
    return "\n".join(lines) + "\n"


def _click(button: Element) -> str:
    ident, name, value = button.get("id"), button.get("name"), button.get("value")
    if ident and _FIELD_NAME.fullmatch(ident):
        return f"{button.tag}#{ident}"
    parts = "".join(
        f"[{attr}={text}]" for attr, text in (("name", name), ("value", value)) if text and _FIELD_NAME.fullmatch(text)
    )
    return f"{button.tag}{parts or '[type=submit]'}"


FALLBACK_LOGIN = """# Login and consent steps (option login_steps). Written by `conformance init` without a login
# page. To start from your page's forms, run `conformance init --force` again with one of:
#   --login-url URL        the authorization server's sign-in page, as a browser reaches it;
#   --target-url URL --client-id ID   a predefined client: its authorization request leads to the page;
#   --target-url URL --publisher-certfile F --publisher-keyfile K   no predefined client: the host identifies
#       itself by its client metadata document URL (CIMD), which exists only while the harness's publisher serves
#       it; the authorization server must trust that certificate and reach 127.0.0.1 (as in a run).
# Or edit the steps below.
# The bundled steps (conformance/suites/auth/login_steps.toml) fit the reference IdP.

user_env = "CONFORMANCE_TEST_USER"
password_env = "CONFORMANCE_TEST_PASSWORD"

[[steps]]
name = "login"
match = "/login"
fill = { username = "{user}", password = "{password}" }

# [[steps]]
# name = "approve consent"
# match = "/consent"
# decision = "approve"
# click = "button[value=approve]"
"""


def _client(allow_insecure_loopback: bool, ca_bundle: str | None, target_url: str | None = None) -> Any:
    from conformance.config import resolve
    from conformance.host.http import HostHTTP

    settings = resolve(
        cli={
            "allow_insecure_loopback": allow_insecure_loopback or None,
            "ca_bundle": ca_bundle,
            "target_url": target_url,
        },
        env={},  # init needs no secret: a clean environment keeps CI variables out of these requests
    )
    return HostHTTP.from_settings(settings)


def _page_of(response: Any, what: str) -> Page:
    if response.status_code >= 400:  # the page's own words say why (an unknown client, a redirect not registered)
        said = (
            parse_page(str(response.url), response.text).summary()
            if "html" in response.headers.get("content-type", "")
            else " ".join(response.text.split())[:200]
        )
        raise ConformanceError(f"init: {what} answered {response.status_code}" + (f": {said}" if said else ""))
    if "html" not in response.headers.get("content-type", "html").lower():
        raise ConformanceError(f"init: {what} is not HTML ({response.headers.get('content-type')})")
    return parse_page(str(response.url), response.text)


def fetch_login_page(url: str, *, allow_insecure_loopback: bool, ca_bundle: str | None) -> Page:
    """The login page as the harness sees it: the host's HTTP client, its guard, redirects followed."""
    with _client(allow_insecure_loopback, ca_bundle) as http:
        response = http.browser.get(url, follow_redirects=True, headers={"Accept": "text/html"})
    return _page_of(response, f"the login page {url}")


def login_page_via_authorization(
    target_url: str, client_id: str, redirect_uri: str, *, allow_insecure_loopback: bool, ca_bundle: str | None
) -> tuple[str, Page]:
    """The login page the target's authorization server shows a user: discovery as a host does it (PRM, AS
    metadata), then an authorization request for the predefined client, redirects followed to the page."""
    from conformance.core._exceptions import InvalidResponse, TargetError
    from conformance.host.asmeta import discover_as_metadata
    from conformance.host.discovery import discover_prm
    from conformance.host.oauth import new_pkce

    with _client(allow_insecure_loopback, ca_bundle, target_url) as http:
        try:
            servers = discover_prm(http, target_url).document.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise ConformanceError("init: the protected resource metadata lists no authorization_servers")
            endpoint = discover_as_metadata(http, servers[0]).document.get("authorization_endpoint")
            if not isinstance(endpoint, str) or not endpoint:
                raise ConformanceError("init: the authorization server metadata has no authorization_endpoint")
            params = {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "state": "conformance-init",
                "code_challenge": new_pkce().challenge,
                "code_challenge_method": "S256",
                "resource": target_url,
            }
            # The user's browser follows the authorization request to the page (and keeps its session cookies).
            response = http.browser.get(
                endpoint, params=params, follow_redirects=True, metadata_driven=True, headers={"Accept": "text/html"}
            )
        except InvalidResponse as exc:
            raise ConformanceError(f"init: discovery: {exc.message}") from None
        except TargetError as exc:
            raise ConformanceError(f"init: the authorization request did not reach a login page: {exc}") from None
    return endpoint, _page_of(response, f"the authorization request to {endpoint}")


def login_page_via_cimd(
    target_url: str, certfile: str, keyfile: str, *, allow_insecure_loopback: bool, ca_bundle: str | None
) -> tuple[str, Page]:
    """Without a predefined client the host identifies itself by its client ID metadata document URL, which exists
    only while the harness's publisher serves it: the publisher runs (as in a run, on a free port) while the
    authorization request names that URL as the client, so the authorization server can fetch it."""
    from conformance.host.publisher import Publisher

    if not Path(certfile).is_file() or not Path(keyfile).is_file():
        raise ConformanceError(f"init: the publisher certificate {certfile} or key {keyfile} does not exist")
    with Publisher(certfile=certfile, keyfile=keyfile, record_evidence=False) as publisher:
        identity = publisher.identity
        assert identity is not None
        return login_page_via_authorization(
            target_url,
            identity.stable_document_url,
            identity.redirect_uri(),
            allow_insecure_loopback=allow_insecure_loopback,
            ca_bundle=ca_bundle,
        )


# -- the other files ---------------------------------------------------------------------------------------------


def _target_lines(urls: Mapping[str, str | None]) -> str:
    """One line a target kind of the table: its URL setting (the given URL, else a commented example) and the
    suites it runs."""
    lines = []
    for kind in TARGETS.values():
        value = urls.get(kind.url_setting)
        line = f"{kind.url_setting} = {toml_string(value or kind.example_url)}"
        line = line if value else f"# {line}"
        suites = sorted(suites_of(kind.name), key=suite_rank)
        lines.append(f"{line:<52} # suite{'s' if len(suites) > 1 else ''} {', '.join(suites)}")
    return "\n".join(lines)


def config_text(urls: Mapping[str, str | None], ci: str, client_id: str | None = None) -> str:
    def setting(name: str, value: str | None, example: str) -> str:
        return f"{name} = {toml_string(value)}" if value else f"# {name} = {toml_string(example)}"

    keys = ", ".join(API_KEY_OPTION.values())
    return f"""# conformance.toml: the harness's settings (pytest reads it from the directory it runs in).
# Precedence: command line > CONFORMANCE_* environment variables > this file > pyproject [tool.conformance].
# `conformance rules` lists the rules; `pytest --help` lists every option under "conformance".

# The services to certify; a suite runs when its target is set.
{_target_lines(urls)}
# suite = ["auth", "platform"]                      # default: every suite

# Secrets never go in this file: set them in the environment (CI secrets), e.g.
#   {keys},
#   CONFORMANCE_TEST_USER / CONFORMANCE_TEST_PASSWORD (the test account the login steps sign in with),
#   CONFORMANCE_CLIENT_SECRET (a predefined OAuth client).

# How the host signs in at the authorization server.
login_driver = "form"                                # form, browser (headless Chromium) or manual
login_steps = {toml_string(LOGIN_FILE)}
# client_registration = "auto"                       # auto, cimd, dcr or predefined
{setting("client_id", client_id, "...")}                                  # a predefined client

# Rules known to fail, accepted until fixed (an entry that passes again fails the run as stale).
expected_failures = {toml_string(BASELINE_FILE)}

report_dir = "reports"                               # report.json, report.html, report.har, junit.xml
# strict = true                                      # SHOULD rules fail the run too
# allow_insecure_loopback = true                     # http:// and self-signed TLS on 127.0.0.1 only (local runs)

# CI: {CI_FILES.get(ci, "none written")} (see docs/ci.md in the harness).
"""


BASELINE_TEXT = """# Expected failures: rules known to fail, accepted until fixed (see `conformance rules`).
# A listed rule that passes again fails the run as stale, so this list only ever shrinks.

expected_failures = []

# [[expected]]
# rule = "CAMP-14"
# target = "platform"                                # optional: only on this target
# reason = "conflict hook not available on staging"
"""


def github_workflow(urls: Mapping[str, str | None]) -> str:
    inputs = [
        f"          {kind.input}: {urls[kind.url_setting]}" for kind in TARGETS.values() if urls.get(kind.url_setting)
    ]
    with_block = "\n".join(["          config: conformance.toml", *inputs])
    keys = "".join(f"\n          {env}: ${{{{ secrets.{env} }}}}" for env in API_KEY_OPTION.values())
    return f"""# Certify on every push to main and on demand; see docs/ci.md of the conformance harness.
name: conformance
on:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read
  id-token: write      # attest the report (Sigstore certificate for this workflow)
  attestations: write

jobs:
  certify:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: conformance
        uses: {ACTION_REF}
        env:  # repository secrets (Settings > Secrets and variables > Actions){keys}
          CONFORMANCE_TEST_USER: ${{{{ secrets.CONFORMANCE_TEST_USER }}}}
          CONFORMANCE_TEST_PASSWORD: ${{{{ secrets.CONFORMANCE_TEST_PASSWORD }}}}
        with:
{with_block}
      - name: Attest the report
        if: always() && steps.conformance.outputs.report != ''
        uses: actions/attest-build-provenance@v2
        with:
          subject-path: reports/report.json
"""


GITLAB_JOB = """# Include from .gitlab-ci.yml (include: conformance.gitlab-ci.yml); see docs/ci.md of the harness.
# Secrets: masked, protected CI/CD variables (CONFORMANCE_PLATFORM_API_KEY, CONFORMANCE_TEST_PASSWORD, ...).
conformance:
  image: python:3.12
  variables:
    RUNNER_GENERATE_ARTIFACTS_METADATA: "true"
  script:
    - pip install "conformance @ git+https://github.com/OWNER/conformance@v1"
    - python -m pytest -p no:cacheprovider --conformance-config conformance.toml || code=$?
    - conformance summary reports/report.json --format text
    - exit ${code:-0}
  artifacts:
    when: always
    paths: [reports/]
    reports:
      junit: reports/junit.xml
"""


# -- writing -----------------------------------------------------------------------------------------------------


def write_file(path: Path, text: str, *, force: bool) -> str:
    """Write unless the file exists (``force`` overwrites); say what happened."""
    if path.exists() and not force:
        same = path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text
        return "unchanged" if same else "kept (exists; --force overwrites)"
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    path.write_text(text, encoding="utf-8")
    return "overwritten" if existed else "written"


def run_init(
    directory: Path,
    *,
    urls: Mapping[str, str | None],
    login_url: str | None,
    ci: str,
    client_id: str | None = None,
    redirect_uri: str = PREDEFINED_REDIRECT_URI,
    publisher_certfile: str | None = None,
    publisher_keyfile: str | None = None,
    force: bool,
    allow_insecure_loopback: bool,
    ca_bundle: str | None,
) -> list[tuple[str, str]]:
    """Write the files; return (path, what happened) for each. The login page is read first, so that a page that
    cannot be read leaves nothing half-written. ``urls``: the targets' URLs by setting name (``target_url``, ...)."""
    target_url = urls.get(TOOL_SERVER.url_setting)  # the login is reached through the tool server's discovery
    login_path = directory / LOGIN_FILE
    login_text: str | None = None  # None: the file exists and stays
    if force or not login_path.exists():
        if login_url:
            page = fetch_login_page(login_url, allow_insecure_loopback=allow_insecure_loopback, ca_bundle=ca_bundle)
            login_text = login_steps_from_page(page, login_url)
        elif target_url and client_id:
            insecure = allow_insecure_loopback
            endpoint, page = login_page_via_authorization(
                target_url, client_id, redirect_uri, allow_insecure_loopback=insecure, ca_bundle=ca_bundle
            )
            login_text = login_steps_from_page(page, f"an authorization request to {endpoint}")
        elif target_url and publisher_certfile and publisher_keyfile:
            insecure = allow_insecure_loopback
            endpoint, page = login_page_via_cimd(
                target_url, publisher_certfile, publisher_keyfile, allow_insecure_loopback=insecure, ca_bundle=ca_bundle
            )
            login_text = login_steps_from_page(page, f"an authorization request to {endpoint} (CIMD client)")
        else:
            login_text = FALLBACK_LOGIN
    plans: list[tuple[Path, str | None]] = [
        (directory / CONFIG_FILE, config_text(urls, ci, client_id)),
        (login_path, login_text),
        (directory / BASELINE_FILE, BASELINE_TEXT),
    ]
    if ci == "github":
        plans.append((directory / CI_FILES["github"], github_workflow(urls)))
    elif ci == "gitlab":
        plans.append((directory / CI_FILES["gitlab"], GITLAB_JOB))
    done: list[tuple[str, str]] = []
    for path, text in plans:
        what = "kept (exists; --force overwrites)" if text is None else write_file(path, text, force=force)
        done.append((str(path), what))
    return done
