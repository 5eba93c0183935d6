"""No vacuous passes: a rule that names several cases passes only when every one of them was exercised.

A check collects the cases it ran and those it could not (with why); after judging the ones that ran (a failure
there is a failure), ``conclude`` skips the rule naming what is missing, or observes which cases ran, so the report
lists them either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance import needs, observe


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
