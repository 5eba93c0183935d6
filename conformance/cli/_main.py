"""The ``conformance`` command: the catalog, reports, and the embedded reference stack.

conformance rules [--json]                 the rule catalog, with implementation and mutant status
conformance report report.json -o out.html [--compare OLD.json]
                                           re-render the reviewer's HTML from a report.json
                                           (-o DIR, an existing directory or a path ending in /, writes
                                           DIR/report.html)
conformance up [--mutant NAME] [--env-file FILE]
                                           start the reference stack, print its settings (secrets masked) and
                                           write them all to an env file (mode 600)
conformance demo [--suite S,...] [--report-dir DIR] [--mutant NAME]
                                           start the stack, run the suites against it, stop, exit with the verdict
conformance summary report.json [--format markdown|text|json]
                                           the verdict, counts and failed rules per target (CI job summaries)
conformance init [--target-url U] [--platform-url U] [--compression-url U] [--login-url U] [--ci github|gitlab|none]
                 [--dir DIR] [--force]     write conformance.toml, login steps (from the login page), an empty
                                           baseline and the CI workflow; never overwrites without --force
conformance doctor [--target-url U] [--platform-url U] [--compression-url U] [--targets-file F] [--suite S,...]
                                           the preflight alone: targets reachable, discovery parses, credentials
                                           and API keys set and accepted; one line each, exit 1 on a problem
conformance validate FILE... [--kind K] [--format text|json] [--strict] [--resource U] [--issuer U] ...
                                           judge documents offline with the live checks' validators; exit 1
                                           when a MUST rule failed (2: unreadable file or unknown kind)
conformance diff OLD.json NEW.json [--format console|markdown|json]
                                           regressions, fixes, new and removed rules per target; exit 1 on a
                                           regression
conformance replay report.json RULE [CASE] [--target-url U] [--json]
                                           send a case's recorded requests again (fresh credentials from the
                                           environment) and compare the answers; exit 0 reproduced, 1 differs
conformance merge A.json B.json ... -o fleet.json [--html fleet.html]
                                           one fleet report from shards (CI matrix jobs); a report of a single
                                           target is named NAME=PATH, else by its file (or directory) name;
                                           exit 2 on the same target in two shards or an unreadable shard
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.core._exceptions import ConformanceError
from conformance.core.targets import TARGETS


def _cmd_rules(args: argparse.Namespace) -> int:
    from conformance.core.rules import SUITES
    from conformance.suites._checks import catalog_rows

    rows = catalog_rows()
    if args.suite:
        wanted = [s.strip() for s in args.suite.split(",") if s.strip()]
        unknown = sorted(set(wanted) - set(SUITES))
        if unknown:
            raise ConformanceError(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
        rows = [r for r in rows if r["suite"] in wanted]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"conformance rule catalog ({len(rows)} rules)")
    for column in ("id", "level", "suite", "implemented", "cases", "mutants", "title"):
        table.add_column(column, overflow="fold", no_wrap=column == "id")
    for row in rows:
        proven = ", ".join(row["mutants"]) or ("unproven" if row["implemented"] else "")
        cases = str(row["cases"]) if row.get("cases") is not None else ""  # attack-table size, when it has one
        implemented = "yes" if row["implemented"] else "no"
        table.add_row(row["id"], row["level"], row["suite"], implemented, cases, proven, row["title"])
    Console().print(table)
    return 0


def why_not_written(path: Path, exc: OSError) -> str:
    """Why a file could not be written, in the user's terms: a folder on its path that is a regular file is named
    (the system only says "File exists" or "Not a directory")."""
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a folder"
    return exc.strerror or str(exc)


def _cmd_report(args: argparse.Namespace) -> int:
    from conformance.report.html import write_html
    from conformance.report.summary import load_report

    try:
        report = load_report(Path(args.input), "report")
        compare = load_report(Path(args.compare), "report --compare") if args.compare else None
    except ConformanceError as exc:
        print(f"conformance {exc}", file=sys.stderr)
        return 2
    output = Path(args.output) if args.output else Path(args.input).with_suffix(".html")
    if output.is_dir() or (args.output and args.output.endswith(("/", os.sep))):
        output = output / "report.html"  # -o DIR writes DIR/report.html, as a run writes it
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_html(report, output, compare)
    except OSError as exc:
        print(f"conformance report: cannot write {output}: {why_not_written(output, exc)}", file=sys.stderr)
        return 2
    print(f"wrote {output}")
    if args.har:
        from conformance.report.har import write_har

        try:
            write_har(report, Path(args.har))  # report.json is already scrubbed: the HAR shows nothing more
        except OSError as exc:
            print(
                f"conformance report: cannot write {args.har}: {why_not_written(Path(args.har), exc)}", file=sys.stderr
            )
            return 2
        print(f"wrote {args.har}")
    if args.sarif:
        from conformance.report.sarif import write_sarif

        try:
            write_sarif(report, Path(args.sarif))
        except OSError as exc:
            print(
                f"conformance report: cannot write {args.sarif}: {why_not_written(Path(args.sarif), exc)}",
                file=sys.stderr,
            )
            return 2
        print(f"wrote {args.sarif}")
    return 0


def _latency(text: str) -> float:
    """``--latency``'s value in seconds (a bad one is a usage error)."""
    from conformance.reference._latency import parse_latency

    try:
        return parse_latency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _stack(
    mutants: list[str],
    suites: str | None = None,
    latency_s: float = 0.0,
    launched: Callable[[dict[str, str]], None] | None = None,
    packages_up: Callable[[frozenset[str]], None] | None = None,
) -> Any:
    try:
        from conformance.reference.stack import running_stack
    except ImportError as exc:
        raise ConformanceError(
            f"the embedded stack needs the reference extra: pip install 'conformance[reference]' ({exc})"
        ) from None
    from conformance.core.targets import SUITE_SERVICES

    wanted = [s for s in suites.split(",") if s in SUITE_SERVICES] if suites else None
    services = sorted({service for s in wanted for service in SUITE_SERVICES[s]}) if wanted is not None else None
    return running_stack(
        mutants=mutants, services=services, latency_s=latency_s, launched=launched, packages_up=packages_up
    )


