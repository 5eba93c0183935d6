"""A pytest plugin (``PYTEST_PLUGINS=benchmarks._redact_trace``, ``PYTHONPATH`` the checkout) that records every call a
run makes to its redactors: the secrets it registers, the texts, URLs, header sets and bodies it scrubs, the last
pass; each with its redactor and its arguments as they were then. The trace goes to ``$REDACT_TRACE_DIR/trace-PID.pkl``
when the process ends; ``redaction_replay.py`` replays it. Calls a redactor makes to itself are not recorded."""

from __future__ import annotations

import atexit
import os
import pickle
import threading
from collections.abc import Callable
from typing import Any

from conformance.host import _redact

_RECORDED = (
    *("__init__", "add_secret", "add_secrets", "scrub", "scrub_tree", "header", "headers", "header_items"),
    *("learn_from_url", "query", "url", "json_value", "body"),
)
_inside = threading.local()
_lock = threading.Lock()
_trace: list[tuple[int, str, bytes]] = []
_count = [0]


def _recording(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def recorded(self: _redact.Redactor, *args: Any, **kwargs: Any) -> Any:
        if getattr(_inside, "call", False):
            return method(self, *args, **kwargs)
        _inside.call = True
        try:
            shown: tuple[Any, ...] = args
            if name == "headers":  # what header_items reads of them (httpx's Headers do not pickle)
                shown = (_redact.header_items(args[0]),)
            elif name == "__init__":
                shown = args = (list(args[0]) if args and args[0] is not None else None,)
            with _lock:
                if name == "__init__":
                    self.__dict__["_traced"], _count[0] = _count[0], _count[0] + 1
                _trace.append((self.__dict__.get("_traced", -1), name, pickle.dumps((shown, kwargs))))
            return method(self, *args, **kwargs)
        finally:
            _inside.call = False

    return recorded


for _name in _RECORDED:
    setattr(_redact.Redactor, _name, _recording(_name, getattr(_redact.Redactor, _name)))


@atexit.register
def _write() -> None:
    with open(os.path.join(os.environ["REDACT_TRACE_DIR"], f"trace-{os.getpid()}.pkl"), "wb") as file:
        pickle.dump(_trace, file)
