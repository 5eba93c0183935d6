"""Compression sandbox mutants: rows in ``mutants.toml`` beside this file, behaviour in app.py."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, load_catalogue

MUTANTS: list[Mutant] = load_catalogue("compression")
