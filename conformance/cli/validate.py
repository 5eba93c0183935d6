"""``conformance validate FILE``: judge documents offline; exit code as a live run (1 when a MUST rule failed, or
a SHOULD rule with ``--strict``; 2 when a file cannot be read or its kind cannot be told)."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from conformance.core.rules import Status
from conformance.judges import KINDS, DocumentError, Verdict, exit_code, judge_file, load, sniff

OPTIONS = ("resource", "issuer", "client_id", "url", "vendor", "limit", "iss_advertised")


class UsageError(ValueError):
    """An option of the command itself is wrong (not a file's fault)."""


def _extra_context(args: argparse.Namespace) -> dict[str, Any]:
    """``--context``: a JSON object of further keywords for the kinds' functions."""
    if not args.context:
        return {}
    try:
        extra = json.loads(args.context)
    except ValueError as exc:
        raise UsageError(f"--context is not JSON ({exc})") from None
    if not isinstance(extra, dict):
        raise UsageError(f"--context must be a JSON object, got {type(extra).__name__}")
    return extra


def _context(kind: str, args: argparse.Namespace, extra: dict[str, Any]) -> dict[str, Any]:
    """The options the kind's function takes; ``--context`` JSON adds any other keyword (e.g. ``issuers``)."""
    accepted = inspect.signature(KINDS[kind]).parameters
    context: dict[str, Any] = dict(extra)
    for name in OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            context[name] = value
    return {k: v for k, v in context.items() if k in accepted}


def _line(verdict: Verdict) -> str:
    text = f"  {verdict.status.upper():8} {verdict.rule} [{verdict.level}]"
    return text + (f": {verdict.message}" if verdict.message else "")


def run(args: argparse.Namespace) -> int:
    """Judge every file; one that cannot be read or told is said on stderr and the others are still judged (exit 2
    then, as for any usage error)."""
    try:
        extra = _extra_context(args)
    except UsageError as exc:
        print(f"conformance validate: {exc}", file=sys.stderr)
        return 2
    results: list[dict[str, Any]] = []
    verdicts: list[Verdict] = []
    unjudged = False
    for name in args.files:
        path = Path(name)
        try:
            kind = args.kind or sniff(load(path))  # the kind first: it says which options apply
            if kind is None:
                raise DocumentError(f"cannot tell what kind of document {path} is; pass --kind ({', '.join(KINDS)})")
            kind, found = judge_file(path, kind, **_context(kind, args, extra))
        except (OSError, DocumentError, ValueError, TypeError) as exc:
            print(f"conformance validate: {name}: {exc}", file=sys.stderr)
            unjudged = True
            continue
        verdicts.extend(found)
        results.append({"file": name, "kind": kind, "verdicts": [v.to_json() for v in found]})
    code = 2 if unjudged else exit_code(verdicts, strict=args.strict)
    if args.format == "json":
        print(json.dumps({"exit_code": code, "documents": results}, indent=2, ensure_ascii=False))
        return code
    for result in results:
        print(f"{result['file']} ({result['kind']})")
        for verdict in verdicts_of(result):
            print(_line(verdict))
    return code


def verdicts_of(result: dict[str, Any]) -> list[Verdict]:
    return [Verdict(v["rule"], Status(v["status"]), v["message"]) for v in result["verdicts"]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON document, header text, or image")
    parser.add_argument("--kind", choices=sorted(KINDS), help="what the file is (sniffed when omitted)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--strict", action="store_true", help="a failed SHOULD rule fails too")
    parser.add_argument("--resource", help="prm: the URL the host connects to (AUTH-PRM-02)")
    parser.add_argument(
        "--issuer",
        help="as-metadata: the issuer listed in authorization_servers (ASM-02, 08); authorization-response: "
        "the issuer the request went to (ISS-01, 02)",
    )
    parser.add_argument(
        "--iss-not-advertised",
        dest="iss_advertised",
        action="store_false",
        default=None,
        help="authorization-response: the metadata does not advertise iss (ISS-01/02 then do not apply)",
    )
    parser.add_argument("--client-id", dest="client_id", help="as-metadata: a predefined client (ASM-05)")
    parser.add_argument("--url", help="cimd: the URL the document is served at (AUTH-CIMD-01)")
    parser.add_argument("--vendor", help="tools: the _meta vendor prefix of the profile marker (default openai)")
    parser.add_argument("--limit", type=int, help="campaign-list: the limit the page was asked with")
    parser.add_argument("--context", help='other context as JSON, e.g. \'{"issuers": {"https://as": "https://as"}}\'')
