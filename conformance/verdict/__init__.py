"""Verdicts: what a check says (:func:`fail`, :func:`expect`, :func:`observe`, :func:`needs`), the pure judge that
turns a finished check into a rule status, the host's signals read as verdicts, and the Hypothesis profile.

The curated names are re-exported by the package facade (``from conformance import rule, fail, ...``).
"""
