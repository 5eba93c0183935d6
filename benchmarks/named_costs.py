"""The costs the code names in words ("costly, so one is shared", "imported on first use"), measured: each one in a
fresh interpreter, after what a run has already loaded by then, as the median CPU (``time.process_time``) of the
statement alone; the figures go to docs/performance.md, never into the code's comments.

    .venv/bin/python benchmarks/named_costs.py [--repeat 7] [--only NAME ...]

A cost marked "cold" is measured with no bytecode cache (``-B`` and an empty ``PYTHONPYCACHEPREFIX``), as in a
fresh CI job or under ``PYTHONDONTWRITEBYTECODE``. "nagle" is wall time, not CPU: a keep-alive request to a loopback
``http.server`` whose answer's head and body are two writes, with Nagle's algorithm on and off. Machine load moves
the CPU figures a little and the wall figures a lot; compare runs taken one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REWRITE_SETUP = (
    "import ast, importlib.util, pathlib; from _pytest.assertion.rewrite import rewrite_asserts;"
    " root = pathlib.Path(importlib.util.find_spec('{package}').origin).parent;"
    " sources = [(str(p), p.read_bytes()) for p in sorted(root.rglob('*.py'))]"
)
REWRITE = (
    "for name, source in sources:\n    tree = ast.parse(source)\n    rewrite_asserts(tree, source, name)\n"
    "    compile(tree, name, 'exec', dont_inherit=True)"
)

# (name, what, already loaded by then, measured statement, cold)
COSTS: list[tuple[str, str, str, str, bool]] = [
    ("ssl-default", "an SSL context with the system trust store", "import ssl", "ssl.create_default_context()", False),
    ("ssl-bare", "an SSL context without it", "import ssl", "ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)", False),
    (
        "random-text",
        "100 PKCE verifiers, one OS read per character (secrets.choice)",
        "import secrets, string; A = string.ascii_letters + string.digits + '-._~'",
        "[''.join(secrets.choice(A) for _ in range(64)) for _ in range(100)]",
        False,
    ),
    (
        "random-text-batched",
        "100 PKCE verifiers, a few OS reads each (oauth.random_text)",
        "import string; from conformance.host.oauth import random_text;"
        " A = string.ascii_letters + string.digits + '-._~'",
        "[random_text(64, A) for _ in range(100)]",
        False,
    ),
    (
        "httpx-cli",
        "httpx's command-line client (httpx._main)",
        "import conformance.core._httpx_cli",
        "import httpx._main",
        False,
    ),
    ("anyio-plugin", "anyio's pytest plugin", "import pytest", "import anyio.pytest_plugin", False),
    ("anyio-plugin-cold", "anyio's pytest plugin, no bytecode", "import pytest", "import anyio.pytest_plugin", True),
    (
        "validate-parser",
        "the `validate` command's options (every validator)",
        "from conformance.cli._main import build_parser",
        "build_parser(True)",
        False,
    ),
    (
        "lazy-validators",
        "jsonschema, PyJWT, cryptography.x509",
        "import conformance.pytest.plugin",
        "import jsonschema, jwt, cryptography.x509",
        False,
    ),
    (
        "mcp-session",
        "the MCP SDK client session (pydantic models)",
        "import conformance.pytest.plugin",
        "import conformance.host.mcp_session",
        False,
    ),
    (
        "mcp-session-gc",
        "the same, with the collector off while it is built",
        "import conformance.pytest.plugin, gc; gc.disable()",
        "import conformance.host.mcp_session",
        False,
    ),
    (
        "mcp-server-side",
        "the `mcp` package's server-side re-exports",
        "import conformance.host.mcp_session, mcp",
        "mcp.ClientSession",
        False,
    ),
    ("hypothesis", "Hypothesis", "import conformance.pytest.plugin", "import hypothesis", False),
    ("hypothesis-cold", "Hypothesis, no bytecode", "import conformance.pytest.plugin", "import hypothesis", True),
    ("tokenizer", "the platform sandbox's tokenizer (bpe_openai)", "import json", "import bpe_openai", False),
    (
        "tokenizer-count",
        "a first count by the package's Encoding (its import, the encoding's rank tables)",
        "import json",
        "import bpe_openai; bpe_openai.get_encoding('o200k_base').encode_ordinary('hi')",
        False,
    ),
    (
        "tokenizer-backend",
        "the same count by the Rust tokenizer alone (shortcut tokenizer-backend)",
        "import conformance.core._shortcuts as s",
        "s.bpe_tokenizer('o200k_base').encode('hi')",
        False,
    ),
    (
        "boto3-s3-client",
        "a boto3 S3 client (its session and S3's service model)",
        "import boto3",
        "boto3.session.Session().client('s3', region_name='us-east-1', endpoint_url='https://127.0.0.1:1',"
        " aws_access_key_id='k', aws_secret_access_key='s')",
        False,
    ),
    ("http-server", "the standard library's http.server", "import json", "import http.server", False),
    (
        "html-templates",
        "compiling the HTML report's templates (no bytecode cache)",
        "import conformance.report.html as h; h._bytecode_cache = lambda options: None",
        "h._environment().get_template('report.html.j2')",
        False,
    ),
    (
        "png-large",
        "encoding TOK-06's large solid PNG (Pillow)",
        "import io; from PIL import Image; im = Image.new('RGB', (2048, 1024), (200, 30, 30))",
        "im.save(io.BytesIO(), 'PNG')",
        False,
    ),
    (
        "json-indent",
        "a 5,000-entry evidence document, json.dumps with indent",
        "import json; d = {'log': {'entries': [{'request': {'url': 'https://a/' + str(i), 'headers': "
        "[{'name': 'h', 'value': 'v' * 40}] * 8}, 'response': {'status': 200, 'body': 'x' * 300}} "
        "for i in range(5000)]}}",
        "json.dumps(d, indent=2, ensure_ascii=False)",
        False,
    ),
    (
        "json-compact",
        "the same document, compact",
        "import json; d = {'log': {'entries': [{'request': {'url': 'https://a/' + str(i), 'headers': "
        "[{'name': 'h', 'value': 'v' * 40}] * 8}, 'response': {'status': 200, 'body': 'x' * 300}} "
        "for i in range(5000)]}}",
        "json.dumps(d, ensure_ascii=False, separators=(',', ':'))",
        False,
    ),
    (
        "rewrite-package",
        "pytest's assertion rewriting of every module of the package, compiled from source",
        REWRITE_SETUP.format(package="conformance"),
        REWRITE,
        False,
    ),
    (
        "rewrite-hypothesis",
        "the same for every module of Hypothesis",
        REWRITE_SETUP.format(package="hypothesis"),
        REWRITE,
        False,
    ),
    (
        "gc-full",
        "one full collection over an auth run's imported heap",
        "import gc, conformance.pytest.plugin, conformance.host.mcp_session, conformance.host.oauth, jsonschema",
        "gc.collect()",
        False,
    ),
    (
        "gc-frozen",
        "the same collection with that heap frozen",
        "import gc, conformance.pytest.plugin, conformance.host.mcp_session, conformance.host.oauth, jsonschema;"
        " gc.freeze()",
        "gc.collect()",
        False,
    ),
]

PROBE = """
import json, sys, time
exec(sys.argv[1])
started = time.process_time()
exec(sys.argv[2])
print(json.dumps(time.process_time() - started))
"""

NAGLE = """
import http.client, http.server, json, statistics, sys, threading, time
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = sys.argv[1] == "off"
    def do_GET(self):
        body = b"{}" * 200
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1])
times = []
for _ in range(40):
    started = time.perf_counter()
    connection.request("GET", "/")
    connection.getresponse().read()
    times.append(time.perf_counter() - started)
