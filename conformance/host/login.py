"""Login drivers: the user in the loop of the authorization-code flow.

- ``form``: declarative steps (as the OpenID suite's browser configuration): on a page whose URL matches ``match``
  (and that has what ``requires``/``form``/``click`` name), fill fields and submit or click. Executed over HTTP
  with a stdlib HTML form parser; cookies live in the HTTP client's jar. Redirects are followed within the
  authorization server's origin until one leads to the ``redirect_uri``: that one is returned, never followed.
- ``browser``: the same steps in headless Chromium through Playwright (optional: :class:`BrowserUnavailable` when
  Playwright or Chromium is missing, which a suite turns into a skip).
- ``manual``: print the URL, then wait (bounded) for the callback on the publisher's route.

Credentials come from environment variables named in the steps file (``user_env``, ``password_env``), never from
the command line; values in ``fill`` may be ``{user}``, ``{password}``, ``env:NAME`` or a literal.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from conformance._exceptions import ConfigError, TargetError
from conformance.host.http import HostHTTP
from conformance.host.publisher import Publisher

Decision = Literal["approve", "deny"]
DriverKind = Literal["form", "browser", "manual"]
DEFAULT_USER_ENV = "CONFORMANCE_TEST_USER"
DEFAULT_PASSWORD_ENV = "CONFORMANCE_TEST_PASSWORD"
MAX_PAGES = 25
MAX_STEP_REPEATS = 3
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


class LoginError(TargetError):
    """The login could not reach the redirect URI: the page had no applicable step, a step repeated, the flow left
    the authorization server, or the wait ran out. The message says where it stopped."""


class MissingCredentials(ConfigError):
    """A test credential's environment variable is not set."""

    def __init__(self, variable: str) -> None:
        super().__init__(f"the test account credential variable {variable} is not set")
        self.variable = variable


class BrowserUnavailable(ConfigError):
    """Playwright or Chromium is not installed."""


# -- steps -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str

    @classmethod
    def from_env(cls, user_env: str = DEFAULT_USER_ENV, password_env: str = DEFAULT_PASSWORD_ENV) -> Credentials:
        values = []
        for name in (user_env, password_env):
            value = os.environ.get(name)
            if not value:
                raise MissingCredentials(name)
            values.append(value)
        return cls(values[0], values[1])


@dataclass(frozen=True)
class LoginStep:
    name: str
    match: str = ".*"  # regex searched in the page URL
    form: str | None = None  # selector of the form to use (default: the form holding the fill fields / click)
    fill: dict[str, str] = field(default_factory=dict)  # field (name, id or selector) → value template
    click: str | None = None  # a submit button or input in the form, or a link, to activate
    submit: bool = True  # without click: submit the form (its first submit button counts as clicked)
    requires: str | None = None  # a selector that must match on the page
    contains: str | None = None  # text that must be in the page
    decision: Decision | None = None  # only when approving / only when denying; None = always

    @classmethod
    def from_dict(cls, data: dict[str, Any], index: int) -> LoginStep:
        if not isinstance(data, dict):
            raise ConfigError(f"login step {index + 1}: expected a [[steps]] table, got {data!r:.40}")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"login step {index + 1}: unknown keys {sorted(unknown)}")
        if data.get("decision") not in (None, "approve", "deny"):
            raise ConfigError(f"login step {index + 1}: decision must be approve or deny")
        wrong = [k for k in ("name", "match", "form", "click", "requires", "contains") if k in data]
        wrong = [k for k in wrong if not isinstance(data[k], str)]
        if wrong or not isinstance(data.get("submit", True), bool):
            raise ConfigError(f"login step {index + 1}: {', '.join(wrong) or 'submit'} has the wrong type")
        fill = data.get("fill", {})
        if not isinstance(fill, dict) or not all(isinstance(v, str) for v in fill.values()):
            raise ConfigError(f"login step {index + 1}: fill must be a table of strings")
        try:
            re.compile(str(data.get("match", ".*")))
        except re.error as exc:
            raise ConfigError(f"login step {index + 1}: bad match regex ({exc})") from None
        return cls(**{**data, "name": str(data.get("name") or f"step {index + 1}"), "fill": dict(fill)})