def _check_env_file(path: Path) -> None:
    """Before the stack starts: the env file can be written (created 0600 when new), or one line says why."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError as exc:
        raise ConformanceError(f"--env-file {path}: cannot write it ({why_not_written(path, exc)})") from None


def _cmd_up(args: argparse.Namespace) -> int:
    if args.env_file:
        _check_env_file(Path(args.env_file))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with _stack(args.mutant, latency_s=args.latency) as stack:
        # Secrets go to a file readable by the owner only, never to the terminal (scroll-back, CI logs): the
        # given --env-file, else stack.env in the stack's data directory (0700, removed when the stack stops).
        env_file = Path(args.env_file) if args.env_file else stack.data_dir / "stack.env"
        stack.write_env_file(env_file)
        from conformance.config import all_options

        declared = {o.env_var for o in all_options() if o.secret}  # e.g. the test accounts' logins
        for name, value in stack.public_settings(declared).items():
            print(f"{name}={value}", flush=True)
        print(f"# every setting, secrets included: {env_file} (mode 600); load it with: set -a; . {env_file}; set +a")
        print("# reference stack is up; Ctrl-C to stop", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from conformance.cli import _demo
    from conformance.config import check_report_dir

    report_dir = Path(args.report_dir).resolve()
    check_report_dir(report_dir, "--report-dir")  # before the stack starts, not after the run
    parts = _demo.plan(report_dir, args.suite, args.pytest_args)
    join = _demo.Join(report_dir, _demo.joined_formats(args.pytest_args), color=sys.stdout.isatty())
    with tempfile.TemporaryDirectory(prefix="conformance-demo-") as gate_dir, ThreadPoolExecutor(1) as joining:
        runs = _demo.DemoRuns(parts, Path(gate_dir), ended=join.take)
        try:
            with _stack(
                args.mutant, args.suite, latency_s=args.latency, launched=runs.start, packages_up=runs.up
            ) as stack:
                runs.open(stack.startup_s)
                try:
                    runs.wait()
                finally:
                    # Interrupted or not, what the runs decided is joined into the run's reports, while the stack
                    # stops.
                    joined = joining.submit(join.write)
            return runs.exit_code(joined.result())
        except BaseException as exc:
            if not runs.opened:
                runs.shut(str(exc) or type(exc).__name__)
            raise


def _cmd_cimd_export(args: argparse.Namespace) -> int:
    from conformance.host.cimd_export import export_cimd
    from conformance.host.identity import HostKey

    if not args.key and not args.private_key_out:
        raise ConformanceError(
            "cimd export: a new key is generated; give --private-key-out FILE (outside the public directory) to keep "
            "it, or --key FILE to publish an existing one"
        )
    key = HostKey.load(args.key) if args.key else None
    result = export_cimd(
        args.directory,
        args.base_url,
        key,
        private_key_path=args.private_key_out,
        callback_ids=args.callback_id,
    )
    for url, path in result.files.items():
        print(f"{url} -> {path}")
    if result.private_key is not None:
        print(f"private key (keep it secret, never publish it): {result.private_key}")
    print(f"client_id: {result.client_id}  kid: {result.kid}")
    print(f"run with: --client-metadata-url {result.client_id} and the key file as --client-key")
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from conformance.report.summary import env_redactor, load_report, render

    report = load_report(Path(args.input)).scrubbed(env_redactor().scrub_tree)
    sys.stdout.write(render(report, args.format))
    return report.verdict.exit_code if args.exit_code else 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from conformance.report.diff import diff_reports, render
    from conformance.report.summary import env_redactor, load_report

    redactor = env_redactor()
    old = load_report(Path(args.old), "diff").scrubbed(redactor.scrub_tree)
    new = load_report(Path(args.new), "diff").scrubbed(redactor.scrub_tree)
    data = diff_reports(old, new)
    sys.stdout.write(render(data, args.format, color=sys.stdout.isatty()))
    return 1 if data["counts"]["regression"] else 0


def _shard(arg: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH``: a shard's label (the name of a single target's report) and its file."""
    name, sep, rest = arg.partition("=")
    if sep and name and "/" not in name and os.sep not in name:
        return name, Path(rest)
    path = Path(arg)
    return (path.parent.name or path.stem) if path.stem == "report" else path.stem, path


