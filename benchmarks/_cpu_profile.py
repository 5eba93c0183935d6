"""``python benchmarks/_cpu_profile.py OUT.prof -m MODULE ARGS...``: run MODULE as ``python -m`` would, under
cProfile with the process's CPU clock (``time.process_time``), so that waiting for the network is never counted;
the profile goes to OUT.prof (read it with ``python -m pstats``). Used by ``latency.py --cprofile``."""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, flag, module, *rest = sys.argv[1:]
    if flag != "-m":
        raise SystemExit(__doc__)
    sys.argv = [module, *rest]
    profiler = cProfile.Profile(time.process_time)
    code: object = 0
    profiler.enable()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    finally:
        profiler.disable()
        profiler.dump_stats(out)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
