"""The ``conformance`` Hypothesis profile, registered on first use (importing Hypothesis is costly, and only
property-based checks need it), and what Hypothesis' flaky errors mean for a verdict on a live target."""

from __future__ import annotations

import os
from typing import Any

from conformance.core._cache import cache_dir
from conformance.core._shortcuts import drop_idle_hypothesis_summary, keep_hypothesis_compiled

PROFILE = "conformance"


def hypothesis_profile() -> Any:
    """Bounded examples, no deadline (targets are remote), no example database (runs must not share state)."""
    from hypothesis import HealthCheck, settings
    from hypothesis.errors import InvalidArgument

    # Asked of Hypothesis itself, not remembered here: a pytester in-process run drops the modules first imported
    # inside it, so the next import of Hypothesis may be a fresh copy that has never seen the profile.
    try:
        return settings.get_profile(PROFILE)
    except InvalidArgument:
        pass
    _use_cache_dir()
    settings.register_profile(
        PROFILE,
        max_examples=int(os.environ.get("CONFORMANCE_HYPOTHESIS_EXAMPLES", "25")),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    return settings.get_profile(PROFILE)


def _use_cache_dir() -> None:
    """Hypothesis' storage (its Unicode tables, costly in time and memory to rebuild) goes to the per-user cache, not to
    a ``.hypothesis`` directory in whatever directory the run starts from; rebuilt only when Python's Unicode
    version changes. Must run before Hypothesis first touches storage; an explicit HYPOTHESIS_STORAGE_DIRECTORY wins.
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    home = cache_dir() / "hypothesis"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # no writable home: Hypothesis keeps its default (and copes with an unwritable one)
    set_hypothesis_home_dir(home)


def warm_storage() -> None:
    """Build the Unicode tables Hypothesis keeps in its storage (the character map and the UTF-8 table, a walk over
    every code point, which each run would otherwise make at its first property check that draws text), in the
    per-user cache the runs use. For the set-up (run.py), so that the first certification after an install finds
    them; a table already there is read, not built again (docs/performance.md, "The first demo after an install")."""
    _use_cache_dir()
    from hypothesis import find, settings
    from hypothesis import strategies as st

    find(st.text(min_size=1), lambda _: True, settings=settings(database=None))


def skip_assertion_rewriting(config: Any) -> None:
    """Import Hypothesis as compiled, not through pytest's assertion rewriter (shortcut ``hypothesis-rewrite``).

    pytest marks every module of a distribution that declares a pytest plugin for assertion rewriting, so the whole
    ``hypothesis`` package is parsed, rewritten and compiled from source when a property-based check imports it,
    every run where bytecode is not cached (``PYTHONDONTWRITEBYTECODE``, as CI often sets). Rewriting only improves
    the messages of Hypothesis' own internal asserts; its pytest plugin (loaded before this runs) and every check's
    asserts are untouched. Must run before the suites import Hypothesis (``pytest_configure``).
    """
    keep_hypothesis_compiled(config)


def drop_idle_summary_hook(config: Any) -> None:
    """Unregister Hypothesis' pytest plugin before the terminal summary when it has nothing to say (shortcut
    ``hypothesis-summary``): its ``pytest_terminal_summary`` imports all of Hypothesis on every run, even one that
    never imported it. Called from ``pytest_sessionfinish``, before the terminal reporter writes the summary."""
    drop_idle_hypothesis_summary(config)


def is_flaky(exc: BaseException) -> bool:
    """Hypothesis' ``Flaky`` family (FlakyFailure, FlakyStrategyDefinition, FlakyReplay...): a case that failed
    did not fail the same way, or did not draw the same data, when replayed. Checked without importing Hypothesis."""
    return any(cls.__module__ == "hypothesis.errors" and cls.__name__ == "Flaky" for cls in type(exc).__mro__)


def unwrap_hypothesis(exc: BaseException) -> BaseException:
    """A member of a FlakyFailure group as raised (Hypothesis wraps BaseExceptions such as pytest's skips)."""
    if type(exc).__name__ == "_WrappedBaseException" and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def replay_verdict(
    exc: BaseException, first_failure: BaseException | None, throttled: tuple[type[BaseException], ...]
) -> BaseException | None:
    """The verdict behind a flaky error of a property-based check on a live target: the first failure the check
    met (its answer broke the rule even if a replay answered otherwise), or a ``throttled`` answer (the verdict
    layer's kinds: a check blocked by throttling) inside the group."""
    if not is_flaky(exc):
        return None
    if isinstance(exc, BaseExceptionGroup):
        blocked = [e for e in map(unwrap_hypothesis, exc.exceptions) if isinstance(e, throttled)]
        if first_failure is None and blocked:
            return blocked[0]
    return first_failure