def _cmd_merge(args: argparse.Namespace) -> int:
    from conformance.report.fleet import merge_reports
    from conformance.report.json_writer import write_json
    from conformance.report.model import InvalidReport, RunReport
    from conformance.report.summary import load_report

    named = [_shard(arg) for arg in args.inputs]
    merged = merge_reports([(label, load_report(path, "merge")) for label, path in named], [str(p) for _, p in named])
    try:
        RunReport.from_json(merged.to_json())  # what is written must read back (the shipped schema)
    except InvalidReport as exc:
        raise ConformanceError(f"merge: the merged report would be {exc}") from None
    writing = Path(args.output)
    try:
        write_json(merged, writing)
        print(f"wrote {args.output}")
        if args.html:
            from conformance.report.html import write_html

            writing = Path(args.html)
            write_html(merged, writing)
            print(f"wrote {args.html}")
    except OSError as exc:
        raise ConformanceError(f"merge: cannot write {writing}: {why_not_written(writing, exc)}") from None
    print(f"verdict: {merged.verdict.status} — {merged.verdict.reason}")
    return 0


def _add_target_url_flags(parser: argparse.ArgumentParser) -> None:
    """One URL flag a target kind of the table (``--target-url``, ``--platform-url``, ...), as a run names it."""
    for kind in TARGETS.values():
        parser.add_argument(kind.flag, dest=kind.url_setting, metavar="URL", help=kind.url_help)


def _target_urls(args: argparse.Namespace) -> dict[str, str | None]:
    """The URL flags' values, by setting name."""
    return {kind.url_setting: getattr(args, kind.url_setting) for kind in TARGETS.values()}


def _cmd_init(args: argparse.Namespace) -> int:
    from conformance.cli.init import run_init
    from conformance.config import all_options, convert

    # The URLs are the run's options: the same reading as a run gives them, before anything is written.
    specs = {spec.name: spec for spec in all_options()}
    urls = _target_urls(args)
    for kind in TARGETS.values():
        convert(specs[kind.url_setting], urls[kind.url_setting], kind.flag)
    done = run_init(
        Path(args.dir),
        urls=urls,
        login_url=args.login_url,
        ci=args.ci,
        client_id=args.client_id,
        publisher_certfile=args.publisher_certfile,
        publisher_keyfile=args.publisher_keyfile,
        force=args.force,
        allow_insecure_loopback=args.allow_insecure_loopback,
        ca_bundle=args.ca_bundle,
    )
    for path, what in done:
        print(f"{what:34} {path}")
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from conformance.config import read_config_files, resolve
    from conformance.suites.preflight import preflight

    cli = {
        **_target_urls(args),
        "targets_file": args.targets_file,
        "suite": args.suite,
        "allow_insecure_loopback": True if args.allow_insecure_loopback else None,
    }
    files = read_config_files(Path.cwd(), Path(args.config) if args.config else None)
    findings = preflight(resolve(cli=cli, env=os.environ, files=files))
    for finding in findings:
        print(finding.line())
    problems = sum(not f.ok for f in findings)
    print(f"{problems} problem(s)" if problems else "ready: no problem found")
    return 1 if problems else 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from conformance.cli.validate import run

    return run(args)


