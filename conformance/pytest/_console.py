"""The console scrubbed as it is written: what pytest prints (verbose lines, summaries, live logs) and, with
``-s``, what checks print, pass through the run's redactor on their way out (with the secrets known so far)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from conformance.host import Redactor


class ScrubbingStream:
    """A text stream whose every write is scrubbed first; anything else is the wrapped stream's."""

    def __init__(self, inner: Any, redactor: Redactor) -> None:
        self._inner = inner
        self._redactor = redactor

    def write(self, text: str) -> int:
        self._inner.write(self._redactor.scrub(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def scrub_console(config: pytest.Config, redactor: Redactor) -> Callable[[], None]:
    """Wrap the terminal's stream (and, with ``-s``, ``sys.stdout`` and ``sys.stderr``); returns the undo."""
    undo: list[Callable[[], None]] = []
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    writer = getattr(reporter, "_tw", None)
    if writer is not None and not isinstance(writer._file, ScrubbingStream):
        inner = writer._file
        writer._file = ScrubbingStream(inner, redactor)
        undo.append(lambda: setattr(writer, "_file", inner))
    if getattr(config.option, "capture", None) == "no":
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = ScrubbingStream(out, redactor), ScrubbingStream(err, redactor)

        def restore() -> None:
            sys.stdout, sys.stderr = out, err

        undo.append(restore)

    def restore_all() -> None:
        for step in reversed(undo):
            step()

    return restore_all


__all__ = ["ScrubbingStream", "scrub_console"]
