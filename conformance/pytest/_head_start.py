"""The run's first requests, sent while pytest collects.

Every check of the auth and profile suites waits, through its fixtures, for the same chain: the host's HTTP client,
a connection to the tool server, its protected resource metadata, then its authorization server's metadata. The run
loop starts fixture work early (``core/_early.py``) only once the checks are collected and the first one is set up;
collecting is the harness's own work (imports, hundreds of items) and leaves the network idle. So, in a run that
overlaps bodies (``_overlap.py``), this module starts that chain on a thread as collection begins:

- the host's HTTP client for the run's settings, which the ``host_http`` fixture then takes instead of building one
  (it still tears it down; a client no fixture took is closed when the session ends);
- the tool server's reachability probe (``HostHTTP.unreachable``; the ``tool_server_target`` fixture finds the
  answer remembered), and, when something answers, the work of the early fixtures ``prm_discovery`` and
  ``as_metadata`` (``core/_early.start``): the run loop adopts what is started (``EarlyStarts``), and their records
  go to their first users as any early work's does.

Only where the checks are sure to want it: a run of the bundled suites with auth or profile selected, a tool server
configured, no selection of checks (``-k``, ``-m``, test paths, a fleet), no stack gate (the demo's services may
still be starting), and a loop that overlaps. Anything the thread meets (an error, a refused connection) is left for
the fixtures, which meet it again the usual way.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import TYPE_CHECKING

import pytest

from conformance.core import _budget, _early, _stack_gate
from conformance.pytest._session import SESSION_KEY, ConformanceSession

if TYPE_CHECKING:
    from conformance.config import Settings
    from conformance.host.http import HostHTTP

TOOL_SERVER_SUITES = frozenset({"auth", "profile"})
# The early fixtures started ahead of collection, in order: each takes what the ones before it give.
DISCOVERY = ("conformance.suites.fixtures.prm_discovery", "conformance.suites.fixtures.as_metadata")


class HeadStart:
    """The client built ahead and the thread that builds it and starts the discovery."""

    def __init__(self, state: ConformanceSession) -> None:
        self.settings = state.settings
        self.http: concurrent.futures.Future[HostHTTP] = concurrent.futures.Future()
        self.taken = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, args=(state,), name="conformance-head-start", daemon=True)

    def _run(self, state: ConformanceSession) -> None:
        try:
            http = new_host_http(self.settings, state)
        except BaseException as exc:  # the fixture builds its own and meets the error there
            self.http.set_exception(exc)
            return
        self.http.set_result(http)
        target = self.settings.target("tool_server")
        if target is None or http.unreachable(target.base_url) is not None:
            return  # the tool_server_target fixture says why
        budget_s = _budget.check_budget_s(self.settings)
        # Imported here, on this thread: the module registers the early fixtures' functions (light to import).
        import conformance.suites.fixtures  # noqa: F401

        prm_function, as_function = (_early.named(name) for name in DISCOVERY)
        if prm_function is None or as_function is None:
            return
        prm = _early.start(prm_function, {"host_http": http, "tool_server_target": target}, rules=(), budget_s=budget_s)
        _early.start(as_function, {"host_http": http, "prm_discovery": prm}, rules=(), budget_s=budget_s)

    def take_http(self, settings: Settings) -> HostHTTP | None:
        """The client built ahead, for the fixture of the run's own settings (once), or None."""
        with self._lock:
            if self.taken or settings is not self.settings:
                return None
            self.taken = True
        try:
            return self.http.result()
        except BaseException:
            return None

    def close(self) -> None:
        """Close the client if no fixture took it (the session's end)."""
        with self._lock:
            if self.taken:
                return
            self.taken = True
        try:
            http = self.http.result()  # building a client sends nothing: it ends
        except BaseException:
            return
        http.close()


_KEY = pytest.StashKey[HeadStart]()


def new_host_http(settings: Settings, state: ConformanceSession) -> HostHTTP:
    """The host's HTTP client for ``settings``, as the ``host_http`` fixture builds it."""
    from conformance.host import mcp_era
    from conformance.host.http import HostHTTP

    client = HostHTTP.from_settings(settings, redactor=state.redactor)
    mcp_era.choose_setting(client, settings.get("mcp_era"))
    return client


def eligible(config: pytest.Config, state: ConformanceSession) -> bool:
    from conformance.pytest._overlap import overlapping_limit

    option = config.option
    settings = state.settings
    return (
        state.active
        and not settings.fleet
        and settings.target("tool_server") is not None
        and not TOOL_SERVER_SUITES.isdisjoint(settings.selected_suites)
        and config.args_source != pytest.Config.ArgsSource.ARGS
        and not getattr(option, "keyword", "")
        and not getattr(option, "markexpr", "")
        and not getattr(option, "deselect", None)
        and not getattr(option, "lf", False)
        and _stack_gate.GATE_ENV not in os.environ
        and overlapping_limit(config) is not None
    )


def begin(session: pytest.Session) -> None:
    """Start the head start of this run, where it is eligible (see the module's docstring)."""
    config = session.config
    state = config.stash.get(SESSION_KEY, None)
    if state is None or not eligible(config, state):
        return
    head = HeadStart(state)
    config.stash[_KEY] = head
    config.add_cleanup(head.close)
    head._thread.start()


def take_http(config: pytest.Config, settings: Settings) -> HostHTTP | None:
    head = config.stash.get(_KEY, None)
    return head.take_http(settings) if head is not None else None