server.shutdown()
print(json.dumps(statistics.median(times[5:])))
"""


def _run(code: list[str], cold: bool) -> float:
    env = dict(os.environ)
    argv = [sys.executable]
    with tempfile.TemporaryDirectory() as empty:
        if cold:
            env["PYTHONPYCACHEPREFIX"] = empty
            argv.append("-B")
        out = subprocess.run(
            [*argv, "-c", *code], env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True
        )
    return float(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="*", help="only these names")
    args = parser.parse_args()
    for name, what, before, measured, cold in COSTS:
        if args.only and name not in args.only:
            continue
        try:
            runs = [_run([PROBE, before, measured], cold) for _ in range(args.repeat)]
        except subprocess.CalledProcessError as exc:
            print(f"{name:20s} not measured: {exc.stderr.strip().splitlines()[-1]}")
            continue
        print(f"{name:20s} {statistics.median(runs) * 1000:8.1f} ms CPU  {what} (median of {len(runs)})")
    for mode in ("on", "off"):
        if args.only and f"nagle-{mode}" not in args.only:
            continue
        runs = [_run([NAGLE, mode], False) for _ in range(max(1, args.repeat // 2))]
        what = f"a keep-alive loopback request, head and body written apart, Nagle {mode}"
        print(f"{'nagle-' + mode:20s} {statistics.median(runs) * 1000:8.1f} ms wall {what} (median of {len(runs)})")


if __name__ == "__main__":
    main()
