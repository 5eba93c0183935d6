"""The house's own rules for its text: comments and docstrings say why in words, never a measured figure (the figures
live in docs/performance.md, each with the benchmark that measures it, and in the benchmarks' output); and every
path or module the documents name exists."""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A figure: a number with a unit of time, a share, a speed-up or a size ("~17 ms", "0.4-0.5 s", "85 %", "1.73x
# faster", "~190 MiB"). A bare "s" needs a space before it, so that "401s" (answers) is not read as seconds. A size
# is mostly a limit or a test's input ("a 100 KB header"): it counts only when marked as an approximation.
_NUMBER = r"(?<![\w.])(?P<approx>~\s*)?(?P<number>\d+(?:[.,]\d+)?)(?:\s*[-–]\s*\d+(?:\.\d+)?)?"
_UNIT = (
    r"(?:\s*(?:ms|µs|us|ns|milliseconds?|microseconds?|seconds?|secs?|minutes?|mins?|%)"
    r"|\s+s|\s*[x×]\s+(?:faster|slower|more|less|fewer)|\s*(?P<size>KiB|MiB|GiB|KB|MB|GB))(?![\w])"
)
FIGURE = re.compile(_NUMBER + _UNIT)
# Words that mark a figure as measured (an approximation of what was seen), whatever else holds.
APPROXIMATE = re.compile(r"(?:\b(?:about|around|roughly|nearly|some|almost|over)\s+|~\s*)$")


def comments_and_docstrings(source: str, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line number, text) of every comment and every line of every docstring of a Python file."""
    # A comment is a verbatim slice of the source ending at a line's end, so a source in which FIGURE matches
    # nowhere has no comment in which it does: only such a source is tokenized (the costly part of the scan).
    if FIGURE.search(source):
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for offset, line in enumerate(first.value.value.splitlines()):
                    yield first.value.lineno + offset, line


def numbers_in_code(tree: ast.Module) -> set[float]:
    """Every number written in the file's code (not its text): its settings, bounds, defaults and test values."""
    found: set[float] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            found.add(float(node.value))
    return found


def _quoted(text: str, start: int, end: int) -> bool:
    """The figure is written as a literal value: inside backticks or quotes (a duration's format, ``50ms``, "1s")."""
    before, after = text[:start].rstrip(), text[end:].lstrip()
    return bool(before) and bool(after) and before[-1] in "`'\"" and after[0] in "`'\""


def measured_figures(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line: figure`` for every figure in a comment or docstring that is not a setting.

    The narrow rule for what may stay: a figure written as a literal (quoted or in backticks: a format's example),
    or a figure whose number the same file's code holds (the setting it describes: a timeout, a window, a bound, a
    default, a test's chosen value: a window of three seconds beside ``window=3``), unless it is marked as an
    approximation ("~", "about", "some" ...), which is always a measurement."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    code_numbers: set[float] | None = None  # read at the first figure: most files have none
    found = []
    for number, text in comments_and_docstrings(source, tree):
        for match in FIGURE.finditer(text):
            if _quoted(text, match.start(), match.end()):
                continue
            approximate = match.group("approx") or APPROXIMATE.search(text[: match.start()])
            value = float(match.group("number").replace(",", "."))
            written = {value, value / 1000, value * 1000, value / 100}  # ms and s, s and ms, a share of one
            if code_numbers is None:
                code_numbers = numbers_in_code(tree)
            if not approximate and (written & code_numbers or match.group("size")):
                continue
            found.append(f"{path.relative_to(root)}:{number}: {match.group().strip()}")
    return found


def _python_files(*trees: str) -> list[Path]:
    return sorted(p for tree in trees for p in (ROOT / tree).rglob("*.py") if "node_modules" not in p.parts)


def test_the_figure_reader_tells_measurements_from_settings(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        '"""Building one costs ~17 ms of CPU; the format is ``20ms`` or "1s"; 401s are answers."""\n'
        "TIMEOUT = 10  # a timeout of 10 s\n"
        "WINDOW = 3  # about 3 s measured\n"
        "# 85 % of calls, 1.73x faster, 0.4-0.5 s of CPU, ~190 MiB, a 100 KB header\n",
        encoding="utf-8",
    )
    found = [line.split(": ", 1)[1] for line in measured_figures(probe, tmp_path)]
    assert found == ["3 s", "85 %", "1.73x faster", "0.4-0.5 s", "~190 MiB", "~17 ms"]


def test_no_comment_or_docstring_holds_a_measured_figure() -> None:
    """Measured figures go stale and disagree with each other: they live in docs/performance.md, each with the
    benchmark that measures it; a comment says why in words ("building an SSL context is costly, so one is
    shared")."""
    found = [
        line for path in [*_python_files("conformance", "tests"), ROOT / "run.py"] for line in measured_figures(path)
    ]
    assert found == []


# --- the paths and modules the documents name -------------------------------------------------------------------

DOCUMENTS = [
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "README.md",
    "fixtures/README.md",
    "conformance/reference/platform/README.md",
    *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))),
]
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PACKAGE_PATH = re.compile(r"(?<![\w/.])conformance/[\w/<>*.-]*\.py\b")
_FILE_PATH = re.compile(r"^[\w.<>*-]+(?:/[\w.<>*-]+)*(?:/|\.(?:py|toml|json|md|yml|yaml|js|j2|txt))$")
_DOTTED = re.compile(r"^conformance(?:\.\w+)+")
# The house's trees (and the package's folders, as ARCHITECTURE.md writes them): a path under anything else is the
# user's (``.github/workflows/...``, ``reports/report.json``), not a file of the checkout.
HOUSE: frozenset[str] = frozenset(
    ("conformance", "tests", "benchmarks", "docs", "fixtures", ".ci", "run.py", "action.yml", "pyproject.toml")
) | {p.name for p in (ROOT / "conformance").iterdir() if p.is_dir() and not p.name.startswith("__")}
MODULES = {p.stem for p in (ROOT / "conformance").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}


