"""The corpus (``fixtures/``) proves the offline validators: every file's sidecar names the rules it breaks and
satisfies, and judging the file must say exactly that."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from conformance import judges
from conformance.core.rules import RULES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SIDECARS = sorted(FIXTURES.rglob("*.toml"))
# Each sidecar's kind, read once at collection (it picks the files of each parametrized test below).
KIND = {s: tomllib.loads(s.read_text("utf-8"))["kind"] for s in SIDECARS}
JUDGED = [s for s in SIDECARS if KIND[s] in judges.KINDS]

# Every rule a document alone can show (the catalog's `offline` rules; the rest need a live exchange: flows,
# counters, timing).
DOCUMENT_RULES = {rule.id for rule in RULES.values() if rule.offline}


def sidecar(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text("utf-8"))


def document_of(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".toml"))


def test_corpus_is_there() -> None:
    assert len(JUDGED) >= 80
    for path in SIDECARS:
        assert document_of(path).is_file(), f"{path} annotates a missing file"
        about = sidecar(path)
        assert about.get("summary"), f"{path}: say what the file shows"
        unknown = set(about.get("breaks", {})) | set(about.get("satisfies", {}))
        assert unknown <= set(RULES), f"{path}: unknown rule IDs {unknown - set(RULES)}"


@pytest.mark.parametrize("path", JUDGED, ids=lambda p: str(p.relative_to(FIXTURES)).removesuffix(".toml"))
def test_file_trips_exactly_the_rules_it_names(path: Path) -> None:
    about = sidecar(path)
    told = about["kind"] if about.get("sniff") is False else None  # a kind the document alone cannot show
    kind, verdicts = judges.judge_file(document_of(path), told, **about.get("context", {}))
    assert kind == about["kind"], f"sniffed {kind}, annotated {about['kind']}"
    by_rule = {v.rule: v for v in verdicts}
    assert set(by_rule) <= set(judges.KIND_RULES[kind]), "a judge says a verdict on a rule its registry row omits"
    broken = {v.rule for v in verdicts if v.broken}
    assert broken == set(about.get("breaks", {})), [v.to_json() for v in verdicts if v.broken]
    for rule in about.get("satisfies", {}):
        assert rule in by_rule and by_rule[rule].status == "passed", by_rule.get(rule)
    if not about.get("breaks"):
        assert all(v.status in ("passed", "skipped") for v in verdicts)


def test_the_judges_registry_names_every_document_rule() -> None:
    """The catalog's ``offline`` field (a document alone shows the rule) and the judges' registry (rule ID -> the
    kinds of document that judge it) name exactly the same rules."""
    assert set(judges.RULE_JUDGES) == DOCUMENT_RULES
    assert all(judges.judges_of(rule) for rule in DOCUMENT_RULES) and judges.judges_of("AUTH-TOK-01") == ()


def test_every_document_rule_has_a_passing_and_a_breaking_example() -> None:
    breaking: set[str] = set()
    passing: set[str] = set()
    for path in SIDECARS:
        about = sidecar(path)
        breaking |= set(about.get("breaks", {}))
        passing |= set(about.get("satisfies", {}))
    assert DOCUMENT_RULES - breaking == set()
    assert DOCUMENT_RULES - passing == set()
    assert breaking - DOCUMENT_RULES == set(), "a document shows these broken: mark them offline in catalog.toml"


IMAGE_SIDECARS = [s for s in SIDECARS if KIND[s] == "image"]


@pytest.mark.parametrize("path", IMAGE_SIDECARS, ids=lambda p: p.name.removesuffix(".toml"))
def test_image_facts(path: Path) -> None:
    """The decoders and metadata readers the live compression checks trust see what the sidecar says."""
    from conformance.judges.compression import facts

    seen = {k: v for k, v in facts(document_of(path).read_bytes()).to_json().items() if v is not None}
    assert seen == sidecar(path)["facts"]


TOKEN_SIDECARS = [s for s in SIDECARS if KIND[s] == "token-requests"]
_RELATION = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "==": lambda a, b: a == b}


def _counts(requests: dict[str, Any], mutants: frozenset[str] = frozenset()) -> dict[str, Any]:
    tokens = pytest.importorskip("conformance.reference.platform.tokens")
    from conformance.reference.platform.errors import ApiError

    found: dict[str, Any] = {}
    for name, body in requests.items():
        try:
            found[name] = tokens.count_input_tokens(body, mutants)
        except ApiError as exc:
            found[name] = {"status": exc.status, "code": exc.code}
        except Exception:  # a mutant crashing is what a 500 is
            found[name] = {"status": 500, "code": None}
    return found


def _holds(doc: dict[str, Any], counts: dict[str, Any]) -> bool:
    """Every relation holds and every refused request is refused (not counted)."""
    for relation in doc["relations"]:
        left, op, right = relation.split()
        if not (isinstance(counts[left], int) and isinstance(counts[right], int)):
            return False
        if not _RELATION[op](counts[left], counts[right]):
            return False
    refused = [n for n, want in doc["expected"].items() if isinstance(want, dict)]
    return all(isinstance(counts[n], dict) and not 200 <= counts[n]["status"] < 300 for n in refused)


@pytest.mark.parametrize("path", TOKEN_SIDECARS, ids=lambda p: p.name.removesuffix(".toml"))
def test_token_requests_and_their_counts(path: Path) -> None:
    """The reference tokenizer gives each request the count (or the 4xx) the corpus states, twice the same (TOK-02),
    the stated relations hold, and every named mutant breaks them."""
    import json

    doc = json.loads(document_of(path).read_text("utf-8"))
    counts = _counts(doc["requests"])
    assert counts == doc["expected"]
    assert _counts(doc["requests"]) == counts
    assert _holds(doc, counts)
    for mutant, rule in sidecar(path).get("mutants", {}).items():
        assert rule in sidecar(path)["satisfies"]
        assert not _holds(doc, _counts(doc["requests"], frozenset({mutant}))), f"{mutant} leaves {path.name} intact"


def test_the_shipped_examples_index_is_up_to_date() -> None:
    """conformance/judges/examples.json (what the HTML report embeds) is generated from this corpus."""
    import json

    from conformance.judges import examples

    shipped = json.loads(Path(examples.__file__).with_name("examples.json").read_text("utf-8"))
    assert shipped == examples.build_index(FIXTURES), "run: python -m conformance.judges.examples fixtures"
    for rule, entry in shipped.items():
        path = FIXTURES.parent / entry["file"]
        assert rule in sidecar(Path(f"{path}.toml"))["satisfies"] and not sidecar(Path(f"{path}.toml"))["breaks"]
