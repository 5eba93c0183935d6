"""SIGTERM and SIGINT end a run in order: the reports are still written.

CI cancelling a job, a ``timeout`` wrapper and Ctrl-C all signal the process. The first SIGTERM or SIGINT is met
as pytest meets Ctrl-C (a ``KeyboardInterrupt`` in the main thread): the check under way is abandoned, no further
check starts, and the end of the session writes report.json, report.html and report.har with every rule decided
so far, under the verdict INCOMPLETE ("interrupted"). Under xdist each worker ends its session the same way and
the controller writes the reports. A second signal is no longer caught: it stops the process at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), signal.SIGINT) if s is not None)


class Interruption:
    """Which signal interrupted the run (None: none yet)."""

    def __init__(self) -> None:
        self.signal_name: str | None = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name
            for each in SIGNALS:  # the next signal stops the process at once
                signal.signal(each, signal.SIG_DFL)
            raise KeyboardInterrupt(f"{self.signal_name}: the run was interrupted")

    def install(self) -> Callable[[], None]:
        """Catch the first SIGTERM or SIGINT from now on (main thread only); returns what restores the handlers."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous: dict[int, Any] = {}
        for each in SIGNALS:
            previous[each] = signal.getsignal(each)
            signal.signal(each, self._handle)

        def restore() -> None:
            for each, handler in previous.items():
                signal.signal(each, handler)

        return restore


__all__ = ["Interruption"]
