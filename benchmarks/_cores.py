"""How fast this machine's cores are at the moment: the CPU time of a fixed loop of ten million additions.

The machines these benchmarks run on change their cores' speed under the guest, without steal time showing in
``/proc/stat`` (docs/performance.md gives the loop times seen). A wall or CPU figure is only
comparable with another taken at a like loop time, so the benchmarks that time whole runs print it before and after
(``cores``), beside the load average. The loop runs in the calling process (its CPU is the caller's own, never
counted with the children a benchmark times).
"""

from __future__ import annotations

import os
import time

# The loop as the figures in docs/performance.md were taken: a script's top level, whose names are a dict's (a
# function's locals would run it faster, and the figures would no longer compare).
LOOP = compile("total = 0\nfor number in range(10_000_000):\n    total += number\n", "<cores>", "exec")


def loop_seconds() -> float:
    """CPU seconds of the loop of ten million additions."""
    started = time.process_time()
    exec(LOOP, {})
    return time.process_time() - started


def cores() -> str:
    """The conditions of a measurement in one phrase: the loop's time and the load average."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"cores: a ten-million-addition loop {loop_seconds():.2f} s CPU; load average {load}"
