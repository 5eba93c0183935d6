"""The ``conformance`` command (:mod:`._main`) and its subcommands that live apart: ``init`` and ``replay``."""

from conformance.cli._main import main

__all__ = ["main"]
