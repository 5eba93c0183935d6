"""Login drivers: the user in the loop of the authorization-code flow.

- ``form``: declarative steps (as the OpenID suite's browser configuration): on a page whose URL matches ``match``
  (and that has what ``requires``/``form``/``click`` name), fill fields and submit or click. Executed over HTTP
  with a stdlib HTML form parser, by the user's browser (``HostHTTP.browser``): its cookies live in that client's
  jar, never in the host's backend (which sends registration and token requests without them). Redirects are
  followed within the authorization server's origin until one leads to the ``redirect_uri``: that one is returned,
  never followed.
- ``browser``: the same steps in headless Chromium through Playwright (optional: :class:`BrowserUnavailable` when
  Playwright or Chromium is missing, which a suite turns into a skip).
- ``manual``: print the URL, then wait (bounded) for the callback on the publisher's route.

Credentials come from environment variables named in the steps file (``user_env``, ``password_env``), never from
the command line; values in ``fill`` may be ``{user}``, ``{password}``, ``env:NAME`` or a literal.
"""

from __future__ import annotations

from conformance.core._exceptions import ConfigError
from conformance.host.http import HostHTTP
from conformance.host.login.browser import BrowserDriver, browser_available
from conformance.host.login.driver import LoginDriver, LoginResult, clear_cookies
from conformance.host.login.form import FormDriver
from conformance.host.login.manual import ManualDriver
from conformance.host.login.page import Element, Page, Selector, form_submission, parse_page
from conformance.host.login.steps import (
    BrowserUnavailable,
    Credentials,
    Decision,
    DriverKind,
    LoginError,
    LoginStep,
    LoginSteps,
    MissingCredentials,
)
from conformance.host.publisher import Publisher


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
    "Decision",
    "DriverKind",
    "Element",
    "FormDriver",
    "LoginDriver",
    "LoginError",
    "LoginResult",
    "LoginStep",
    "LoginSteps",
    "ManualDriver",
    "MissingCredentials",
    "Page",
    "Selector",
    "browser_available",
    "clear_cookies",
    "form_submission",
    "make_driver",
    "parse_page",
]
