"""The rule catalog: every rule the harness certifies, keyed by its stable ID.

The rules are data, ``conformance/core/catalog.toml`` (one ``[[rule]]`` table a rule), read once per process and
kept, parsed, in the user's cache directory (keyed by the file's digest), so that reading it costs what importing a
module would. Checks declare the rules they decide with :func:`rule`; an unknown ID fails at import time, so the
catalog and the checks cannot drift apart. A leaf: it imports nothing of the package but the cache directory, the
exceptions and the table of suites (loading every check and listing mutants live in
:mod:`conformance.suites._checks`, beside the CLI), and pytest only when a check is declared.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any, TypeVar

from conformance.core._cache import cache_dir
from conformance.core._exceptions import ConformanceError, UnknownRuleError
from conformance.core.targets import SUITE_NAMES
from conformance.core.targets import SUITE_TARGET as SUITE_TARGET  # re-exported: which target each suite certifies

SUITES: tuple[str, ...] = SUITE_NAMES  # the suites, in the contract's order (declared in conformance.core.targets)
CATALOG_FILE = "catalog.toml"


@dataclass(frozen=True)
class Document:
    """A contract document the catalog's sources name by its letter (shared/spec/)."""

    letter: str
    title: str
    file: str

    @property
    def label(self) -> str:
        return f"{self.title} ({self.file})"


DOCUMENTS: Mapping[str, Document] = MappingProxyType(
    {
        d.letter: d
        for d in (
            Document("A", "Tool-Server Authorization Contract", "000_0337f9e2b7ef4d29.txt"),
            Document("P", "Platform API", "001_ac3353e89bc660bb.txt"),
            Document("C", "Image Compression API", "002_62e67b920237d681.txt"),
        )
    }
)


class CatalogError(ConformanceError):
    """A catalog file that cannot be read as rules (the message names the row)."""


class Level(StrEnum):
    MUST = "MUST"  # a failure fails the run
    SHOULD = "SHOULD"  # a failure is a warning (fails only with --strict)
    INFO = "INFO"  # observed and reported, never fails


class Status(StrEnum):
    """What a rule came to, in a run or over one document (the report's words)."""

    PASSED = "passed"
    FAILED = "failed"  # a MUST rule failed
    WARNING = "warning"  # a SHOULD rule failed
    SKIPPED = "skipped"  # could not run: a need is missing
    BLOCKED = "blocked"  # a prerequisite rule failed
    ERROR = "error"  # the harness itself failed


def level_status(failed_status: Status, level: Level, strict: bool = False) -> Status:
    """What a failure of a rule at ``level`` becomes: failed (MUST), warning (SHOULD), passed (INFO)."""
    if failed_status is not Status.FAILED:
        return failed_status
    if level is Level.SHOULD:
        return Status.FAILED if strict else Status.WARNING
    if level is Level.INFO:
        return Status.PASSED
    return Status.FAILED


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    suite: str
    title: str  # a few words naming what the rule is about
    text: str
    source: str
    needs: str | None = None
    offline: bool = False  # a document alone can show it (``conformance validate``)

    @property
    def document(self) -> str | None:
        """The contract document the source points to, when it names one."""
        found = DOCUMENTS.get(self.source.split(" ", 1)[0])
        return found.label if found else None


_REQUIRED = ("id", "level", "suite", "title", "text", "source")
_FIELDS = {*_REQUIRED, "needs", "offline"}


