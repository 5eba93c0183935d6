"""The mutant matrix: every mutant of the reference catalogue against the suites of its target (see plan.py)."""
