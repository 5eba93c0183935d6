"""Cost of redaction: scrubbing captured strings while secrets keep arriving, and the last pass over a report.

    .venv/bin/python benchmarks/redaction.py [--secrets 1000] [--special 0.05] [--results 5000] [--runs 3]

A run registers secrets all along (tokens, codes, assertions: each one gives some tens of encoded forms) while
every exchange is scrubbed at capture; at the end the whole report is scrubbed again with every secret known.
Prints: the time to register N secrets interleaved with scrubbing a short header value after each (the pattern is
recompiled only as the number of forms grows geometrically), the number of forms, the scrub time of a 1 MB text,
and the time of `scrub_tree` over a synthetic report (tests/report/report_factory.py) of RESULTS results.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the synthetic report generator lives with the tests

from conformance.host._redact import Redactor  # noqa: E402
from tests.report.report_factory import build_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secrets", type=int, default=1000)
    parser.add_argument(
        "--special", type=float, default=0.05, help="share of secrets with characters every encoding changes"
    )
    parser.add_argument(
        "--long", type=float, default=0.0, help="share of ~800-character secrets (signed JWTs: access tokens, ids)"
    )
    parser.add_argument("--results", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    report = build_report(args.results)
    size = len(json.dumps(report))
    text = "lorem ipsum dolor sit amet " * 40_000
    adding, big, tree = [], [], []
    forms = 0
    for _ in range(args.runs):
        redactor = Redactor()
        start = time.perf_counter()
        for i in range(args.secrets):
            # Mostly tokens and codes; some configured keys and passwords with characters every encoding changes.
            special = i < args.special * args.secrets
            value = f'{secrets.token_hex(8)}/+&"<é' if special else secrets.token_urlsafe(24)
            if not special and i % 100 < args.long * 100:
                value = f"eyJhbGciOiJSUzI1NiJ9.{secrets.token_urlsafe(450)}.{secrets.token_urlsafe(256)}"
            redactor.add_secret(value, user="api" if i % 10 == 0 else None)
            redactor.scrub("Bearer abc, application/json; charset=utf-8")
        adding.append(time.perf_counter() - start)
        forms = len(redactor._forms)
        start = time.perf_counter()
        redactor.scrub(text)
        big.append(time.perf_counter() - start)
        start = time.perf_counter()
        redactor.scrub_tree(report)
        tree.append(time.perf_counter() - start)
    print(
        f"{args.secrets} secrets, {args.special:.0%} special, {args.long:.0%} long ({forms} encoded forms),"
        f" median of {args.runs} runs:"
    )
    print(f"  register each + scrub a header after each: {statistics.median(adding):.2f} s")
    print(f"  scrub {len(text) / 1e6:.1f} MB of text:                 {statistics.median(big) * 1000:.0f} ms")
    print(f"  scrub_tree of a {size / 1e6:.1f} MB report ({args.results} results): {statistics.median(tree):.2f} s")


if __name__ == "__main__":
    main()
