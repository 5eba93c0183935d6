"""``python benchmarks/_cpu_sample.py OUT.json -m MODULE ARGS...``: run MODULE as ``python -m`` would, sampling the
main thread's Python stack at every millisecond of the process's CPU time (``ITIMER_PROF``); OUT.json holds the
number of samples and, per function (``file:name``), the samples it was running in (``leaf``) and the samples it
was on the stack of (``inclusive``). Used by ``latency.py --marginal --sample``.

Unlike cProfile, which adds a cost to every call and so inflates code made of many small calls several times over,
a sample costs the same wherever it falls. A sample is taken when the main thread runs Python code: another
thread's CPU is counted where the main thread waits (run the checks on the main thread: ``--concurrency 1``, and
``CONFORMANCE_NO_SHORTCUTS=early-fixtures``)."""

from __future__ import annotations

import collections
import json
import runpy
import signal
import sys
from types import FrameType

SITES = ("site-packages/", "python3.11/", "python3.12/", "python3.13/")


def _name(frame: FrameType) -> str:
    path = frame.f_code.co_filename
    for site in SITES:
        path = path.split(site, 1)[-1]
    if "/conformance/" in path:
        path = "conformance/" + path.rsplit("/conformance/", 1)[1]
    return f"{path}:{frame.f_code.co_name}"


def main() -> None:
    out, flag, module, *rest = sys.argv[1:]
    if flag != "-m":
        raise SystemExit(__doc__)
    sys.argv = [module, *rest]
    leaf: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    taken = [0]

    def sample(signum: int, frame: FrameType | None) -> None:
        taken[0] += 1
        seen: set[str] = set()
        if frame is not None:
            leaf[_name(frame)] += 1
        while frame is not None:
            name = _name(frame)
            if name not in seen:
                seen.add(name)
                inclusive[name] += 1
            frame = frame.f_back

    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    code: object = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        with open(out, "w", encoding="utf-8") as written:
            json.dump({"samples": taken[0], "leaf": leaf, "inclusive": inclusive}, written)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
