"""The ``form`` driver: the login steps over HTTP, with a stdlib HTML form parser."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from conformance.host.http import HostHTTP, note, was_resent
from conformance.host.login.driver import (
    LoginResult,
    _fills_password,
    _is_redirect_target,
    _note_decision,
    _origin,
    _register_callback_secrets,
    _sign_in_problem,
    clear_cookies,
)
from conformance.host.login.page import _plan, form_submission, parse_page
from conformance.host.login.steps import MAX_PAGES, MAX_STEP_REPEATS, Credentials, Decision, LoginSteps, resolve_value


@dataclass
class FormDriver:
    """Declarative steps over HTTP. Stays on the authorization endpoint's origin (plus ``allowed_origins``).

    The pages are fetched by the user's browser (``http.browser``), never by the host's backend: its cookies (the AS
    session) stay there, and a second authorization reuses that session like a browser would, while the backend's
    registration and token requests carry none. A ``deny`` starts from a fresh session (an earlier grant would skip
    the consent page), as does ``fresh_session``.
    """

    http: HostHTTP
    steps: LoginSteps
    credentials: Credentials | None = None
    allowed_origins: tuple[str, ...] = ()
    fresh_session: bool = False

    def login(
        self, authorization_url: str, redirect_uri: str, *, decision: Decision = "approve", state: str | None = None
    ) -> LoginResult:
        fresh = self.fresh_session or decision == "deny"  # an earlier grant would skip the pages this login needs
        if fresh:
            clear_cookies(self.http)
        result = self._walk(authorization_url, redirect_uri, decision)
        if result.callback_url is not None or result.lost_on is None:
            return result
        # The page the login stopped on answered a request sent once more after its connection dropped: the server
        # may have acted on the first copy (node-oidc-provider's resume GET ends its interaction), so the stop is
        # the drop's doing, not the server's answer to the login. A user would start again from the authorization
        # URL; so does the host, once. A second stop stands, whatever it met.
        why = f"the login stopped on the answer to a request sent once more ({result.lost_on}): started again"
        note(why)
        if fresh:
            clear_cookies(self.http)  # as before the first pass, whose session would skip those pages
        again = self._walk(authorization_url, redirect_uri, decision)
        again.visited = [*result.visited, why, *again.visited]
        if again.stopped is not None:
            again.stopped = f"{again.stopped} (started again after {result.lost_on})"
        return again

    def _walk(self, authorization_url: str, redirect_uri: str, decision: Decision) -> LoginResult:
        """One pass through the login's pages, from the authorization URL."""
        credentials = self.credentials
        origins = {_origin(authorization_url), *(_origin(o) for o in self.allowed_origins)}
        result = LoginResult(callback_url=None)
        method, url, data = "GET", authorization_url, None
        page_origin: str | None = None  # the origin of the page whose form is being submitted
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
            if method == "POST" and page_origin is not None:
                # As a browser does (Fetch, "append a request Origin header"): CSRF guards refuse a form POST
                # without it, and refusing it is the server's right, not a defect.
                headers["Origin"] = page_origin
            response = self.http.browser.request(
                method, url, data=data, headers=headers, retry=None, metadata_driven=True
            )
            shown = self.http.redactor.url(url)
            result.visited.append(f"{method} {shown} → {response.status_code}")
            result.final_status, result.final_url = response.status_code, url
            if was_resent(response):  # kept along the redirects that follow it, until the next step's submission
                result.lost_on = f"{method} {shown}"
            if response.is_redirect:
                method, url, data = "GET", urljoin(url, response.headers.get("location", "")), None
                continue
            page = parse_page(url, response.text)
            page_origin = _origin(url)
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
            result.lost_on = None
        result.stopped = f"no redirect to the redirect URI after {MAX_PAGES} pages"
        return result
