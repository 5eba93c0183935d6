"""No vacuous passes: a rule that names several cases passes only when every one of them was exercised.

A check collects the cases it ran and those it could not (with why); after judging the ones that ran (a failure
there is a failure), ``conclude`` skips the rule naming what is missing, or observes which cases ran, so the report
lists them either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from conformance import expect, needs, observe
from conformance.core import _context
from conformance.core._exceptions import TargetUnreachable
from conformance.host import fanout
from conformance.verdict._verdicts import Failure


@dataclass
class Cases:
    rule_text: str  # the cases as the rule names them, for the skip message
    ran: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # case -> why it was not exercised

    def exercised(self, case: str) -> None:
        self.ran.append(case)

    def unexercised(self, case: str, why: str) -> None:
        self.missing[case] = why

    def conclude(self, option: str | None = None) -> None:
        """Call after the exercised cases were judged: skipped when a case is missing, else the cases observed."""
        ran = ", ".join(self.ran) or "none"
        if self.missing:
            gaps = "; ".join(f"{case} ({why})" for case, why in self.missing.items())
            needs(f"every case of {self.rule_text} exercised: not {gaps}; cases run: {ran}", option)
        observe(f"cases run: {ran}")


# -- attack tables ----------------------------------------------------------------------------------------------
#
# A negative rule's check iterates a table of attacks, each citing the document it comes from. The table is data
# declared beside the check (``attack_table``), registered per rule so that ``conformance rules --json`` can say
# how many cases each rule tries, and the report's evidence lists the cases tried with their citations.


@dataclass(frozen=True)
class Attack:
    """One case of a negative rule: what is sent, and the document (section) that makes it an attack."""

    case: str
    source: str
    named: bool = False  # the rule's own text names this case: without it the rule cannot pass (skipped)
    expected: str = "refused"  # what a conforming target does with it (the report's case table)

    def __str__(self) -> str:
        return f"{self.case} [{self.source}]"


ATTACK_TABLES: dict[str, tuple[Attack, ...]] = {}


class Unreached(str):
    """What a helper that returns "the request failed (...)" text gives back when the exchange failed at the
    transport layer (connection refused or reset, TLS, timeout): the case was not tried, never failed by the target."""


class Untried(str):
    """What a case's ``send`` (:meth:`AttackRun.each`) gives back when the case could not be judged for a reason of
    its own (the harness could not read back what it must see): not tried, for that reason."""


def unreached_text(exc: BaseException) -> str:
    """The message of a TargetError, as :class:`Unreached` when it is a transport failure."""
    return Unreached(str(exc)) if isinstance(exc, TargetUnreachable) else str(exc)


TRANSPORT = "the exchange failed at the transport layer, so the target did not answer the case"


def cited(source: str, *cases: str, named: bool = False) -> tuple[Attack, ...]:
    """Consecutive cases of a table that rest on one source: the citation written once."""
    return tuple(Attack(case, source, named=named) for case in cases)


def attack_table(rule_id: str, *attacks: Attack) -> tuple[Attack, ...]:
    """Declare (and register) the attack table of ``rule_id``; returns it for the check to iterate."""
    names = [a.case for a in attacks]
    if len(set(names)) != len(names) or not attacks:
        raise ValueError(f"{rule_id}: an attack table needs distinct, non-empty cases")
    ATTACK_TABLES[rule_id] = tuple(attacks)
    return ATTACK_TABLES[rule_id]


def case_count(rule_id: str) -> int | None:
    """How many cases the rule's check tries (None: the rule has no attack table)."""
    table = ATTACK_TABLES.get(rule_id)
    return len(table) if table is not None else None


