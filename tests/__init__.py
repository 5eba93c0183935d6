"""The project's own tests.

Every process that runs them (each xdist worker, the controller, the matrix's fork server) imports this package
first, before any test module. Collecting the suite imports the product and its libraries and builds 1479 items:
~250 000 objects tracked by the cyclic collector, alive until the process ends. With CPython's default thresholds
(700, 10, 10) the collector made ~20 full collections over all of them while one process collected the suite: about
1.5 s of CPU in each worker, a quarter of its collection (benchmarks/collect_overhead.py). So the youngest
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
