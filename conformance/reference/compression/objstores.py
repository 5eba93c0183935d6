"""The stack's object stores, served over TLS with real credential checks.

``python -m conformance.reference.compression.objstores s3 --host H --port P --certfile F --keyfile F``
runs a moto S3 server with IAM authentication on: one user whose fixed key pair comes from the environment
(``OBJSTORE_A_ACCESS_KEY_ID``, ``OBJSTORE_A_SECRET_ACCESS_KEY``), allowed to put objects and set their ACLs (and
read them back, for the harness), and the buckets of ``OBJSTORE_A_BUCKETS``. Other keys or a wrong secret get
moto's own ``InvalidAccessKeyId`` / ``SignatureDoesNotMatch``.

``... objstores gcs ...`` runs gcp-storage-emulator in memory with the buckets of ``OBJSTORE_B_BUCKETS``, behind
a bearer check: only the access tokens of ``OBJSTORE_B_TOKENS`` are accepted (the emulator itself checks none).
Both answer ``GET /healthz`` for the stack's health probe.
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import ssl
import sys
from collections.abc import Callable, Iterable
from functools import partial
from http import server
from typing import TYPE_CHECKING, Any

from conformance.reference._latency import delayed_handler
from conformance.reference._service import add_latency_argument

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

S3_USER = "conformance-store"
_S3_ACTIONS = ["s3:PutObject", "s3:PutObjectAcl", "s3:GetObject", "s3:GetObjectAcl", "s3:ListBucket", "s3:DeleteObject"]


def _env_list(name: str) -> list[str]:
    return [v.strip() for v in os.environ.get(name, "").split(",") if v.strip()]


def build_s3_app(access_key_id: str, secret: str, buckets: Iterable[str]) -> Callable[..., Any]:
    """moto's WSGI app with IAM auth on and one user holding the given key pair."""
    from moto import settings
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.iam.models import iam_backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from moto.s3.models import s3_backends

    account = DEFAULT_ACCOUNT_ID
    iam = iam_backends[account]["aws"]
    iam.create_user("us-east-1", S3_USER)
    key = iam.create_access_key(S3_USER)
    del iam.access_keys[key.physical_resource_id]
    key.access_key_id, key.secret_access_key = access_key_id, secret  # fixed, so the stack can hand them out
    iam.access_keys[key.physical_resource_id] = key
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": _S3_ACTIONS, "Resource": "*"}]}
    iam.put_user_policy(S3_USER, "store", json.dumps(policy))
    s3 = s3_backends[account]["aws"]
    for bucket in buckets:
        s3.create_bucket(bucket, "us-east-1")
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # every request from now on is authenticated
    moto_app = DomainDispatcherApplication(create_backend_app)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b'{"status": "ok"}']
        return moto_app(environ, start_response)

    return app


def serve_s3(host: str, port: int, certfile: str, keyfile: str, latency_s: float = 0.0) -> None:
    access_key_id = os.environ["OBJSTORE_A_ACCESS_KEY_ID"]
    secret = os.environ["OBJSTORE_A_SECRET_ACCESS_KEY"]
    app = build_s3_app(access_key_id, secret, _env_list("OBJSTORE_A_BUCKETS"))
    make_wsgi_server(host, port, app, (certfile, keyfile), latency_s=latency_s).serve_forever()


def make_wsgi_server(
    host: str, port: int, app: Callable[..., Any], ssl_context: tuple[str, str] | None, *, latency_s: float = 0.0
) -> BaseWSGIServer:
    """werkzeug's threaded server for ``app``, its connections without Nagle's algorithm: it keeps them alive
    (HTTP/1.1) and writes an answer's head and body apart, so with Nagle on the body would wait for the client's
    delayed ACK of the head, a stall on every request to the S3 store (docs/performance.md). ``latency_s``: see
    ``conformance.reference._latency``."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Handler(WSGIRequestHandler):
        disable_nagle_algorithm = True

    handler = delayed_handler(Handler, latency_s)
    return make_server(host, port, app, threaded=True, request_handler=handler, ssl_context=ssl_context)


def make_gcs_server(
    host: str,
    port: int,
    tokens: Iterable[str],
    buckets: Iterable[str],
    context: ssl.SSLContext | None,
    *,
    latency_s: float = 0.0,
) -> server.ThreadingHTTPServer:
    """gcp-storage-emulator's handler behind a bearer-token check, on a threading (optionally TLS) server."""
    from gcp_storage_emulator.handlers import buckets as bucket_handlers
    from gcp_storage_emulator.server import RequestHandler
    from gcp_storage_emulator.storage import Storage

    storage = Storage(use_memory_fs=True)
    for bucket in buckets:
        bucket_handlers.create_bucket(bucket, storage)
    accepted = [t.encode() for t in tokens]

    class GuardedHandler(RequestHandler):
        def _allowed(self) -> bool:
            if self.path == "/healthz":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "16")
                self.end_headers()
                self.wfile.write(b'{"status": "ok"}')
                return False
            scheme, _, token = self.headers.get("Authorization", "").partition(" ")
            if scheme.lower() == "bearer" and any(hmac.compare_digest(token.encode(), t) for t in accepted):
                return True
            body = json.dumps({"error": {"code": 401, "message": "Invalid Credentials"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return False

        def parse_request(self) -> bool:
            # Every request passes the bearer check before the emulator dispatches it (False: already answered).
            return super().parse_request() and self._allowed()

    httpd = server.ThreadingHTTPServer((host, port), partial(delayed_handler(GuardedHandler, latency_s), storage))
    httpd.daemon_threads = True
    if context is not None:
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    return httpd


def serve_gcs(host: str, port: int, certfile: str, keyfile: str, latency_s: float = 0.0) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    tokens, buckets = _env_list("OBJSTORE_B_TOKENS"), _env_list("OBJSTORE_B_BUCKETS")
    httpd = make_gcs_server(host, port, tokens, buckets, context, latency_s=latency_s)
    httpd.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.reference.compression.objstores")
    parser.add_argument("kind", choices=["s3", "gcs"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--certfile", required=True)
    parser.add_argument("--keyfile", required=True)
    add_latency_argument(parser)
    args = parser.parse_args(argv)
    serve = serve_s3 if args.kind == "s3" else serve_gcs
    try:
        serve(args.host, args.port, args.certfile, args.keyfile, args.latency)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
