"""junit.xml scrubbed in place: the same bytes as ElementTree writing the scrubbed document again."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.host import Redactor
from conformance.report.junit import _as_written_again, scrub_junit

SECRET = "tok-9f8e7d6c5b4a3210"

# Tests whose reports carry what escaping and reading back could change: markup characters, quotes, tabs and line
# ends in messages and attributes, text that is not ASCII, captured output and logs, skips and properties.
TESTS = """
import logging
import pytest

def test_passes_and_prints(record_property):
    record_property("note", 'a "quoted" <value> & a\\tTab\\nand a line')
    print("out: <tag> & 'quotes' \\"double\\" ]]> \\t tab\\nline two é ✓ 🙂")
    logging.getLogger("x").warning("logged <b>&amp;</b>")

def test_fails():
    assert "a <b> & c" == "d\\te\\nf ✓"

def test_skips():
    pytest.skip("skipped: <why> & \\"how\\"\\nline")

@pytest.mark.xfail(reason="expected <x> & y")
def test_xfails():
    raise ValueError("é & <z>")

def test_errors(request):
    raise RuntimeError("\\x1b[31mcoloured\\x1b[0m and a control \\x07 character")
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A junit.xml as pytest's junitxml writes it."""
    directory = tmp_path_factory.mktemp("junit")
    (directory / "test_many.py").write_text(TESTS, encoding="utf-8")
    path = directory / "junit.xml"
    pytest.main(
        [
            str(directory / "test_many.py"),
            f"--junitxml={path}",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "log_level=INFO",
            "-o",
            "junit_logging=all",
        ]
    )
    return path


def written_again(path: Path, redactor: Redactor) -> bytes:
    """The document scrubbed and written by ElementTree, element by element."""
    root = ET.parse(path).getroot()
    for element in root.iter():
        for name, value in element.attrib.items():
            element.attrib[name] = redactor.scrub(value)
        if element.text:
            element.text = redactor.scrub(element.text)
        if element.tail:
            element.tail = redactor.scrub(element.tail)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


@pytest.mark.parametrize("twice", [False, True])
def test_a_document_with_nothing_to_scrub_is_written_as_elementtree_writes_it(
    written: Path, tmp_path: Path, twice: bool
) -> None:
    path = tmp_path / "junit.xml"
    shutil.copy(written, path)
    assert b"\r" not in path.read_bytes() and "é".encode() in path.read_bytes()
    expected = written_again(path, Redactor())
    assert _as_written_again(path.read_bytes()) == expected  # found without ElementTree writing it
    scrub_junit(path, Redactor())
    if twice:  # a document rewritten already (a fleet run's verdicts added) is scrubbed the same way
        scrub_junit(path, Redactor())
    assert path.read_bytes() == expected


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (lambda text: text.replace("logged", SECRET), SECRET),  # a secret: the document is written again
        (lambda text: text.replace("out: ", "out:\r\n"), "\r"),  # a carriage return is read as a line's end
        (lambda text: text.replace("<testsuites", "<!-- a comment --><testsuites"), "comment"),
    ],
)
def test_a_document_that_reads_back_otherwise_is_written_again(
    written: Path, tmp_path: Path, change: object, found: str
) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(change(written.read_text(encoding="utf-8")).encode("utf-8"))  # type: ignore[operator]
    assert found.encode() in path.read_bytes()
    redactor = Redactor()
    redactor.add_secret(SECRET)
    expected = written_again(path, redactor)
    scrub_junit(path, redactor)
    assert path.read_bytes() == expected
    assert SECRET.encode() not in path.read_bytes()
