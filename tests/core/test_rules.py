"""The catalog matches the requirements catalog, and checks cannot name unknown rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance import UnknownRuleError, rule
from conformance.core import rules as catalog_module
from conformance.core.rules import DOCUMENTS, IMPLEMENTED, RULES, SUITES, CatalogError, Level, parse_rows
from conformance.suites._checks import catalog_rows, load_all_checks

REQUIREMENTS = Path(__file__).resolve().parents[3] / "shared" / "requirements.md"


def requirement_ids() -> list[str]:
    text = REQUIREMENTS.read_text(encoding="utf-8")
    return re.findall(r"^\| ([A-Z]+(?:-[A-Z]+)?-\d+) \|", text, flags=re.M)


@pytest.mark.skipif(not REQUIREMENTS.exists(), reason="shared/requirements.md is not beside the clone")
def test_catalog_has_every_requirement_and_nothing_else() -> None:
    ids = requirement_ids()
    assert len(ids) == len(set(ids)) > 100
    assert set(ids) == set(RULES)


def test_every_rule_is_well_formed() -> None:
    for rule_id, entry in RULES.items():
        assert entry.id == rule_id
        assert entry.suite in SUITES
        assert isinstance(entry.level, Level)
        assert entry.title and entry.text and entry.source


def test_unknown_rule_id_fails_at_decoration() -> None:
    with pytest.raises(UnknownRuleError, match="NOPE-01"):
        rule("NOPE-01")
    with pytest.raises(UnknownRuleError):
        rule()


def test_bundled_checks_name_only_catalog_rules() -> None:
    load_all_checks()
    assert IMPLEMENTED, "no bundled check was found"
    assert set(IMPLEMENTED) <= set(RULES)


def test_catalog_rows_are_json_ready() -> None:
    rows = catalog_rows()
    assert len(rows) == len(RULES)
    for row in rows:
        assert {"id", "level", "suite", "title", "source", "offline", "implemented", "mutants"} <= set(row)
        assert isinstance(row["mutants"], list)
    assert any(row["implemented"] for row in rows)


def test_every_implemented_rule_is_proven_by_a_mutant() -> None:
    """A check that no mutant makes fail is not known to be able to fail."""
    from conformance.core.rules import HARNESS_RULES  # about the harness: proven by its own tests

    unproven = [
        row["id"]
        for row in catalog_rows()
        if row["implemented"] and not row["mutants"] and row["id"] not in HARNESS_RULES
    ]
    assert unproven == []


def test_every_rule_is_implemented_or_a_harness_rule() -> None:
    from conformance.core.rules import HARNESS_RULES

    missing = [row["id"] for row in catalog_rows() if not row["implemented"] and row["id"] not in HARNESS_RULES]
    assert missing == []


def test_the_catalog_is_a_leaf() -> None:
    """rules.py imports nothing of the package but the cache directory, the exceptions and the table of suites (itself
    a leaf), and pytest only inside the decorator (a report is read without pytest); loading checks and listing
    mutants live in _checks.py."""
    import ast

    import conformance.core.rules

    tree = ast.parse(Path(conformance.core.rules.__file__).read_text(encoding="utf-8"))
    top_level = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    modules = {n.module for n in top_level if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in top_level if isinstance(n, ast.Import) for a in n.names}
    inner = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    inner |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    leaves = {"conformance.core._cache", "conformance.core._exceptions", "conformance.core.targets"}
    assert {m for m in modules if m and m.startswith("conformance")} == leaves
    assert "pytest" not in modules
    assert {m for m in inner if m.startswith("conformance")} == leaves


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def test_titles_name_the_rule_without_repeating_its_text() -> None:
    """A title is a few words naming what the rule is about: never the start of its text, cut or whole."""
    for entry in RULES.values():
        assert not _words(entry.text).startswith(_words(entry.title)), f"{entry.id}: the title repeats the text"
        assert len(entry.title) <= 48 and not entry.title.endswith("."), f"{entry.id}: {entry.title!r} is no title"


def test_titles_are_unique_within_a_suite() -> None:
    for suite in SUITES:
        titles = [_words(r.title) for r in RULES.values() if r.suite == suite]
        assert len(titles) == len(set(titles)), f"{suite}: {sorted(t for t in titles if titles.count(t) > 1)}"


def test_every_source_letter_names_a_document() -> None:
    letters = {r.source.split(" ", 1)[0] for r in RULES.values()} - {"RFC", "Field", "OAuth", "MCP"}
    assert letters <= set(DOCUMENTS)
    assert RULES["TOK-01"].document == "Platform API (001_ac3353e89bc660bb.txt)"


def test_offline_rules_are_a_field_of_the_catalog() -> None:
    offline = {r.id for r in RULES.values() if r.offline}
    assert "AUTH-ASM-03" in offline and "AUTH-FLOW-03" not in offline


ROW = {"id": "AUTH-PRM-01", "level": "MUST", "suite": "auth", "title": "t", "text": "x", "source": "A"}


@pytest.mark.parametrize(
    "rows",
    [
        {"rule": []},
        [{**ROW, "colour": "red"}],
        [{k: v for k, v in ROW.items() if k != "title"}],
        [{**ROW, "level": "MAY"}],
        [{**ROW, "suite": "nope"}],
        [ROW, ROW],
        [{**ROW, "title": ""}],
        [{**ROW, "offline": "yes"}],
    ],
    ids=["not-rows", "unknown-field", "missing-field", "level", "suite", "twice", "empty", "offline"],
)
def test_a_malformed_catalog_row_is_refused(rows: object) -> None:
    with pytest.raises(CatalogError):
        parse_rows(rows)


def test_the_parsed_catalog_is_kept_in_the_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    raw = b'[[rule]]\nid = "AUTH-PRM-01"\nlevel = "MUST"\nsuite = "auth"\ntitle = "t"\ntext = "x"\nsource = "A"\n'
    cold = catalog_module._parsed(raw)
    assert [p.suffix for p in (tmp_path / "conformance").iterdir()] == [".json"]
    assert catalog_module._parsed(raw) == cold == [{k: v for k, v in ROW.items()}]
    for kept in (tmp_path / "conformance").iterdir():
        kept.write_bytes(b"{not json")  # a damaged cache is parsed around
    assert catalog_module._parsed(raw) == cold
    with pytest.raises(CatalogError, match=r"catalog\.toml"):
        catalog_module._parsed(b"[[rule]\nid = ", cached=False)