def parse_rows(rows: object, source: str = CATALOG_FILE) -> tuple[Rule, ...]:
    """The rules of the catalog's ``[[rule]]`` rows; refuses unknown or missing fields, an unknown level or suite, and
    an ID used twice."""
    if not isinstance(rows, list):
        raise CatalogError(f"{source}: expected [[rule]] tables")
    found: dict[str, Rule] = {}
    for index, row in enumerate(rows):
        where = f"{source}: rule #{index + 1} ({row.get('id', '?') if isinstance(row, dict) else '?'})"
        if not isinstance(row, dict) or set(row) - _FIELDS or not set(_REQUIRED) <= set(row):
            raise CatalogError(f"{where}: expected the fields {', '.join(_REQUIRED)} (needs, offline optional)")
        if row["level"] not in Level.__members__ or row["suite"] not in SUITE_NAMES or row["id"] in found:
            raise CatalogError(f"{where}: unknown level or suite, or an ID used twice")
        needs, offline = row.get("needs"), row.get("offline", False)
        strings = [row[name] for name in _REQUIRED]
        if not all(isinstance(v, str) and v for v in strings) or not isinstance(needs, str | None):
            raise CatalogError(f"{where}: every field is a non-empty string")
        if not isinstance(offline, bool):
            raise CatalogError(f"{where}: offline is true or false")
        found[row["id"]] = Rule(
            row["id"], Level(row["level"]), row["suite"], row["title"], row["text"], row["source"], needs, offline
        )
    return tuple(found.values())


def _parsed(raw: bytes, *, cached: bool = True) -> list[dict[str, Any]]:
    """The catalog's rows, from the cache directory when this very file was parsed before (best effort: a cache that
    cannot be read or written is parsed around)."""
    kept = cache_dir() / f"catalog-{hashlib.sha256(raw).hexdigest()[:24]}.json"
    if cached:
        try:
            rows = json.loads(kept.read_bytes())
            if isinstance(rows, list):
                return rows
        except (OSError, ValueError):  # absent, unreadable or damaged (a JSON decode error is a ValueError)
            pass
    import tomllib  # only when the cache is cold

    try:
        rows = tomllib.loads(raw.decode("utf-8")).get("rule", [])
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError(f"conformance/core/{CATALOG_FILE}: {exc}") from None
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, kept)
    except OSError:
        pass
    return rows


@cache
def catalog() -> tuple[Rule, ...]:
    """Every rule of ``catalog.toml``, in the contract's order (parsed once per process)."""
    raw = (files("conformance.core") / CATALOG_FILE).read_bytes()
    source = f"conformance/core/{CATALOG_FILE}"
    try:
        return parse_rows(_parsed(raw), source)
    except CatalogError:  # rows kept in the cache that do not read back: the file itself decides
        return parse_rows(_parsed(raw, cached=False), source)


RULES: dict[str, Rule] = {r.id: r for r in catalog()}  # vendor rules (conformance.pytest.vendor) are added to it

# Rules about the harness itself rather than the target: proven by the project's own tests, reported as such. A
# harness rule may have a check that shows the host's behaviour in the run; it never fails the target.
HARNESS_RULES: dict[str, str] = {
    "AUTH-ISS-03": "a rule about this harness as a host (it refuses an authorization response whose iss is missing or "
    "differs while advertised, and says why): every run's check self-tests the host's callback validation and "
    "reports the real responses it refused, proven by its own test suite (tests/host/test_oauth.py); the "
    "authorization server's defect is judged under AUTH-ISS-01 and AUTH-ISS-02",
    "RL-06": "a rule about this harness as a client (Retry-After, backoff with jitter, bounds, no retry of "
    "quota errors), proven by its own test suite (tests/host/test_retry.py, tests/suites/platform/"
    "test_host_client.py), not a property of the target",
}

# Rule IDs that have at least one check, filled as suite modules are imported.
IMPLEMENTED: dict[str, list[str]] = {}


def get_rule(rule_id: str) -> Rule:
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownRuleError(f"unknown rule ID {rule_id!r}: not in the catalog (conformance rules)") from None


F = TypeVar("F", bound=Callable[..., Any])


