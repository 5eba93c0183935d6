"""junit.xml as pytest wrote it, scrubbed of every secret the run learnt (pytest writes it from each check's
report as it comes, before later checks learn codes and tokens)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.host import Redactor
from conformance.report.model import RunReport

# How ElementTree declares the document it writes, and how pytest's junitxml declares the one it writes through
# ElementTree (a declaration of its own, then ElementTree's text of the root).
DECLARATION = b"<?xml version='1.0' encoding='utf-8'?>\n"
PYTEST_DECLARATION = b'<?xml version="1.0" encoding="utf-8"?>'


def scrub_junit(path: Path, redactor: Redactor) -> None:
    """Rewrite ``path`` with every text and attribute scrubbed (in place; the file keeps its mode), as ElementTree
    writes it."""
    try:
        data = path.read_bytes()
        root = ET.fromstring(data)
    except (ET.ParseError, OSError):
        # Not XML we can parse: scrub it as text (the escaped forms of each secret are among those scrubbed).
        text = path.read_text(encoding="utf-8", errors="replace")
        _replace(path, redactor.scrub(text).encode("utf-8"))
        return
    changed = False
    for element in root.iter():
        for name, value in element.attrib.items():
            scrubbed = redactor.scrub(value)
            if scrubbed != value:
                element.attrib[name] = scrubbed
                changed = True
        if element.text and (scrubbed := redactor.scrub(element.text)) != element.text:
            element.text = scrubbed
            changed = True
        if element.tail and (scrubbed := redactor.scrub(element.tail)) != element.tail:
            element.tail = scrubbed
            changed = True
    kept = None if changed else _as_written_again(data)
    _replace(path, kept if kept is not None else ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _as_written_again(data: bytes) -> bytes | None:
    """What ElementTree writes again of the document ``data`` that it wrote itself (pytest's junitxml writes
    through it) and that reads back the same, found without writing it: its text, under ElementTree's
    declaration. None where the text read and written again could differ: another declaration, a carriage return
    (read as a line's end), a comment, a processing instruction or a document type (not kept by the parser), a
    namespace (its prefix named anew)."""
    for declaration in (PYTEST_DECLARATION, DECLARATION):
        if data.startswith(declaration):
            body = data[len(declaration) :]
            if b"\r" in body or b"<!" in body or b"<?" in body or b"xmlns" in body:
                return None
            return DECLARATION + body
    return None


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
