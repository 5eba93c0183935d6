"""A run's report files in its report directory: report.json always, report.html, report.har and report.sarif as the
run asks (``report_formats``). Written by the plugin at the end of a run and by ``conformance demo`` for the runs it
joins; each gives the HAR's writer, whose last redaction pass only the run that learnt the secrets can make."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from conformance.report.json_writer import write_json
from conformance.report.model import RunReport

# The files of the formats a run may leave out; one left by an earlier run would pass for this run's.
OPTIONAL_FILES = ("report.html", "report.har", "report.sarif")


def write_report_files(
    report: RunReport,
    directory: Path,
    formats: Collection[str],
    *,
    write_har: Callable[[Path], None] | None,
    compare: RunReport | None = None,
) -> list[Path]:
    """Write ``report``'s files of ``formats`` in ``directory`` and remove the others an earlier run left; the
    files written, in order. ``write_har`` writes report.har (None: none is written); ``compare``: an earlier report
    the HTML marks the changes since."""
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "report.json"]
    write_json(report, written[-1])
    if "html" in formats:
        try:
            from conformance.report.html import write_html
        except ImportError:  # the HTML writer's own dependency missing: the other reports still are
            pass
        else:
            written.append(directory / "report.html")
            write_html(report, written[-1], compare)
    if "har" in formats and write_har is not None:
        written.append(directory / "report.har")
        write_har(written[-1])
    if "sarif" in formats:
        from conformance.report.sarif import write_sarif

        written.append(directory / "report.sarif")
        write_sarif(report, written[-1])
    for name in OPTIONAL_FILES:
        if directory / name not in written:
            (directory / name).unlink(missing_ok=True)
    return written
