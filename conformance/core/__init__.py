"""The leaves of the package: the table of targets and suites, the rule catalog, the harness's exceptions, the
running check's record, time budgets, signals, the cache directory and the run's heap policy.

Nothing here imports the rest of the package, pytest or httpx at import time: every other floor builds on it.
"""