def _cmd_attest(args: argparse.Namespace) -> int:
    from conformance.report.attest import ci_run_url, predicate, statement
    from conformance.report.summary import load_report

    path = Path(args.input)
    report = load_report(path, "attest")
    url = args.url or ci_run_url()
    document = predicate(report, url=url) if args.predicate_only else statement(path, report, url=url)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if not args.output:
        sys.stdout.write(text)
        return 0
    output = Path(args.output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConformanceError(f"attest: cannot write {output}: {why_not_written(output, exc)}") from None
    print(f"wrote {output} ({document.get('predicate', document)['result']})")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from conformance.cli.replay import run

    return run(args, sys.stdout)


def _add_report(sub: Any) -> None:
    report = sub.add_parser("report", help="render report.html from a report.json")
    report.add_argument("input")
    report.add_argument("-o", "--output", help="HTML file, or a directory to write report.html into")
    report.add_argument("--compare", metavar="OLD.json", help="mark the rules that changed since this earlier run")
    report.add_argument("--har", metavar="OUT.har", help="also write the evidence as an HTTP Archive 1.2")
    report.add_argument("--sarif", metavar="OUT.sarif", help="also write the failed and warned rules as SARIF 2.1.0")
    report.set_defaults(func=_cmd_report)
    replay = sub.add_parser("replay", help="send a case's recorded requests again and compare the answers")
    from conformance.cli.replay import add_arguments

    add_arguments(replay)
    replay.set_defaults(func=_cmd_replay)


def _add_diff_and_merge(sub: Any) -> None:
    diff = sub.add_parser("diff", help="what changed between two report.json files; exit 1 on a regression")
    diff.add_argument("old", help="the earlier report.json (the last certification)")
    diff.add_argument("new", help="the later report.json")
    diff.add_argument("--format", choices=("console", "markdown", "json"), default="console")
    diff.set_defaults(func=_cmd_diff)
    merge = sub.add_parser("merge", help="combine reports of shards (one or more targets each) into one")
    merge.add_argument("inputs", nargs="+", metavar="REPORT", help="report.json of a shard, or NAME=report.json")
    merge.add_argument("-o", "--output", required=True, help="the merged report.json")
    merge.add_argument("--html", help="also write the merged report.html here")
    merge.set_defaults(func=_cmd_merge)
    attest = sub.add_parser("attest", help="the verdict as an in-toto statement about report.json, to sign")
    attest.add_argument("input", help="the run's report.json (the statement's subject)")
    attest.add_argument("-o", "--output", help="where to write it (default: standard output)")
    attest.add_argument(
        "--predicate-only",
        action="store_true",
        help="only the test-result predicate (actions/attest's predicate-path, cosign attest-blob --predicate)",
    )
    attest.add_argument("--url", help="the CI run that made the report (default: from the CI's environment)")
    attest.set_defaults(func=_cmd_attest)


def build_parser(validate_arguments: bool = True) -> argparse.ArgumentParser:
    """``validate_arguments=False``: the ``validate`` command without its options, whose choices need every
    validator imported (a costly import); :func:`main` builds them only when ``validate`` is on the command line."""
    parser = argparse.ArgumentParser(prog="conformance", description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    rules = sub.add_parser("rules", help="print the rule catalog")
    rules.add_argument("--json", action="store_true", help="JSON array instead of a table")
    rules.add_argument("--suite", help="only these suites (comma list)")
    rules.set_defaults(func=_cmd_rules)
    _add_report(sub)
    up = sub.add_parser("up", help="start the embedded reference stack and print the settings for a run")
    up.add_argument("--mutant", action="append", default=[], help="start with this defect (repeatable)")
    up.add_argument(
        "--env-file",
        help="write every setting to this file (mode 600); default stack.env in the stack's temporary data directory",
    )
    up.set_defaults(func=_cmd_up)
    demo = sub.add_parser("demo", help="run every suite against the embedded reference stack")
    demo.add_argument("--suite", help="only these suites (comma list)")
    demo.add_argument("--report-dir", default="reports")
    demo.add_argument("--mutant", action="append", default=[], help="certify a mutant instead (repeatable)")
    demo.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    demo.set_defaults(func=_cmd_demo)
    latency_help = "serve the stack as a remote target: every answer that much later, a new connection's once more"
    for command in (up, demo):
        command.add_argument("--latency", type=_latency, default=0.0, metavar="DURATION", help=latency_help + " (50ms)")
    summary = sub.add_parser("summary", help="the verdict, counts and failed rules of a report.json")
    summary.add_argument("input", help="report.json")
    summary.add_argument("--format", choices=("markdown", "text", "json"), default="text")
    summary.add_argument("--exit-code", action="store_true", help="exit with the report's verdict (0 accepted)")
    summary.set_defaults(func=_cmd_summary)
    init = sub.add_parser("init", help="write conformance.toml, login steps, a baseline and the CI workflow")
    init.add_argument("--dir", default=".", help="where to write (default: the current directory)")
    _add_target_url_flags(init)
    init.add_argument("--login-url", help="the authorization server's login page: the login steps start from it")
    init.add_argument(
        "--client-id",
        help="a predefined client: without --login-url, the login page is the one its authorization request reaches",
    )
    for end in ("certfile", "keyfile"):
        init.add_argument(
            f"--publisher-{end}",
            help="without --client-id: the host's CIMD publisher TLS " + end[:-4] + " (the login page is the one an "
            "authorization request naming its client metadata document reaches)",
        )
    init.add_argument("--ci", choices=("github", "gitlab", "none"), default="github", help="CI job to write")
    init.add_argument("--force", action="store_true", help="overwrite files that exist")
    init.add_argument("--allow-insecure-loopback", action="store_true", help="http:// login page on 127.0.0.1")
    init.add_argument("--ca-bundle", help="PEM file of extra CA certificates to trust for the login page")
    init.set_defaults(func=_cmd_init)
    doctor = sub.add_parser("doctor", help="the preflight alone: is everything a run needs in place?")
    doctor.add_argument("--config", help="configuration file (default conformance.toml, then pyproject.toml)")
    _add_target_url_flags(doctor)
    doctor.add_argument("--targets-file", help="a fleet's targets file: every named target is checked")
    doctor.add_argument("--suite", help="only these suites (comma list)")
    doctor.add_argument("--allow-insecure-loopback", action="store_true")
    doctor.set_defaults(func=_cmd_doctor)
    _add_diff_and_merge(sub)
    cimd = sub.add_parser("cimd", help="client metadata documents for static hosting")
    cimd_sub = cimd.add_subparsers(dest="cimd_command", required=True)
    export = cimd_sub.add_parser("export", help="write the CIMD documents and JWKS for static hosting")
    export.add_argument("directory", help="public directory to write the documents into")
    export.add_argument("--base-url", required=True, help="public HTTPS origin that will serve the directory")
    export.add_argument("--key", help="existing private key (PEM) to publish the public half of")
    export.add_argument("--private-key-out", help="where to save a generated key (outside the public directory)")
    export.add_argument("--callback-id", action="append", default=[], help="also a callback-specific document")
    export.set_defaults(func=_cmd_cimd_export)
    validate = sub.add_parser("validate", help="judge documents offline (same rule IDs and exit code as a run)")
    if validate_arguments:
        from conformance.cli.validate import add_arguments

        add_arguments(validate)
    validate.set_defaults(func=_cmd_validate)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(validate_arguments="validate" in words)
    args = parser.parse_args(words)
    try:
        code: int = args.func(args)
    except ConformanceError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_left()
    return code


def _reader_left() -> int:
    """The reader of standard output went away (``conformance rules --json | head``): as a Unix filter does, stop
    quietly; stdout is pointed at /dev/null so the interpreter's own flush at exit finds no pipe to fail on."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a filter stopped this way


if __name__ == "__main__":
    raise SystemExit(main())
