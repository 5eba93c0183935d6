"""The compression sandbox: a Starlette app with the contract's endpoints, errors in the real service's phrasing.

Combined commands (decided here, the contract is silent): one ``POST /output/<id>`` may hold any of ``resize``,
``preserve`` and ``store``. They are validated together before any work, then applied in that order: the image is
resized, given the kept metadata, and either returned (200, image body) or stored (200, no body, ``Location`` of
the stored object). A resize counts 1 whether it is returned or stored; it is counted only once the whole request
has succeeded. An empty object returns the output like ``GET``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from conformance.core import _httpx_cli  # noqa: F401 - before .fetch and .store import httpx: without its CLI

from . import engine, store
from .db import Database, Output
from .errors import ServiceError
from .fetch import SourceError, SourcePolicy, fetch_source
from .metadata import PRESERVE_VALUES
from .mutants import MUTANTS
from .workers import shared_pool

log = logging.getLogger("conformance.reference.compression")

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_JSON_BYTES = 64 * 1024
MAX_DIMENSION = 20_000
_COMMANDS = {"resize", "preserve", "store"}


class ClientGone(Exception):
    """The client disconnected before the answer: the work is dropped and nothing is counted."""


class ApiError(ServiceError):
    """An error the API answers itself (authentication, the request's shape, limits)."""


@dataclass
class Settings:
    data_dir: Path
    api_keys: frozenset[str]
    mutants: frozenset[str] = frozenset()
    source_policy: SourcePolicy = field(default_factory=SourcePolicy)
    stores: store.StoreConfig = field(default_factory=store.StoreConfig)
    monthly_limit: int = 0  # 0: unlimited
    workers: int = 4  # concurrent engine jobs (bounds memory under load)


def key_id(api_key: str) -> str:
    """Counts and outputs are keyed by a digest: the database never holds an API key."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:32]


def _int_dimension(value: object, name: str, defects: frozenset[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) and "bool_dimension_accepted" in defects:
        value = int(value)  # a lenient parser: true is 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, "BadRequest", f"JSON validation error: resize.{name} must be an integer")
    if value < 0 and "negative_dimension_accepted" in defects:
        value = -value
    if value <= 0:
        raise ApiError(400, "BadRequest", f"JSON validation error: resize.{name} must be a positive integer")
    if value > MAX_DIMENSION:
        raise ApiError(400, "BadRequest", f"JSON validation error: resize.{name} must be at most {MAX_DIMENSION}")
    return value


def _scale_disagrees(resize: engine.Resize | None, width: int, height: int) -> bool:
    """The scale_accepts_consistent_both mutant: both dimensions are refused only when they disagree with the
    image's aspect ratio (by more than 1 px)."""
    if resize is None or resize.method != "scale" or not (resize.width and resize.height):
        return False
    return abs(resize.height - resize.width * height / width) > 1


def parse_resize(options: object, defects: frozenset[str]) -> engine.Resize:
    if not isinstance(options, dict):
        raise ApiError(400, "BadRequest", "JSON validation error: resize must be an object")
    unknown = set(options) - {"method", "width", "height"}
    if unknown:
        raise ApiError(400, "BadRequest", f"JSON validation error: unknown resize field(s) {sorted(unknown)}")
    method = options.get("method")
    if isinstance(method, str) and "method_case_insensitive" in defects:
        method = method.lower()  # "Scale" taken as "scale"
    if method not in engine.RESIZE_METHODS:
        raise ApiError(
            400, "BadRequest", "JSON validation error: resize.method must be one of scale, fit, cover, thumb"
        )
    width = _int_dimension(options.get("width"), "width", defects)
    height = _int_dimension(options.get("height"), "height", defects)
    if method == "scale":
        given = (width is not None) + (height is not None)
        lenient = {"scale_accepts_both", "scale_accepts_consistent_both"} & defects  # the latter: see post_output
        if given == 0 or (given == 2 and not lenient):
            raise ApiError(400, "BadRequest", "JSON validation error: scale takes exactly one of width or height")
    elif width is None and height is not None and method in ("fit", "thumb") and "box_missing_width_square" in defects:
        width = height  # the mutant: a missing width taken as the height (a square box)
    elif width is None or height is None:
        raise ApiError(400, "BadRequest", f"JSON validation error: {method} needs both width and height")
    return engine.Resize(method, width, height)


def parse_preserve(options: object) -> frozenset[str]:
    if not isinstance(options, list) or not all(isinstance(v, str) for v in options):
        raise ApiError(400, "BadRequest", "JSON validation error: preserve must be an array of strings")
    unknown = set(options) - set(PRESERVE_VALUES)
    if unknown:
        raise ApiError(400, "BadRequest", f"JSON validation error: preserve accepts {', '.join(PRESERVE_VALUES)} only")
    return frozenset(options)


class Sandbox:
    def __init__(self, settings: Settings) -> None:
        unknown = settings.mutants - {m.name for m in MUTANTS}
        if unknown:
            raise ValueError(f"unknown compression mutant(s): {sorted(unknown)}")
        self.settings = settings
        self.defects = settings.mutants
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.db = Database(settings.data_dir / "compression.sqlite3")
        self.limiter = anyio.CapacityLimiter(settings.workers)
        self.pool = shared_pool(settings.workers)  # the engine runs in processes a gone client's job can kill

    # --- plumbing ----------------------------------------------------------------------------------------------

    def error(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
        body: dict[str, str] = {"error": error, "message": message}
        if "error_without_message" in self.defects and status != 401:
            del body["message"]
        return JSONResponse(body, status_code=status, headers=headers)

    def authenticate(self, request: Request) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, encoded = header.partition(" ")
        password = None
        if scheme.lower() == "basic":
            try:
                user, sep, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                user, sep = "", ""
            if user != "api" or not sep:
                password = None
        if password is not None:
            if "auth_any_key" in self.defects:
                return key_id(password)
            for key in self.settings.api_keys:
                if hmac.compare_digest(password.encode(), key.encode()):
                    return key_id(key)
                if "auth_key_prefix" in self.defects and password and key.startswith(password):
                    return key_id(key)  # compares only as many characters as were sent
        raise ApiError(401, "Unauthorized", "Credentials are invalid")

    async def read_body(self, request: Request, limit: int) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise ApiError(413, "TooLarge", f"Request body exceeds {limit} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise ApiError(413, "TooLarge", f"Request body exceeds {limit} bytes")
        return bytes(body)

    async def run(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: func(*args, **kwargs), limiter=self.limiter)

    async def run_engine(self, request: Request, **job: Any) -> engine.Encoded:
        """``engine.optimize(**job)`` in a worker process, watched: when the client disconnects (before or during
        the work) the worker is killed, so the work stops at once, and :class:`ClientGone` is raised."""
        outcome: dict[str, Any] = {}

        async def work() -> None:
            try:
                async with self.limiter:
                    outcome["result"] = await self.pool.optimize(**job)
            except Exception as exc:  # handed to the caller below, outside the task group
                outcome["error"] = exc
            group.cancel_scope.cancel()

        async def watch() -> None:
            # The body has been read: the next ASGI message is http.disconnect, if the client goes away.
            while (await request.receive())["type"] != "http.disconnect":
                pass
            outcome["gone"] = True
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(work)
            group.start_soon(watch)
        if outcome.get("gone"):
            raise ClientGone()
        if "error" in outcome:
            raise outcome["error"]
        result: engine.Encoded = outcome["result"]
        return result

    async def still_connected(self, request: Request) -> None:
        """Before counting: a client that went away meanwhile is not charged for work it never received."""
        if await request.is_disconnected():
            raise ClientGone()

    async def check_quota(self, account: str) -> None:
        limit = self.settings.monthly_limit
        if limit and await self.db_call(self.db.count, account) >= limit:
            raise ApiError(429, "TooManyRequests", "Your monthly limit has been exceeded")

    @staticmethod
    def parse_json(body: bytes) -> Any:
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deeply
            raise ApiError(400, "BadRequest", "JSON validation error: the body is not valid JSON") from None

    # --- endpoints ---------------------------------------------------------------------------------------------

    async def shrink(self, request: Request) -> Response:
        account = self.authenticate(request)
        await self.check_quota(account)
        body = await self.read_body(request, MAX_UPLOAD_BYTES)
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if engine.sniff(body) is None and (content_type == "application/json" or body.lstrip().startswith(b"{")):
            document = self.parse_json(body)
            source = document.get("source") if isinstance(document, dict) else None
            if not isinstance(source, dict) or "url" not in source:
                raise ApiError(400, "BadRequest", "JSON validation error: expected {source: {url}}")
            if "source_url_broken" in self.defects:
                raise ApiError(400, "SourceNotFound", "Source not found")
            try:
                body = await self.run(fetch_source, source["url"], self.settings.source_policy)
            except SourceError as exc:
                if "refused_source_counted" in self.defects:
                    await self.db_call(self.db.increment, account, 1)
                raise ApiError(400, "SourceNotFound", f"Source not found: {exc}") from exc
        try:
            result = await self.run_engine(request, original=body, defects=self.defects, strict=True)
        except engine.ImageError as exc:
            if not ("truncated_output_undecodable" in self.defects and exc.error == "DecodeError"):
                raise ApiError(exc.status, exc.error, exc.message) from exc
            # the mutant: a damaged upload is decoded leniently, accepted, and served as its own output
            try:
                result = await self.run_engine(request, original=body, defects=self.defects, strict=False)
            except engine.ImageError as lenient:
                raise ApiError(lenient.status, lenient.error, lenient.message) from lenient
            result = dataclasses.replace(result, data=body)
        await self.still_connected(request)
        output_id, count = await self.db_call(
            self.db.add_output, account, result.mime, body, result.data, result.width, result.height
        )
        location = f"/output/{output_id}"
        input_size = len(result.data) if "input_size_wrong" in self.defects else len(body)
        record = {
            "input": {"size": input_size, "type": result.mime},
            "output": {
                "size": len(result.data),
                "type": result.mime,
                "width": result.width,
                "height": result.height,
                "ratio": round(len(result.data) / len(body), 4),
                "url": str(request.base_url).rstrip("/") + location,
            },
        }
        return JSONResponse(record, status_code=201, headers={"Location": location, "Compression-Count": str(count)})

    def image_response(self, data: bytes, mime: str, width: int, height: int, count: int) -> Response:
        return Response(
            data,
            media_type=mime,
            headers={"Compression-Count": str(count), "Image-Width": str(width), "Image-Height": str(height)},
        )

    async def get_output(self, request: Request) -> Response:
        account, output = await self.authenticated_output(request)
        width, mime = output.width, output.mime
        if "width_header_lies" in self.defects:
            width += 1
        if "content_type_mismatch" in self.defects:
            mime = engine.PNG if mime == engine.JPEG else engine.JPEG
        count = await self.db_call(self.db.count, account)
        return self.image_response(output.output, mime, width, output.height, count)

    async def db_call(self, func: Any, *args: Any) -> Any:
        """SQLite on the event loop, outside the engine's limiter: each call is a statement or two on the loop's own
        connection, the only one this process writes with (nothing to wait for), cheaper than a hop to a thread."""
        return func(*args)

    async def find_output(self, request: Request, account: str | None) -> Output:
        output: Output | None = await self.db_call(self.db.get_output, request.path_params["output_id"], account)
        if output is None:
            raise ApiError(404, "NotFound", "Output not found")
        return output

    async def authenticated_output(self, request: Request) -> tuple[str, Output]:
        """The caller's account and its output named in the path. The ``output_without_auth`` mutant takes the
        output id as the only credential: without valid credentials it serves the output to whoever asks, on the
        account that made it."""
        try:
            account = self.authenticate(request)
        except ApiError:
            if "output_without_auth" not in self.defects:
                raise
            output = await self.find_output(request, None)
            return output.key_id, output
        return account, await self.find_output(request, account)

    async def post_output(self, request: Request) -> Response:
        account, output = await self.authenticated_output(request)
        document = self.parse_json(await self.read_body(request, MAX_JSON_BYTES) or b"{}")
        if not isinstance(document, dict):
            raise ApiError(400, "BadRequest", "JSON validation error: the body must be an object")
        unknown = set(document) - _COMMANDS
        if unknown:
            raise ApiError(400, "BadRequest", f"JSON validation error: unsupported option(s) {sorted(unknown)}")
        resize = parse_resize(document["resize"], self.defects) if "resize" in document else None
        if "scale_accepts_consistent_both" in self.defects and _scale_disagrees(resize, output.width, output.height):
            raise ApiError(400, "BadRequest", "JSON validation error: scale takes exactly one of width or height")
        preserve = parse_preserve(document["preserve"]) if "preserve" in document else frozenset()
        target = None
        if "store" in document:
            options = document["store"]
            leading_slash = isinstance(options, dict) and isinstance(options.get("path"), str)
            if "store_path_leading_slash" in self.defects and leading_slash:
                options = {**options, "path": options["path"].lstrip("/")}  # lenient: "/bucket/key" is "bucket/key"
            try:
                target = store.parse_store(options, lenient_path="bad_path_accepted" in self.defects)
            except store.StoreError as exc:
                raise ApiError(exc.status, exc.error, exc.message) from exc
        cost = (1 if resize else 0) + (1 if "preserve" in document and "preserve_counts" in self.defects else 0)
        if cost:
            await self.check_quota(account)
        if resize is None and not preserve:
            data, mime, width, height = output.output, output.mime, output.width, output.height
        else:
            try:
                result = await self.run_engine(
                    request,
                    original=output.original,
                    resize=resize,
                    preserve=preserve,
                    defects=self.defects,
                    strict=False,
                )
            except engine.ImageError as exc:
                raise ApiError(exc.status, exc.error, exc.message) from exc
            data, mime, width, height = result.data, result.mime, result.width, result.height
        await self.still_connected(request)
        if target is not None:
            if "store_writes_nothing" in self.defects:  # answers as if written
                location = store.stored_url(target, self.settings.stores)
            else:
                try:
                    location = await self.run(store.write, target, data, mime, self.settings.stores)
                except store.StoreError as exc:
                    raise ApiError(exc.status, exc.error, exc.message) from exc
            count = await self.db_call(self.db.increment, account, cost)
            return Response(
                status_code=200,
                headers={
                    "Location": location,
                    "Compression-Count": str(count),
                    "Image-Width": str(width),
                    "Image-Height": str(height),
                },
            )
        count = await self.db_call(self.db.increment, account, cost)
        if resize is not None and "resize_headers_stale" in self.defects:
            width, height = output.width, output.height  # the size before resizing
        return self.image_response(data, mime, width, height, count)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    # --- error handling ----------------------------------------------------------------------------------------

    async def handle_api_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        headers = {"WWW-Authenticate": 'Basic realm="api"'} if exc.status == 401 else None
        return self.error(exc.status, exc.error, exc.message, headers)

    async def handle_http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            return self.error(405, "MethodNotAllowed", "Method not allowed", dict(exc.headers or {}))
        return self.error(exc.status_code, "NotFound" if exc.status_code == 404 else "BadRequest", str(exc.detail))

    async def handle_client_gone(self, request: Request, exc: Exception) -> Response:
        # Nobody reads this answer (499: "client closed request", as nginx logs it); no crash is logged.
        return Response(status_code=499)

    async def handle_crash(self, request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return self.error(500, "InternalServerError", "An unexpected error occurred; try again later")


def create_app(
    data_dir: Path | str,
    api_keys: Iterable[str],
    mutants: Iterable[str] = (),
    *,
    source_policy: SourcePolicy | None = None,
    stores: store.StoreConfig | None = None,
    monthly_limit: int = 0,
    workers: int = 4,
) -> Starlette:
    """The sandbox as an ASGI app. ``api_keys`` are the accepted passwords of ``api:<key>``."""
    keys = frozenset(k for k in api_keys if k)
    if not keys:
        raise ValueError("at least one API key is required")
    sandbox = Sandbox(
        Settings(
            data_dir=Path(data_dir),
            api_keys=keys,
            mutants=frozenset(mutants),
            source_policy=source_policy or SourcePolicy(),
            stores=stores or store.StoreConfig(),
            monthly_limit=monthly_limit,
            workers=workers,
        )
    )
    app = Starlette(
        routes=[
            Route("/healthz", sandbox.healthz, methods=["GET"]),
            Route("/shrink", sandbox.shrink, methods=["POST"]),
            Route("/output/{output_id}", sandbox.get_output, methods=["GET"]),
            Route("/output/{output_id}", sandbox.post_output, methods=["POST"]),
        ],
        exception_handlers={
            ApiError: sandbox.handle_api_error,
            HTTPException: sandbox.handle_http_error,
            ClientGone: sandbox.handle_client_gone,
            ClientDisconnect: sandbox.handle_client_gone,
            Exception: sandbox.handle_crash,
        },
    )
    app.state.sandbox = sandbox
    return app


def api_keys_from_env() -> list[str]:
    return [k.strip() for k in os.environ.get("COMPRESSION_API_KEYS", "").split(",") if k.strip()]
