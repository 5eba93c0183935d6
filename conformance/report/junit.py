"""junit.xml as pytest wrote it, scrubbed of every secret the run learnt (pytest writes it from each check's
report as it comes, before later checks learn codes and tokens)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.host import Redactor
from conformance.report.model import RunReport


def scrub_junit(path: Path, redactor: Redactor) -> None:
    """Rewrite ``path`` with every text and attribute scrubbed (in place; the file keeps its mode)."""
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError):
        # Not XML we can parse: scrub it as text (the escaped forms of each secret are among those scrubbed).
        text = path.read_text(encoding="utf-8", errors="replace")
        _replace(path, redactor.scrub(text).encode("utf-8"))
        return
    for element in tree.iter():
        for name, value in element.attrib.items():
            element.attrib[name] = redactor.scrub(value)
        if element.text:
            element.text = redactor.scrub(element.text)
        if element.tail:
            element.tail = redactor.scrub(element.tail)
    _replace(path, ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True))


def add_fleet_verdicts(path: Path, report: RunReport) -> None:
    """A fleet run: each test suite's properties gain the overall verdict and one per named target
    (``conformance.verdict``, ``conformance.verdict.<name>``), so a CI's JUnit view shows the row per target."""
    if not report.fleet or not path.is_file():
        return
    try:
        tree = ET.parse(path)
    except ET.ParseError:
        return  # not pytest's XML: left as it is (scrub_junit still scrubs it as text)
    suites = [tree.getroot()] if tree.getroot().tag == "testsuite" else tree.getroot().findall("testsuite")
    rows = [("conformance.verdict", report.verdict.status)]
    rows += [(f"conformance.verdict.{row.name}", row.verdict.status) for row in report.fleet]
    for suite in suites:
        properties = suite.find("properties")
        if properties is None:
            properties = ET.Element("properties")
            suite.insert(0, properties)
        for name, value in rows:
            ET.SubElement(properties, "property", name=name, value=value)
    _replace(path, ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True))


def _replace(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
