"""The project's own tests.

Every process that runs them (each xdist worker, the controller, the matrix's fork server) imports this package
first, before any test module. Collecting the suite imports the product and its libraries and builds its items: a
large heap tracked by the cyclic collector, alive until the process ends. With CPython's default thresholds
(700, 10, 10) the collector makes many full collections over all of it while one process collects the suite, a large
share of each worker's collection (``benchmarks/collect_overhead.py --tests`` measures it). So the youngest
generation is collected every ``GEN0_THRESHOLD`` allocations instead (the older generations keep their ratios;
short-lived cycles are still freed, in fewer, larger passes), as conformance/core/_gc.py does for a certification run.
It stays below the product's own threshold, so that an active run still raises it (tests/core/test_gc_policy.py).
"""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 10_000

_threshold = gc.get_threshold()
if 0 < _threshold[0] < GEN0_THRESHOLD:  # 0 means automatic collection was turned off: leave it so
    gc.set_threshold(GEN0_THRESHOLD, *_threshold[1:])
