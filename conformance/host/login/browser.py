"""The ``browser`` driver: the login steps in headless Chromium through Playwright (optional)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.host.login.driver import (
    LoginResult,
    _fills_password,
    _is_redirect_target,
    _note_decision,
    _sign_in_problem,
)
from conformance.host.login.page import Page, _Plan, _plan, parse_page
from conformance.host.login.steps import (
    MAX_STEP_REPEATS,
    BrowserUnavailable,
    Credentials,
    Decision,
    LoginSteps,
    resolve_value,
)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


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