@dataclass
class AttackRun:
    """The run of one attack table: which cases were tried, which could not be (and why), which the target got
    wrong. ``conclude`` fails with every wrong case (and its citation); else skips when a case the rule names was
    not tried; else observes the cases tried, each with its source."""

    rule_id: str
    table: tuple[Attack, ...]
    tried: list[Attack] = field(default_factory=list)
    untried: dict[str, str] = field(default_factory=dict)  # case -> why
    problems: list[str] = field(default_factory=list)
    inapplicable_cases: dict[str, str] = field(default_factory=dict)  # case -> why it has no meaning here
    got: dict[str, str] = field(default_factory=dict)  # case -> what the target did wrong
    after: int = field(default_factory=_context.recorded)  # exchanges before this one are no case's yet

    @classmethod
    def of(cls, rule_id: str) -> AttackRun:
        return cls(rule_id, ATTACK_TABLES[rule_id])

    def attack(self, case: str) -> Attack:
        for attack in self.table:
            if attack.case == case:
                return attack
        raise KeyError(f"{case!r} is not in the attack table of {self.rule_id}")

    def _file(self, case: str) -> None:
        """The exchanges since the last case (or since this case's ``attempt`` began) are this case's."""
        _context.file_case_exchanges(case, self.after)
        self.after = _context.recorded()

    def tried_case(self, case: str, problem: str | None = None) -> None:
        attack = self.attack(case)
        self.tried.append(attack)
        self._file(case)
        if problem:
            self.problems.append(f"{problem} [{attack.source}]")
            self.got[case] = problem

    def not_tried(self, case: str, why: str) -> None:
        self.untried[self.attack(case).case] = why
        self._file(case)

    def unreached(self, case: str, why: str) -> None:
        """The case's exchange failed in transport (reset, timeout): not tried, never the target failing it."""
        self.not_tried(case, f"{TRANSPORT}: {why}")

    def judged(self, case: str, problem: str | None) -> None:
        """``tried_case``, unless ``problem`` is :class:`Unreached` or :class:`Untried` (the case was not tried)."""
        if isinstance(problem, Unreached):
            self.unreached(case, problem)
        elif isinstance(problem, Untried):
            self.not_tried(case, problem)
        else:
            self.tried_case(case, problem)

    @contextmanager
    def attempt(self, case: str) -> Iterator[None]:
        """Run one case's exchange and judgement: a Failure raised inside is this case's problem, a transport
        failure (TargetUnreachable) leaves the case not tried; otherwise the case was tried and met."""
        self.after = _context.recorded()  # what came before is no exchange of this case
        try:
            yield
        except TargetUnreachable as exc:
            self.unreached(case, str(exc))
        except Failure as exc:
            self.tried_case(case, str(exc))
        else:
            self.tried_case(case)

    def each(self, cases: Iterable[str], send: Callable[[str], str | None], *, limit: int) -> None:
        """Run independent cases at most ``limit`` at a time (``HostHTTP.concurrency``), then judge them in the
        order given, as a loop of :meth:`attempt` and :meth:`judged` would: ``send(case)`` makes the case's
        exchanges and returns its problem (None: met; :class:`Unreached`, :class:`Untried`: not tried); a
        ``Failure`` it raises is the case's problem, a transport failure leaves the case not tried. Each case's
        exchanges are filed under it and read in the cases' order (see :mod:`conformance.host.fanout`). Any other
        exception is raised once the cases before it are judged. A case whose exchanges depend on another's answer
        belongs in one ``send``."""

        def one(case: str) -> tuple[bool, str | None]:
            try:
                return True, send(case)
            except TargetUnreachable as exc:
                return False, str(exc)
            except Failure as exc:
                return True, str(exc)

        order = list(cases)
        results = fanout.outcomes(order, one, limit=limit, case=lambda case: case)
        self.after = _context.recorded()  # the cases' exchanges are filed already
        for case, outcome in zip(order, results, strict=True):
            if outcome is None:
                continue  # not started: an earlier case raised
            reached, problem = outcome.get()
            if reached:
                self.judged(case, problem)
            else:
                self.unreached(case, problem or TRANSPORT)

    def inapplicable(self, case: str, why: str) -> None:
        """The case has no meaning for this target (e.g. signature cases for an opaque token): noted, never a gap."""
        self.inapplicable_cases[self.attack(case).case] = why
        self.untried.pop(case, None)
        self._file(case)

    def records(self) -> list[dict[str, str]]:
        """Every case of the table as a record, in the table's order (the report shows the failed ones first)."""
        done = {a.case for a in self.tried}
        rows = []
        for attack in self.table:
            if attack.case in self.got:
                outcome, got = "failed", self.got[attack.case]
            elif attack.case in done:
                outcome, got = "passed", "as expected"
            elif attack.case in self.inapplicable_cases:
                outcome, got = "not applicable", self.inapplicable_cases[attack.case]
            else:
                outcome, got = "not tried", self.untried.get(attack.case, "not reached")
            rows.append(
                {
                    "rule": self.rule_id,
                    "case": attack.case,
                    "source": attack.source,
                    "expected": attack.expected,
                    "outcome": outcome,
                    "got": got,
                }
            )
        return rows

    def conclude(self, option: str | None = None) -> None:
        done = {a.case for a in self.tried}
        for attack in self.table:
            if attack.case not in done and attack.case not in self.untried | self.inapplicable_cases:
                self.untried[attack.case] = "not reached"
        _context.record_cases(self.records())
        expect(not self.problems, "; ".join(self.problems) + f" ({len(self.tried)} cases tried)")
        tried = "; ".join(map(str, self.tried)) or "none"
        observe(f"cases tried ({len(self.tried)}/{len(self.table)}): {tried}")
        if self.untried:
            observe("cases not tried: " + "; ".join(f"{c} ({why})" for c, why in self.untried.items()))
        if self.inapplicable_cases:
            observe("cases not applicable: " + "; ".join(f"{c} ({why})" for c, why in self.inapplicable_cases.items()))
        named = [a for a in self.table if a.named and a.case in self.untried]
        if named:
            gaps = "; ".join(f"{a.case} ({self.untried[a.case]})" for a in named)
            needs(f"every case {self.rule_id} names exercised: not {gaps}", option)
