"""junit.xml as pytest wrote it, scrubbed of every secret the run learnt (pytest writes it from each check's
report as it comes, before later checks learn codes and tokens)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.host import Redactor


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


def _replace(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
