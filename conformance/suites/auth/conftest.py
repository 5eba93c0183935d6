"""Shared prerequisites of the auth suite live in ``conformance/suites/_linking.py`` (shared with profile)."""