@dataclass(frozen=True)
class LoginSteps:
    steps: tuple[LoginStep, ...]
    user_env: str = DEFAULT_USER_ENV
    password_env: str = DEFAULT_PASSWORD_ENV

    @classmethod
    def parse(cls, data: dict[str, Any], origin: str = "login steps") -> LoginSteps:
        raw = data.get("steps")
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"{origin}: needs a non-empty [[steps]] array")
        for key in ("user_env", "password_env"):
            if key in data and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(data[key])):
                raise ConfigError(f"{origin}: {key} must name an environment variable")
        return cls(
            steps=tuple(LoginStep.from_dict(s, i) for i, s in enumerate(raw)),
            user_env=str(data.get("user_env", DEFAULT_USER_ENV)),
            password_env=str(data.get("password_env", DEFAULT_PASSWORD_ENV)),
        )

    @classmethod
    def load(cls, path: Path | str) -> LoginSteps:
        try:
            data = tomllib.loads(Path(path).read_text("utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read login steps {path}: {exc}") from None
        return cls.parse(data, str(path))

    @classmethod
    def default(cls) -> LoginSteps:
        """The bundled steps for the reference IdP (``conformance/suites/auth/login_steps.toml``)."""
        text = resources.files("conformance").joinpath("suites", "auth", "login_steps.toml").read_text("utf-8")
        return cls.parse(tomllib.loads(text), "bundled login_steps.toml")

    def credentials(self) -> Credentials:
        return Credentials.from_env(self.user_env, self.password_env)


def resolve_value(template: str, credentials: Credentials | None) -> str:
    if template in ("{user}", "{password}"):
        if credentials is None:
            raise MissingCredentials(DEFAULT_USER_ENV if template == "{user}" else DEFAULT_PASSWORD_ENV)
        return credentials.user if template == "{user}" else credentials.password
    if template.startswith("env:"):
        name = template[4:]
        value = os.environ.get(name)
        if value is None:
            raise MissingCredentials(name)
        return value
    return template


# -- HTML model and css-ish selectors ---------------------------------------------------------------------------


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    form: int | None  # index of the owning form
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)


@dataclass
class Page:
    url: str
    title: str = ""
    forms: list[Element] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)  # inputs, buttons, selects, textareas, links
    text: str = ""

    def summary(self, limit: int = 200) -> str:
        text = re.sub(r"\s+", " ", self.text).strip()
        return (f"{self.title}: " if self.title else "") + text[:limit]


_FIELD_TAGS = {"input", "button", "select", "textarea", "option"}
_NO_ELEMENT = {"html", "head", "body", "meta", "link", "br", "title", "script", "style"}


class _PageParser(HTMLParser):
    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page(url=url)
        self._form: int | None = None
        self._open: list[Element] = []  # elements collecting text (button, a, textarea, option)
        self._select: Element | None = None
        self._in_title = False
        self._skip = 0  # inside script/style
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v if v is not None else "") for k, v in attrs}
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "form":
            self.page.forms.append(Element("form", values, None))
            self._form = len(self.page.forms) - 1
        elif tag not in _NO_ELEMENT:
            owner = self._form
            if "form" in values and tag != "a":  # HTML5 form="id" association
                owner = next((i for i, f in enumerate(self.page.forms) if f.get("id") == values["form"]), owner)
            element = Element(tag, values, owner)
            if tag == "option" and self._select is not None:
                element.attrs.setdefault("data-select", self._select.get("name") or "")
            self.page.elements.append(element)
            if tag == "select":
                self._select = element
            if tag in ("button", "a", "textarea", "option"):
                self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif self._open and self._open[-1].tag == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.page.title += data.strip()
            return
        self._text.append(data)
        for element in self._open:
            element.text += data

    def close(self) -> None:
        super().close()
        self.page.text = " ".join(self._text)


def parse_page(url: str, html: str) -> Page:
    parser = _PageParser(url)
    parser.feed(html)
    parser.close()
    return parser.page


_SIMPLE = re.compile(r"^(?P<tag>[a-zA-Z][a-zA-Z0-9-]*)?(?P<rest>(?:#[\w.:-]+|\.[\w-]+|\[[^\]]+\])*)$")
_PART = re.compile(r"#([\w.:-]+)|\.([\w-]+)|\[\s*([\w-]+)\s*(?:([~^$*|]?=)\s*(\"[^\"]*\"|'[^']*'|[^\]]*?))?\s*\]")


