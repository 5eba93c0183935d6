"""Mutants of the rewriting proxy in front of the IdP: rows in ``mutants.toml``, behaviour in app.py."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, load_catalogue

MUTANTS: list[Mutant] = load_catalogue("proxy")
