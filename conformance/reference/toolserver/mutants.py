"""Tool server mutants: rows in ``mutants.toml`` beside this file, behaviour in app.py / verifier.py."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, load_catalogue

MUTANTS: list[Mutant] = load_catalogue("toolserver")