@dataclass(frozen=True)
class Selector:
    """A compound CSS selector: ``tag#id.class[attr][attr=value][attr^=v][attr$=v][attr*=v]``, optionally
    preceded by a form selector and a space (``#consent button[value=approve]``)."""

    tag: str | None
    conditions: tuple[tuple[str, str | None, str | None], ...]  # (attribute, operator, value)
    scope: Selector | None = None

    @classmethod
    def parse(cls, text: str) -> Selector:
        parts = text.strip().split()
        if not parts or len(parts) > 2:
            raise ConfigError(f"selector {text!r}: use one compound selector, optionally after a form selector")
        scope = cls.parse(parts[0]) if len(parts) == 2 else None
        match = _SIMPLE.match(parts[-1])
        if not match:
            raise ConfigError(f"selector {text!r} is not supported (tag#id.class[attr=value] only)")
        conditions: list[tuple[str, str | None, str | None]] = []
        for part in _PART.finditer(match.group("rest") or ""):
            ident, klass, attr, op, value = part.groups()
            if ident is not None:
                conditions.append(("id", "=", ident))
            elif klass is not None:
                conditions.append(("class", "~=", klass))
            else:
                conditions.append((attr.lower(), op, value.strip("\"'") if value is not None else None))
        return cls(tag=(match.group("tag") or "").lower() or None, conditions=tuple(conditions), scope=scope)

    def matches(self, element: Element) -> bool:
        if self.tag and element.tag != self.tag:
            return False
        for attr, op, value in self.conditions:
            actual = element.get(attr)
            if actual is None:
                return False
            if op is None or value is None:
                continue
            ok = {
                "=": actual == value,
                "~=": value in actual.split(),
                "^=": actual.startswith(value),
                "$=": actual.endswith(value),
                "*=": value in actual,
                "|=": actual == value or actual.startswith(value + "-"),
            }[op]
            if not ok:
                return False
        return True

    def select(self, page: Page) -> Iterator[Element]:
        allowed: set[int] | None = None
        if self.scope is not None:
            allowed = {i for i, f in enumerate(page.forms) if self.scope.matches(f)}
        for element in [*page.forms, *page.elements]:
            if allowed is not None and (element.form not in allowed or element.tag == "form"):
                continue
            if self.matches(element):
                yield element

    def css(self) -> str:
        """The same selector for a browser."""
        own = self.tag or ""
        for attr, op, value in self.conditions:
            if attr == "id" and op == "=":
                own += f"#{value}"
            elif attr == "class":
                own += f".{value}"
            else:
                own += f"[{attr}]" if op is None else f'[{attr}{op}"{value}"]'
        return f"{self.scope.css()} {own or '*'}" if self.scope else own or "*"


def field_selector(key: str) -> list[Selector]:
    """A fill key: a bare word is a field name, else an id; anything else is a selector."""
    if re.fullmatch(r"[A-Za-z_][\w.-]*", key):
        return [Selector(None, (("name", "=", key),)), Selector(None, (("id", "=", key),))]
    return [Selector.parse(key)]


def _first(page: Page, selectors: list[Selector], form: int | None = None) -> Element | None:
    for selector in selectors:
        for element in selector.select(page):
            if element.tag != "form" and (form is None or element.form == form):
                return element
    return None


def _is_submit(element: Element) -> bool:
    kind = (element.get("type") or "").lower()
    return (element.tag == "button" and kind in ("", "submit")) or (
        element.tag == "input" and kind in ("submit", "image")
    )


# -- the plan of one step on one page ---------------------------------------------------------------------------


@dataclass
class _Plan:
    step: LoginStep
    form: int | None
    fields: dict[str, str]  # field name → value
    clicked: Element | None


