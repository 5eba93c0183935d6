"""IdP mutants: rows in ``mutants.toml`` beside this file; provider.js reads the names from its config file."""

from __future__ import annotations

from conformance.reference.mutants import Mutant, load_catalogue

MUTANTS: list[Mutant] = load_catalogue("idp")
