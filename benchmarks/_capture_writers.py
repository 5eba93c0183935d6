"""A pytest plugin for benchmarks/report_writers.py: keeps what the report writers receive at the end of a run.

Loaded with ``-p _capture_writers`` (benchmarks/ on PYTHONPATH) and ``CONFORMANCE_CAPTURE_WRITERS=<file>``: before
the reports are written it pickles the run's report, the secrets its redactor learnt, whether the report is the one
the last redaction pass just scrubbed (as ``write_reports`` decides it) and junit.xml as pytest wrote it.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import conformance.pytest.plugin as plugin
from conformance.pytest._session import SESSION_KEY

_write_reports = plugin.write_reports


def _capturing(report: Any, directory: Path, config: Any = None) -> list[str]:
    state = config.stash.get(SESSION_KEY, None) if config is not None else None
    xmlpath = getattr(config.option, "xmlpath", None) if config is not None else None
    captured = {
        "report": report,
        "secrets": state.redactor.secrets() if state is not None else None,
        "fresh": state is not None and state.report is report and state.report_generation == state.redactor.generation,
        "junit": Path(xmlpath).read_bytes() if xmlpath and Path(xmlpath).is_file() else None,
    }
    with open(os.environ["CONFORMANCE_CAPTURE_WRITERS"], "wb") as out:
        pickle.dump(captured, out)
    return _write_reports(report, directory, config)


plugin.write_reports = _capturing  # type: ignore[assignment]
