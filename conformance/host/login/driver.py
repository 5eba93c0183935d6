"""What a login driver returns, the driver protocol, and what the drivers share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from conformance.host.http import HostHTTP
from conformance.host.login.page import Page, _Plan
from conformance.host.login.steps import Decision, LoginError, LoginSteps


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
    # The last page was the answer to a request sent once more after its connection dropped ("METHOD URL").
    lost_on: str | None = None

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