def _plan(step: LoginStep, page: Page, decision: Decision) -> _Plan | None:
    """How ``step`` applies to ``page``, or None when it does not."""
    if step.decision is not None and step.decision != decision:
        return None
    if not re.search(step.match, page.url):
        return None
    if step.contains is not None and step.contains not in page.text and step.contains not in page.title:
        return None
    if step.requires is not None and not any(True for _ in Selector.parse(step.requires).select(page)):
        return None
    form: int | None = None
    if step.form is not None:
        selector = Selector.parse(step.form)
        indices = [i for i, f in enumerate(page.forms) if selector.matches(f)]
        if not indices:
            return None
        form = indices[0]
    fields: dict[str, str] = {}
    for key in step.fill:
        element = _first(page, field_selector(key), form)
        if element is None or element.form is None:
            return None
        form = element.form if form is None else form
        fields[element.get("name") or key] = step.fill[key]
    clicked: Element | None = None
    if step.click is not None:
        clicked = _first(page, [Selector.parse(step.click)], form)
        if clicked is None:
            return None
        if clicked.tag != "a":
            form = clicked.form
    elif step.submit:
        if form is None:
            if len(page.forms) != 1:
                return None
            form = 0
        clicked = next((e for e in page.elements if e.form == form and _is_submit(e)), None)
    if clicked is not None and clicked.tag != "a" and form is None:
        return None
    return _Plan(step, form, fields, clicked)


def form_submission(page: Page, plan: _Plan, values: dict[str, str]) -> tuple[str, str, dict[str, str] | None]:
    """``(method, url, data)`` for submitting the planned form with ``values`` filled (HTML form data set)."""
    clicked = plan.clicked
    if clicked is not None and clicked.tag == "a":
        return "GET", urljoin(page.url, clicked.get("href") or ""), None
    assert plan.form is not None
    form = page.forms[plan.form]
    data: list[tuple[str, str]] = []
    selects: dict[str, str] = {}
    for element in page.elements:
        if element.form != plan.form:
            continue
        name = element.get("name")
        kind = (element.get("type") or "text").lower()
        if element.tag == "option":
            owner = element.get("data-select") or ""
            if owner and (owner not in selects or "selected" in element.attrs):
                option_value = element.get("value")
                selects[owner] = option_value if option_value is not None else element.text.strip()
            continue
        if element.tag not in _FIELD_TAGS or not name or "disabled" in element.attrs:
            continue
        if element.tag == "input" and kind in ("submit", "image", "button", "reset", "file"):
            if element is clicked and kind == "submit":
                data.append((name, element.get("value") or ""))
            continue
        if element.tag == "button":
            if element is clicked:
                data.append((name, element.get("value") or ""))
            continue
        if element.tag == "input" and kind in ("checkbox", "radio") and "checked" not in element.attrs:
            continue
        if element.tag == "select":
            continue
        value = element.text if element.tag == "textarea" else (element.get("value") or "")
        data.append((name, value))
    data += list(selects.items())
    filled = dict(data)
    filled.update(values)
    method = (form.get("method") or "get").upper()
    action = urljoin(page.url, form.get("action") or page.url)
    if method == "GET":
        parts = urlsplit(action)
        return "GET", urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(filled), "")), None
    return "POST", action, filled


# -- results and the driver protocol ---------------------------------------------------------------------------


@dataclass
class LoginResult:
    """Where the login ended. ``callback_url`` is the redirect to the redirect URI, un-followed."""

    callback_url: str | None
    visited: list[str] = field(default_factory=list)  # "METHOD URL → status" lines (redacted by the caller)
    steps: list[str] = field(default_factory=list)  # names of the steps performed, in order
    stopped: str | None = None  # why it stopped without a callback
    notes: list[str] = field(default_factory=list)  # e.g. consent was never asked, so the decision did not apply
    final_status: int | None = None
    final_url: str | None = None
    # The login stopped at a sign-in page the harness could not get past: its steps do not fit the page, or the page
    # refused the test account. Configuration the user must fix, never the target's failure.
    config_problem: str | None = None

    def require_callback(self) -> str:
        if self.callback_url is None:
            raise LoginError(self.stopped or "the login did not reach the redirect URI")
        return self.callback_url


class LoginDriver(Protocol):
    def login(
        self, authorization_url: str, redirect_uri: str, *, decision: Decision = "approve", state: str | None = None
    ) -> LoginResult: ...


