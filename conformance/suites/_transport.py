"""Transport-only requirements (HTTPS of metadata, ``resource``, AS endpoints; IMG-TLS-01) on a loopback run.

With ``--allow-insecure-loopback`` a vendor certifies a development server on 127.0.0.1 as its README runs it (plain
HTTP, or TLS nobody verifies). The transport of a plain-HTTP loopback URL is then not judged: such a requirement is
``skipped`` with the message ``transport not judged: loopback run``, every other rule is decided, and the run's
verdict is at best PASSED LOCALLY (``report.model.verdict``), never ACCEPTED, since TLS went unverified too.
"""

from __future__ import annotations

from typing import NoReturn
from urllib.parse import urlsplit

from conformance.host import is_loopback_host
from conformance.host.http import HostHTTP
from conformance.verdict._verdicts import NeedsUnmet

TRANSPORT_NOT_JUDGED = "transport not judged: loopback run"
DEPLOYMENT = "the deployment served over HTTPS (a run without --allow-insecure-loopback)"


def loopback_run(http: HostHTTP, url: str | None) -> bool:
    """True when ``url`` is plain HTTP on loopback and the run allows insecure loopback: its transport is not
    judged. An https URL is still judged for what it is (HTTPS); the verdict stays PASSED LOCALLY either way."""
    parts = urlsplit(url or "")
    return (
        bool(http.guard.allow_insecure_loopback) and parts.scheme == "http" and is_loopback_host(parts.hostname or "")
    )


def transport_not_judged(what: str, held: str = "") -> NoReturn:
    """Skip the transport part of a rule; ``held`` says what the rest of the rule showed."""
    exc = NeedsUnmet(DEPLOYMENT, "--target-url of the HTTPS deployment")
    exc.msg = f"{TRANSPORT_NOT_JUDGED} ({what})" + (f"; {held}" if held else "")
    raise exc


def judge_https(http: HostHTTP, url: str, what: str, *, held: str = "") -> bool:
    """``True`` when ``url`` is HTTPS (the caller may pass); on a loopback run its transport is not judged (skip);
    ``False`` when it is not HTTPS and must be judged (the caller fails)."""
    if loopback_run(http, url):
        transport_not_judged(what, held)
    return urlsplit(url).scheme == "https"