def _exists(name: str, document: Path) -> bool:
    """A path as the documents write it: from the checkout, from the package (ARCHITECTURE's ``core/rules.py``) or
    from the document's folder; ``<suite>``-style placeholders and ``*`` match any name."""
    pattern = re.sub(r"<[^>]+>", "*", name.rstrip("/"))
    for base in (ROOT, ROOT / "conformance", document.parent):
        if any(base.glob(pattern)) if "*" in pattern else (base / pattern).exists():
            return True
    return False


def _resolves(dotted: str) -> bool:
    """``conformance.host.fields`` or ``conformance.host.fields.json_field``: a module, or a name a module holds."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def named_paths(document: Path) -> Iterator[tuple[str, str]]:
    """(kind, name) of every package path (``conformance/...py``), backticked file path and backticked
    ``conformance.`` module the document names."""
    text = document.read_text(encoding="utf-8")
    for match in _PACKAGE_PATH.finditer(text):
        yield "path", match.group()
    for match in _BACKTICKED.finditer(text):
        token = match.group(1).strip("()[],;:")
        if token.startswith(("../", "/", "~", "http", ".venv", "$")) or "://" in token:
            continue  # outside the checkout, a URL, or the machine's own
        if _FILE_PATH.match(token) and "/" in token and token.split("/")[0] in HOUSE:
            yield "path", token
        elif (
            (dotted := _DOTTED.match(token))
            and "<" not in token
            and not _FILE_PATH.match(token)
            and dotted.group().split(".")[1] in MODULES  # not a name of the facade or a report's field
        ):
            yield "module", dotted.group()


def test_the_path_reader_finds_what_a_document_names(tmp_path: Path) -> None:
    document = tmp_path / "doc.md"
    document.write_text(
        "See conformance/core/rules.py, `host/http.py`, `suites/<suite>/options.py`, `conformance.host.fields`,\n"
        "`host/gone.py`, `conformance.host.gone`, `reports/report.json` (the user's) and `conformance.level`.\n",
        encoding="utf-8",
    )
    named = sorted(set(named_paths(document)))
    assert ("path", "reports/report.json") not in named and ("module", "conformance.level") not in named
    missing = [n for kind, n in named if not (_exists(n, document) if kind == "path" else _resolves(n))]
    assert sorted(missing) == ["conformance.host.gone", "host/gone.py"]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_path_and_module_a_document_names_exists(name: str) -> None:
    document = ROOT / name
    missing = sorted(
        {
            f"{kind} {named}"
            for kind, named in named_paths(document)
            if not (_exists(named, document) if kind == "path" else _resolves(named))
        }
    )
    assert missing == []


# --- history, across line breaks -------------------------------------------------------------------------------

# Narration that tests/test_layering.py's line-by-line reading cannot see or does not name: a tracker number split
# over two lines, and the words that say what the code replaced rather than what it does.
NARRATION = re.compile(r"\b[Ii]ssues?\s+#?\d+\b|\bformerly\b|\bused to (?:be|send|start|build|refuse|take|wait)\b")


def test_nothing_narrates_what_it_replaced() -> None:
    trees = ["conformance", "tests", "docs", "benchmarks"]
    paths = [p for tree in trees for p in (ROOT / tree).rglob("*") if p.suffix in (".py", ".md", ".toml", ".js")]
    paths += [*ROOT.glob("*.md"), ROOT / "run.py"]
    found = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in paths
        if "node_modules" not in path.parts and path.is_file() and path != Path(__file__)
        for match in NARRATION.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == []


# A merge left half done: git's conflict markers at the start of a line.
CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)|^={7}$", re.MULTILINE)


def test_no_file_holds_a_merge_conflict() -> None:
    trees = ["conformance", "tests", "docs", "benchmarks", ".ci", ".github"]
    suffixes = (".py", ".md", ".toml", ".js", ".json", ".yml", ".yaml", ".cfg", ".txt", ".html", "")
    paths = [p for tree in trees for p in (ROOT / tree).rglob("*") if p.suffix in suffixes]
    paths += [*ROOT.glob("*.md"), *ROOT.glob("*.toml"), ROOT / "run.py"]
    found = [
        f"{path.relative_to(ROOT)}:{source.count(chr(10), 0, match.start()) + 1}"
        for path in paths
        if "node_modules" not in path.parts and path.is_file() and path != Path(__file__)
        for source in [path.read_text(encoding="utf-8", errors="replace")]
        for match in CONFLICT.finditer(source)
    ]
    assert found == []
