"""A passing example from the corpus for each rule, shipped as a small index so that an installed harness can show a
vendor what "right" looks like beside a failed rule (the report stays self-contained: the excerpt is embedded).

The index (``examples.json``) is generated from ``fixtures/`` (``python -m conformance.judges.examples
fixtures``); ``tests/test_corpus.py`` fails when it is out of date.
"""

from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

EXCERPT_CHARS = 1500
TEXT_SUFFIXES = (".json", ".txt")


@dataclass(frozen=True)
class Example:
    rule: str
    file: str  # relative to the repository root, e.g. fixtures/auth/prm/conforming.json
    summary: str
    excerpt: str


def build_index(fixtures: Path) -> dict[str, dict[str, str]]:
    """For each rule, the first conforming text document (no rule broken) that satisfies it, by path order."""
    index: dict[str, dict[str, str]] = {}
    for sidecar in sorted(fixtures.rglob("*.toml")):
        document = sidecar.with_name(sidecar.name.removesuffix(".toml"))
        about = tomllib.loads(sidecar.read_text("utf-8"))
        if about.get("breaks") or document.suffix not in TEXT_SUFFIXES or about["kind"] == "token-requests":
            continue
        text = document.read_text("utf-8")
        excerpt = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "\n…"
        for rule in about.get("satisfies", {}):
            index.setdefault(
                rule,
                {
                    "file": f"fixtures/{document.relative_to(fixtures).as_posix()}",
                    "summary": about["summary"],
                    "excerpt": excerpt,
                },
            )
    return dict(sorted(index.items()))


@cache
def _index() -> dict[str, Any]:
    try:
        text = resources.files("conformance.judges").joinpath("examples.json").read_text("utf-8")
    except OSError:
        return {}
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def passing_example(rule: str) -> Example | None:
    entry = _index().get(rule)
    if not isinstance(entry, dict):
        return None
    return Example(rule, str(entry["file"]), str(entry["summary"]), str(entry["excerpt"]))


def main(argv: list[str]) -> int:
    fixtures = Path(argv[0] if argv else "fixtures")
    target = Path(__file__).with_name("examples.json")
    target.write_text(json.dumps(build_index(fixtures), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
