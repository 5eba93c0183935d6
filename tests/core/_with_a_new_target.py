"""Run by tests/core/test_targets.py in a fresh interpreter: the table of targets gains a row (an OCR sandbox, its
suite and its reference service) before anything reads it, and every reader shows the row: the settings, the
plugin's fixture, the CLI's URL flags, ``conformance init``'s files, the preflight's probe, the reference stack's
services. Exits non-zero (an assertion) at the first reader that missed it."""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

NAME = "conformance.core.targets"
VIEWS = "# -- views of the table"  # the rows are declared above it, the views derived below it
NEW_ROW = """
OCR = TargetKind(
    "ocr",
    label="the OCR sandbox",
    url_setting="ocr_url",
    url_help="base URL of the OCR sandbox",
    service="ocr",
    example_url="https://ocr.example.com",
    api_key_setting="ocr_api_key",
    probe="POST /v1/read",
)
TARGETS = MappingProxyType({**TARGETS, "ocr": OCR})
SUITES = (*SUITES, Suite("ocr", OCR, services=("ocr",)))
REFERENCE_SERVICES = (*REFERENCE_SERVICES, ReferenceService("ocr", requires=("idp",)))

"""


def install_table_with_a_new_row() -> None:
    spec = importlib.util.find_spec(NAME)
    assert spec is not None and spec.loader is not None and spec.origin is not None
    source = spec.loader.get_source(NAME)  # type: ignore[attr-defined]
    head, marker, tail = source.partition(VIEWS)
    assert marker, f"{spec.origin} lost its {VIEWS!r} line"
    module = types.ModuleType(NAME)
    module.__file__ = spec.origin
    sys.modules[NAME] = module
    exec(compile(head + NEW_ROW + marker + tail, spec.origin, "exec"), module.__dict__)


class _Response:
    status_code = 400  # a sandbox refuses the empty probe: reachable, key accepted
    request = types.SimpleNamespace(method="POST", url="https://ocr.example.test/v1/read")


class _Http:
    redactor = types.SimpleNamespace(scrub=lambda text: text)

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any, Any]] = []

    def request(self, method: str, url: str, **options: Any) -> _Response:
        self.sent.append((method, url, options.get("content"), options.get("headers")))
        return _Response()


def main() -> None:
    install_table_with_a_new_row()
    from conformance.config import CORE_OPTIONS, resolve

    specs = {spec.name: spec for spec in CORE_OPTIONS}
    assert (specs["ocr_url"].cli_flag, specs["ocr_url"].env_var) == ("--ocr-url", "CONFORMANCE_OCR_URL")
    assert specs["ocr_api_key"].secret
    env = {"CONFORMANCE_OCR_URL": "https://ocr.example.test", "CONFORMANCE_OCR_API_KEY": "k-ocr"}
    settings = resolve(cli={}, env=env, files=[], ini={})
    assert "ocr" in settings.selected_suites and settings.target("ocr") is not None

    from conformance.core.rules import SUITE_TARGET

    assert SUITE_TARGET["ocr"] == "ocr"

    import conformance.pytest.plugin as plugin

    assert getattr(plugin, "ocr_target", None) is not None, "the plugin has no ocr_target fixture"

    from conformance.cli._main import build_parser

    for command in ("init", "doctor"):
        args = build_parser(validate_arguments=False).parse_args([command, "--ocr-url", "https://ocr.example.test"])
        assert args.ocr_url == "https://ocr.example.test", command

    from conformance.cli.init import config_text, github_workflow

    config = config_text({"ocr_url": "https://ocr.example.test"}, "github")
    assert 'ocr_url = "https://ocr.example.test"' in config and "# suite ocr" in config
    assert "CONFORMANCE_OCR_API_KEY" in config
    workflow = github_workflow({"ocr_url": "https://ocr.example.test"})
    assert "ocr-url: https://ocr.example.test" in workflow
    assert "CONFORMANCE_OCR_API_KEY: ${{ secrets.CONFORMANCE_OCR_API_KEY }}" in workflow

    from conformance.suites.preflight import preflight

    http = _Http()
    findings = preflight(resolve(cli={"suite": "ocr"}, env=env, files=[], ini={}), http)
    assert [(f.target, f.ok) for f in findings] == [("ocr", True)], findings
    assert [(m, u, c) for m, u, c, _ in http.sent] == [("POST", "https://ocr.example.test/v1/read", b"")]
    assert http.sent[0][3] == {"Authorization": "Bearer k-ocr"}

    from conformance.reference.mutants import SERVICE_PACKAGES
    from conformance.reference.stack import _select_packages

    assert SERVICE_PACKAGES[-1] == "ocr"
    assert _select_packages(["ocr"]) == ["idp", "ocr"]
    print("the new row reached every reader")


if __name__ == "__main__":
    main()
