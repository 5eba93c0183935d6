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
    """Scrub what the terminal writer writes (and, with ``-s``, ``sys.stdout`` and ``sys.stderr``); returns the
    undo. Every write of pytest's terminal writer ends in its ``write_raw`` (the already marked-up text), which is
    wrapped on the writer instance: public names only."""
    undo: list[Callable[[], None]] = []
    writer = config.get_terminal_writer() if config.pluginmanager.has_plugin("terminalreporter") else None
    method = next((m for m in ("write_raw", "write") if callable(getattr(writer, m, None))), None)
    if writer is not None and method is not None and method not in vars(writer):
        inner = getattr(writer, method)

        def scrubbed(msg: Any, *args: Any, **kwargs: Any) -> Any:
            return inner(redactor.scrub(msg) if isinstance(msg, str) else msg, *args, **kwargs)

        setattr(writer, method, scrubbed)
        undo.append(lambda: vars(writer).pop(method, None))
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
