"""pytest-xdist scheduling: all checks of one target run on one worker.

The bundled checks share per-target state that concurrent workers would disturb: usage counters read before and
after an operation (IMG-CNT-*), rate-limit windows (RL-*), campaign list walks, the linked accounts of a tool
server. With ``-n N`` the default ``load`` distribution is replaced by a grouping per target, so targets are
certified in parallel and each target's checks run in order on one worker. Checks outside the bundled suites are
distributed one by one, as with ``load``; an explicit ``--dist`` other than ``load`` is left alone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

from conformance.config import Settings
from conformance.core._exceptions import ConfigError
from conformance.core._shortcuts import scope_scheduling
from conformance.core.rules import SUITE_TARGET
from conformance.pytest._session import SESSION_KEY, SUITES_DIR, build_settings, in_suites


def fleet_name(nodeid: str, names: Collection[str]) -> str | None:
    """The named target in a fleet check's id (``test_x[acme]``, ``test_x[acme-case]``), else None."""
    _, bracket, params = nodeid.partition("[")
    return next((part for part in params.rstrip("]").split("-") if part in names), None) if bracket else None


def target_scope(nodeid: str, bases: Iterable[Path], fleet: Collection[str] = ()) -> str:
    """The work unit of a check: its target for bundled suites (in a fleet, its named target's), else the check
    itself.

    Node ids are relative to the rootdir or to the collection argument that holds them, so the module is looked
    up under each of ``bases``.
    """
    module = nodeid.split("::", 1)[0]
    suites = SUITES_DIR.resolve()
    for base in bases:
        path = (base / module).resolve()
        if path.is_relative_to(suites) and path.is_file():
            suite = path.relative_to(suites).parts[0]
            if suite in SUITE_TARGET:
                name = fleet_name(nodeid, fleet) if fleet else None
                return f"target:{name}/{SUITE_TARGET[suite]}" if name else f"target:{SUITE_TARGET[suite]}"
    return nodeid


class TargetScheduling(LoadScopeScheduling):
    """``loadscope`` with the scope of :func:`target_scope` as each check's work unit (through
    ``conformance.core._shortcuts.scope_scheduling``)."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        args = [Path(a.split("::", 1)[0]) for a in config.args]
        self._bases = [Path(config.rootpath), *(a if a.is_dir() else a.parent for a in args)]
        self._scopes: dict[str, str] = {}
        state = config.stash.get(SESSION_KEY, None)
        self._fleet = list(state.settings.fleet) if state is not None else []

    def scope(self, nodeid: str) -> str:
        if nodeid not in self._scopes:
            self._scopes[nodeid] = target_scope(nodeid, self._bases, self._fleet)
        return self._scopes[nodeid]


_SCHEDULING = scope_scheduling(TargetScheduling)  # None: this xdist offers no scope to set (its default then)


def make_scheduler(config: Any, log: Any) -> TargetScheduling | None:
    if config.getvalue("dist") != "load" or _SCHEDULING is None:
        return None
    scheduler: TargetScheduling = _SCHEDULING(config, log)
    return scheduler


# -- how many workers ------------------------------------------------------------------------------------------


def busy_targets(settings: Settings) -> int:
    """Targets this run certifies: one worker each can work, every further one only pays its start-up."""
    if settings.fleet:
        return sum(busy_targets(member) for member in settings.fleet.values())
    return len({SUITE_TARGET[s] for s in settings.selected_suites if settings.target(SUITE_TARGET[s]) is not None})


def _bundled_only(config: Any) -> bool:
    """Whether the run holds only bundled checks (no test paths, or only paths inside the suites)."""
    if config.args_source != config.ArgsSource.ARGS:
        return True
    return all(in_suites(Path(a.split("::", 1)[0])) for a in config.args)


def _targets_to_share(config: Any) -> int:
    """The targets the run's workers share out (busy_targets); 0 when the workers are not this plugin's to count:
    the user's own checks (distributed one by one), nothing to certify, or a configuration pytest_configure will
    report."""
    if not _bundled_only(config):
        return 0
    try:
        return busy_targets(build_settings(config))
    except ConfigError:
        return 0


# A worker mostly waits on its target (its own CPU is a minor part of a run's wall time), so more workers than
# cores still finish sooner: benchmarks/xdist_scaling.py measures it (docs/performance.md).
WORKERS_PER_CORE = 2


def auto_num_workers(config: Any) -> int | None:
    """``-n auto``: no more workers than targets, nor than WORKERS_PER_CORE per core of xdist's own count, and none
    at all when only one could work; None to leave it to xdist."""
    targets = _targets_to_share(config)
    if targets == 0:
        return None  # xdist decides (the cores are the limit)
    from xdist.plugin import pytest_xdist_auto_num_workers as cores

    workers = min(targets, WORKERS_PER_CORE * cores(config))
    return workers if workers > 1 else 0  # one worker would only add its start-up: run in this process (-n 0)


def capped_workers(config: Any) -> int | None:
    """An explicit ``-n N`` capped as ``-n auto`` is: no more workers than targets to certify, and none when only one
    could work (each target's checks run on one worker: a further one would only pay its start-up, making the run
    slower than serial). None to leave ``N`` alone: no more than the targets, the user's own checks, a worker."""
    requested = getattr(config.option, "numprocesses", None)
    if not isinstance(requested, int) or requested <= 1 or hasattr(config, "workerinput"):
        return None
    targets = _targets_to_share(config)
    if targets == 0 or requested <= targets:
        return None
    return targets if targets > 1 else 0


def capped_workers_line(requested: int, settings: Settings) -> str:
    """The report-header line of a run whose ``-n N`` was capped (capped_workers)."""
    targets = busy_targets(settings)
    started = f"{targets} workers" if targets > 1 else "no worker, in this process"
    return (
        f"conformance: -n {requested} for {targets} target(s): running {started} "
        "(each target's checks run on one worker; more would only add their start-up)"
    )
