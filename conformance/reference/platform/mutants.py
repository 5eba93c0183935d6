"""Defects of the platform sandbox: rows in ``mutants.toml`` beside this file, behaviour in the app."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, load_catalogue

MUTANTS: list[Mutant] = load_catalogue("platform")
