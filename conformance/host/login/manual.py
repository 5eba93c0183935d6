"""The ``manual`` driver: a person follows the URL; the callback arrives on the publisher's route."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.host.login.driver import LoginResult
from conformance.host.login.steps import Decision
from conformance.host.publisher import Publisher


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