def _is_redirect_target(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _register_callback_secrets(http: HostHTTP, url: str) -> None:
    for name, value in parse_qsl(urlsplit(url).query or urlsplit(url).fragment):
        if name == "code":
            http.redactor.add_secret(value)


def _note_decision(result: LoginResult, steps: LoginSteps, decision: Decision) -> None:
    ran = {s.name for s in steps.steps if s.decision == decision and s.name in result.steps}
    if not ran:
        result.notes.append(f"no {decision} step ran (consent was not asked): the decision did not apply")


def clear_cookies(http: HostHTTP) -> None:
    """Forget the user-agent session (a new user, or a login that must not reuse the AS session)."""
    http.clear_cookies()


def _is_sign_in_page(page: Page) -> bool:
    return any(e.tag == "input" and (e.get("type") or "").lower() == "password" for e in page.elements)


def _fills_password(plan: _Plan) -> bool:
    return any(v == "{password}" for v in plan.fields.values())


def _sign_in_problem(page: Page, url: str, *, submitted: bool) -> str | None:
    """Why a login stuck on ``page`` is the configuration's problem, or None when the page is no sign-in page (an
    error page of the authorization server: the flow's own verdict)."""
    if not _is_sign_in_page(page):
        return None
    if submitted:
        return (
            f"the sign-in page at {url} did not accept the test account ({page.summary(120)}): check the test "
            "account's user and password variables"
        )
    return f"login steps that fit the sign-in page at {url} ({page.summary(120)})"


# -- the form driver -------------------------------------------------------------------------------------------


@dataclass
class FormDriver:
    """Declarative steps over HTTP. Stays on the authorization endpoint's origin (plus ``allowed_origins``).

    Cookies are the HTTP client's: a second authorization reuses the AS session like a browser would. A ``deny``
    starts from a fresh session (an earlier grant would skip the consent page), as does ``fresh_session``.
    """

    http: HostHTTP
    steps: LoginSteps
    credentials: Credentials | None = None
    allowed_origins: tuple[str, ...] = ()
    fresh_session: bool = False

    def login(
        self, authorization_url: str, redirect_uri: str, *, decision: Decision = "approve", state: str | None = None
    ) -> LoginResult:
        if self.fresh_session or decision == "deny":
            clear_cookies(self.http)
        credentials = self.credentials
        origins = {_origin(authorization_url), *(_origin(o) for o in self.allowed_origins)}
        result = LoginResult(callback_url=None)
        method, url, data = "GET", authorization_url, None
        repeats: dict[tuple[str, str], int] = {}
        submitted = False  # the test account's password was sent
        for _ in range(MAX_PAGES):
            if _is_redirect_target(url, redirect_uri):
                _register_callback_secrets(self.http, url)
                result.callback_url = url
                _note_decision(result, self.steps, decision)
                return result
            if _origin(url) not in origins:
                result.stopped = f"the flow left the authorization server for {self.http.redactor.url(url)}"
                return result
            headers = {"Accept": "text/html,application/xhtml+xml"}
            if data is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            response = self.http.request(method, url, data=data, headers=headers, retry=None, metadata_driven=True)
            result.visited.append(f"{method} {self.http.redactor.url(url)} → {response.status_code}")
            result.final_status, result.final_url = response.status_code, url
            if response.is_redirect:
                method, url, data = "GET", urljoin(url, response.headers.get("location", "")), None
                continue
            page = parse_page(url, response.text)
            shown = self.http.redactor.url(url)
            if response.status_code >= 400:
                result.stopped = f"{response.status_code} at {shown}: {page.summary()}"
                result.config_problem = _sign_in_problem(page, shown, submitted=submitted) if submitted else None
                return result
            plan = next((p for s in self.steps.steps if (p := _plan(s, page, decision)) is not None), None)
            if plan is None:
                result.stopped = f"no login step applies to {shown} ({page.summary()})"
                result.config_problem = _sign_in_problem(page, shown, submitted=submitted)
                return result
            key = (plan.step.name, urlsplit(url).path)
            repeats[key] = repeats.get(key, 0) + 1
            if repeats[key] > MAX_STEP_REPEATS:
                result.stopped = f"step {plan.step.name!r} repeated on the same page: {page.summary()}"
                if _fills_password(plan):
                    result.config_problem = _sign_in_problem(page, shown, submitted=True)
                return result
            submitted = submitted or _fills_password(plan)
            if credentials is None and any(v in ("{user}", "{password}") for v in plan.fields.values()):
                credentials = self.steps.credentials()  # read only when a step needs them
            if credentials is not None:
                self.http.redactor.add_secret(credentials.password)
                self.http.redactor.add_secret(credentials.user)
            values = {k: resolve_value(v, credentials) for k, v in plan.fields.items()}
            result.steps.append(plan.step.name)
            method, url, data = form_submission(page, plan, values)
        result.stopped = f"no redirect to the redirect URI after {MAX_PAGES} pages"
        return result


# -- the browser driver ----------------------------------------------------------------------------------------


def browser_available(executable: str = CHROMIUM) -> str | None:
    """None when the browser driver can run, else why not."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'conformance[browser]')"
    if not Path(executable).exists():
        return f"Chromium not found at {executable}"
    return None


@dataclass
class BrowserDriver:
    """The same steps in headless Chromium (Playwright). The redirect to the redirect URI is intercepted, not
    loaded. TLS errors are ignored only when ``ignore_https_errors`` (a private CA the browser does not trust)."""

    steps: LoginSteps
    credentials: Credentials | None = None
    executable: str = CHROMIUM
    timeout_s: float = 30.0
    ignore_https_errors: bool = False
    redact: Callable[[str], str] = field(default=lambda url: url)

    def login(
        self, authorization_url: str, redirect_uri: str, *, decision: Decision = "approve", state: str | None = None
    ) -> LoginResult:
        why = browser_available(self.executable)
        if why:
            raise BrowserUnavailable(why)
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import Request, Route, sync_playwright

        credentials = self.credentials
        if credentials is None and any(
            v in ("{user}", "{password}") for s in self.steps.steps for v in s.fill.values()
        ):
            credentials = self.steps.credentials()
        result = LoginResult(callback_url=None)
        deadline = time.monotonic() + self.timeout_s

        def seen(request: Request) -> None:
            if _is_redirect_target(request.url, redirect_uri) and result.callback_url is None:
                result.callback_url = request.url

        def intercept(route: Route) -> None:
            seen(route.request)
            route.fulfill(status=200, content_type="text/html", body="<p>callback received</p>")

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=self.executable, args=CHROMIUM_ARGS, headless=True)
            try:
                context = browser.new_context(ignore_https_errors=self.ignore_https_errors)
                page = context.new_page()
                page.set_default_timeout(self.timeout_s * 1000)
                # A redirect to the redirect URI is not always routed (Chromium follows it in the network stack):
                # the request event sees it either way, and the route keeps a loaded page from leaving.
                page.on("request", seen)
                page.route(lambda url: _is_redirect_target(url, redirect_uri), intercept)
                try:
                    page.goto(authorization_url, wait_until="domcontentloaded")
                except PlaywrightError as exc:
                    if result.callback_url is None:
                        result.stopped = f"navigation failed: {exc}"
                        return result
                repeats: dict[str, int] = {}
                submitted = False  # the test account's password was sent
                while result.callback_url is None:
                    if time.monotonic() > deadline:
                        result.stopped = f"no redirect to the redirect URI within {self.timeout_s:.0f}s"
                        return result
                    with contextlib.suppress(PlaywrightError):
                        page.wait_for_load_state("domcontentloaded")
                    if result.callback_url is not None:
                        break
                    snapshot = parse_page(page.url, page.content())
                    result.visited.append(f"GET {self.redact(page.url)}")
                    plan = next((p for s in self.steps.steps if (p := _plan(s, snapshot, decision)) is not None), None)
                    shown = self.redact(page.url)
                    if plan is None:
                        result.stopped = f"no login step applies to {shown} ({snapshot.summary()})"
                        result.config_problem = _sign_in_problem(snapshot, shown, submitted=submitted)
                        return result
                    repeats[plan.step.name] = repeats.get(plan.step.name, 0) + 1
                    if repeats[plan.step.name] > MAX_STEP_REPEATS:
                        result.stopped = f"step {plan.step.name!r} repeated: {snapshot.summary()}"
                        if _fills_password(plan):
                            result.config_problem = _sign_in_problem(snapshot, shown, submitted=True)
                        return result
                    submitted = submitted or _fills_password(plan)
                    result.steps.append(plan.step.name)
                    self._perform(page, plan, snapshot, credentials)
                    with contextlib.suppress(PlaywrightError):
                        page.wait_for_load_state("domcontentloaded")
                    if result.callback_url is None:
                        # The click may still be navigating; give the page a moment before reading it again.
                        page.wait_for_timeout(100)
                result.final_url = result.callback_url
                _note_decision(result, self.steps, decision)
                return result
            finally:
                browser.close()

    def _perform(self, page: Any, plan: _Plan, snapshot: Page, credentials: Credentials | None) -> None:
        scope = _form_locator(snapshot, plan.form)
        for name, template in plan.fields.items():
            page.fill(f'{scope} >> [name="{name}"]', resolve_value(template, credentials))
        clicked = plan.clicked
        if clicked is not None:
            conditions = "".join(f'[{a}="{clicked.get(a)}"]' for a in ("id", "name", "value", "href") if clicked.get(a))
            within = f"{scope} >> " if clicked.tag != "a" and plan.form is not None else ""
            page.click(f"{within}{clicked.tag}{conditions} >> nth=0")
        else:
            page.eval_on_selector(scope, "f => f.requestSubmit()")


def _form_locator(page: Page, index: int | None) -> str:
    """A Playwright selector for the form (chained with ``>>`` to reach its fields)."""
    if index is None:
        return "body"
    form = page.forms[index]
    if form.get("id"):
        return f'form[id="{form.get("id")}"]'
    return f"form >> nth={index}"


# -- the manual driver -----------------------------------------------------------------------------------------


def announce(text: str) -> None:
    """Show text to the person at the terminal, past pytest's output capture (which also captures fd 2)."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(text + "\n")
            return
    except OSError:
        pass
    stream = sys.__stderr__ or sys.stderr
    stream.write(text + "\n")
    stream.flush()


@dataclass
class ManualDriver:
    """Print the URL and wait on the publisher's callback route; the redirect URI must be served by it."""

    publisher: Publisher
    timeout_s: float = 300.0
    write: Callable[[str], Any] = announce

    def login(
        self, authorization_url: str, redirect_uri: str, *, decision: Decision = "approve", state: str | None = None
    ) -> LoginResult:
        since = time.time()
        action = "sign in and approve" if decision == "approve" else "sign in and DENY consent"
        self.write(
            f"\nOpen this URL in a browser, {action}; waiting up to {self.timeout_s:.0f}s:\n{authorization_url}\n"
        )
        hit = self.publisher.wait_for_callback(self.timeout_s, since=since, state=state)
        if hit is None:
            return LoginResult(callback_url=None, stopped=f"no callback within {self.timeout_s:.0f}s")
        return LoginResult(callback_url=hit.url, steps=["manual"], final_url=hit.url)


def make_driver(
    kind: DriverKind | str,
    *,
    http: HostHTTP,
    steps: LoginSteps | None = None,
    publisher: Publisher | None = None,
    credentials: Credentials | None = None,
    timeout_s: float = 300.0,
) -> LoginDriver:
    """The driver named by the ``login_driver`` option."""
    if kind == "form":
        return FormDriver(http=http, steps=steps or LoginSteps.default(), credentials=credentials)
    if kind == "browser":
        return BrowserDriver(
            steps=steps or LoginSteps.default(),
            credentials=credentials,
            ignore_https_errors=http.ca_bundle is not None or http.guard.allow_insecure_loopback,
            redact=http.redactor.url,
            timeout_s=min(timeout_s, 60.0),
        )
    if kind == "manual":
        if publisher is None:
            raise ConfigError("the manual login driver needs the publisher (it receives the callback)")
        return ManualDriver(publisher=publisher, timeout_s=timeout_s)
    raise ConfigError(f"unknown login driver {kind!r} (form, browser or manual)")


__all__ = [
    "BrowserDriver",
    "BrowserUnavailable",
    "Credentials",
    "FormDriver",
    "LoginDriver",
    "LoginError",
    "LoginResult",
    "LoginStep",
    "LoginSteps",
    "ManualDriver",
    "MissingCredentials",
    "Selector",
    "browser_available",
    "clear_cookies",
    "make_driver",
    "parse_page",
]