def rule(*rule_ids: str) -> Callable[[F], F]:
    """Declare the rule(s) a check decides. Adds the ``rule`` marker; unknown IDs raise at import."""
    if not rule_ids:
        raise UnknownRuleError("@rule needs at least one rule ID")
    for rule_id in rule_ids:
        get_rule(rule_id)

    def decorate(func: F) -> F:
        import pytest  # only checks need it: the catalog itself is read without pytest (``conformance report``)

        for rule_id in rule_ids:
            IMPLEMENTED.setdefault(rule_id, []).append(f"{func.__module__}.{func.__qualname__}")
        marked: F = pytest.mark.conformance_rule(*rule_ids)(func)
        if inspect.iscoroutinefunction(func):  # an async check: pytest-asyncio runs it (in its strict mode too)
            marked = pytest.mark.asyncio(marked)
        return marked

    return decorate


ALONE_MARK = "conformance_alone"


def alone(reason: str, *, among: str | None = None, unless: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Declare that a check runs with no other check in flight (``conformance/pytest/_overlap.py``): it changes
    what other checks rely on (tokens, grants, a test account's stored data) or reads what they recorded.
    ``reason`` says which, for the reader. With ``among``, only checks marked with the same name keep out of each
    other's way (they share something no other check touches, such as one grant) and run beside the rest. With
    ``unless``, settings that, all set for the check's target, let it change nothing others rely on (it works on a
    subject of its own): the plugin then drops the mark as the checks are collected."""
    if not reason:
        raise ValueError("@alone needs a reason")

    def decorate(func: F) -> F:
        import pytest

        mark = getattr(pytest.mark, ALONE_MARK)
        options: dict[str, Any] = {"among": among} if among else {}
        if unless:
            options["unless"] = tuple(unless)
        marked: F = mark(reason, **options)(func)
        return marked

    return decorate


TOUCHES_MARK = "conformance_touches"


def touches(item: Any, group: str, reason: str) -> None:
    """Mark a collected check as changing what the checks ``alone(..., among=group)`` need kept still (it creates
    campaigns, which move the list they walk): it runs beside any other check, never beside one of those, which
    wait for it to end (``conformance/pytest/_overlap.py``). Checks marked alone are left as they are."""
    import pytest

    if item.get_closest_marker(ALONE_MARK) is None:
        item.add_marker(getattr(pytest.mark, TOUCHES_MARK)(group, reason))


def touched_group(item: Any) -> str | None:
    """The group whose checks marked alone among it a check keeps out of the way of (:func:`touches`); None
    otherwise."""
    mark = item.get_closest_marker(TOUCHES_MARK)
    return str(mark.args[0]) if mark is not None and mark.args else None


def rules_of(item: Any) -> list[str]:
    """The rule IDs a collected check (a pytest item) decides: those its :func:`rule` markers name."""
    return [rule_id for mark in item.iter_markers("conformance_rule") for rule_id in mark.args]


def suite_of(item: Any) -> str | None:
    """A check's suite: the suite of the first rule it decides (so checks may live anywhere); None for a test that
    decides no catalogued rule."""
    return suite_of_rules(rules_of(item))


def suite_of_rules(rules: Sequence[str]) -> str | None:
    """The suite of a check deciding ``rules`` (:func:`suite_of`)."""
    return RULES[rules[0]].suite if rules and rules[0] in RULES else None


def alone_group(item: Any) -> str | None:
    """The name a check marked ``alone(..., among=name)`` keeps out of the way of; None otherwise."""
    mark = item.get_closest_marker(ALONE_MARK)
    return mark.kwargs.get("among") if mark is not None else None


def alone_unless(item: Any) -> tuple[str, ...]:
    """The settings that let a check marked ``alone(..., unless=...)`` run beside others (empty for any other)."""
    mark = item.get_closest_marker(ALONE_MARK)
    return tuple(mark.kwargs.get("unless", ())) if mark is not None else ()


def runs_alone(item: Any) -> bool:
    """Whether a check is marked to run with nothing else in flight (``alone`` without ``among``)."""
    return item.get_closest_marker(ALONE_MARK) is not None and alone_group(item) is None
