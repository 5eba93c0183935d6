"""The platform sandbox as a Starlette app: token counting, rate limits, campaigns on SQLite.

The handlers call the store on the event loop: each call is one short SQLite transaction on the loop's own
connection, cheaper than a hop to the thread pool and back; requests to the store are thereby served one at a time,
in the order they arrived."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from conformance.reference.platform import campaigns as camp
from conformance.reference.platform import seeds, tokens
from conformance.reference.platform.errors import ApiError, invalid, not_found, wrong_type
from conformance.reference.platform.limits import Limiter, estimate_tokens
from conformance.reference.platform.settings import KeySpec, SandboxSettings
from conformance.reference.platform.store import Store
from conformance.reference.platform.tokens import count_input_tokens

log = logging.getLogger("conformance.reference.platform")

Handler = Callable[["Sandbox", Request, KeySpec, str], Awaitable[Any]]


class Sandbox:
    """State shared by the handlers of one app."""

    def __init__(self, settings: SandboxSettings, data_dir: Path, mutants: frozenset[str]) -> None:
        self.settings = settings
        self.mutants = mutants
        self.store = Store(data_dir / "platform.sqlite3", campaign_ids=settings.campaign_ids)
        self.limiter = Limiter(mutants)
        self.calls: Counter[int] = Counter()  # token counts served per body hash (the nondeterministic mutant)
        self.archived_by_action: set[str] = set()  # the archived-by-update-reversible mutant's lock

    def lenient_archive(self, campaign_id: str) -> frozenset[str]:
        """The mutants to apply to a change: with archived-by-update-reversible, only the archive action locks a
        campaign (a campaign archived by an update is treated as any other)."""
        if "archived-by-update-reversible" in self.mutants and campaign_id not in self.archived_by_action:
            return self.mutants | {"archive-reversible"}
        return self.mutants

    def authenticate(self, request: Request) -> KeySpec:
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        spec = self.settings.key(value.strip()) if scheme.lower() == "bearer" else None
        if spec is None and "api-key-prefix-match" in self.mutants and scheme.lower() == "bearer":
            # compares only as many characters as the stored key has: anything appended is ignored
            spec = next((k for k in self.settings.keys if value.strip().startswith(k.key)), None)
        if spec is None and "campaigns-auth-unchecked" in self.mutants and request.url.path.startswith("/v1/campaigns"):
            spec = self.settings.keys[0]
        if spec is None:
            message = "Incorrect API key provided." if value.strip() else "You didn't provide an API key."
            raise ApiError(401, "invalid_api_key", message, type_="invalid_request_error")
        return spec


def _api(sandbox: Sandbox, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Auth, body reading, spend cap, rate limits and the fault switch around one handler; errors as JSON."""

    async def endpoint(request: Request) -> Response:
        headers: dict[str, str] = {}
        try:
            spec = sandbox.authenticate(request)
            body_text = await _read_body(request, sandbox.settings.max_body_bytes)
            if spec.spend_cap_micros is not None:
                spent = sandbox.store.spend(spec.project)
                if spent >= spec.spend_cap_micros:
                    # Quota errors need a person: no Retry-After.
                    raise ApiError(
                        429,
                        "billing_hard_limit_reached",
                        "The hard spend limit of this project has been reached; raise it to continue.",
                        type_="insufficient_quota",
                    )
            headers = sandbox.limiter.admit(spec, _token_estimate(request, body_text))
            result = await handler(sandbox, request, spec, body_text)
            if "token-count-without-token-headers" in sandbox.mutants and request.url.path == TOKENS_PATH:
                headers = {k: v for k, v in headers.items() if not k.endswith("-tokens")}  # requests only
            return JSONResponse(result, headers=headers)
        except ApiError as exc:
            if exc.status == 503 and "overload-not-json" in sandbox.mutants:
                return PlainTextResponse("Service Unavailable", status_code=503, headers={**headers, **exc.headers})
            return exc.response({**headers, **exc.headers} if exc.headers else headers)
        except Exception:
            # A bug (or the 5xx mutant): still a JSON error, never a stack trace.
            log.exception("internal error on %s %s", request.method, request.url.path)
            body = {"error": {"type": "server_error", "code": None, "message": "internal error", "param": None}}
            return JSONResponse(body, status_code=500, headers=headers)

    return endpoint


async def _read_body(request: Request, limit: int) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "request_too_large", f"the request body exceeds {limit} bytes")
        chunks.append(chunk)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise invalid(None, "the request body is not UTF-8", "invalid_json") from None


TOKENS_PATH = "/v1/responses/input_tokens"
# A body up to this long is counted on the event loop (a fraction of a millisecond once the tokenizer is loaded);
# a longer one, or the first count (which loads the tokenizer), in the thread pool, so that other requests go on.
INLINE_COUNT_CHARS = 16_384


def _token_estimate(request: Request, body_text: str) -> int:
    if request.url.path != TOKENS_PATH:
        return 0  # only model endpoints spend tokens
    try:
        body = json.loads(body_text) if body_text else {}
    except (ValueError, RecursionError):
        body = {}
    cap = body.get("max_output_tokens", body.get("max_tokens")) if isinstance(body, dict) else None
    return estimate_tokens(body_text, cap)


def _json(body_text: str) -> Any:
    if not body_text.strip():
        raise invalid(None, "the request body must be a JSON object", "invalid_json")
    try:
        return json.loads(body_text)
    except (ValueError, RecursionError):
        # ValueError also covers integers too long to convert.
        raise invalid(None, "the request body is not valid JSON", "invalid_json") from None


def _no_body(body_text: str) -> None:
    if body_text.strip() and body_text.strip() != "{}":
        raise invalid(None, "this action takes no body", "unexpected_body")


# -- the handlers (each behind _api: authenticated, body read, limits applied) ------------------------------------


async def input_tokens(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    body = _json(body_text)
    if len(body_text) <= INLINE_COUNT_CHARS and tokens.loaded():
        count = count_input_tokens(body, sandbox.mutants)
    else:  # the tokenizer's first load, or a long text: off the event loop
        count = await run_in_threadpool(count_input_tokens, body, sandbox.mutants)
    if "token-count-nondeterministic" in sandbox.mutants:
        key = hash(body_text)  # per body: a repeated request alternates whatever is sent beside it
        sandbox.calls[key] += 1
        count += sandbox.calls[key] % 2
    if spec.micros_per_token:
        sandbox.store.add_spend(spec.project, count * spec.micros_per_token)
    obj = "input_tokens" if "token-count-wrong-object" in sandbox.mutants else "response.input_tokens"
    return {"object": obj, "input_tokens": count}


def _named(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("name"), str)


async def list_campaigns(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    params = request.query_params
    for key in params:
        if key not in ("limit", "after", "before", "order"):
            raise ApiError(400, "unknown_parameter", f"unknown query parameter '{key}'", param=key)
    raw_limit = params.get("limit", "20")
    try:
        limit = int(raw_limit)
    except ValueError:
        raise wrong_type("limit", "an integer") from None
    if limit == 0 and "limit-zero-empty-page" in sandbox.mutants:
        # the mutant takes limit=0 at its word: an empty page, more to come
        return {"object": "list", "data": [], "first_id": None, "last_id": None, "has_more": True}
    top = 1000 if "limit-501-accepted" in sandbox.mutants else 500
    if not 1 <= limit <= top:
        raise invalid("limit", "'limit' must be between 1 and 500")
    order = params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise invalid("order", "'order' must be 'asc' or 'desc'")
    after, before = params.get("after"), params.get("before")
    if after is not None and before is not None:
        raise invalid("before", "'after' and 'before' cannot be combined")
    page = sandbox.store.list_campaigns(
        spec.account, limit=limit, order=order, after=after, before=before, mutants=sandbox.mutants
    )
    if page is None:
        raise invalid(
            "after" if after is not None else "before",
            "the cursor is not a campaign id",
            "invalid_cursor",
        )
    items, has_more = page
    data = [camp.render(row) for row in items]
    if "list-conversion-ids-omitted" in sandbox.mutants:
        for item in data:  # the mutant: an unused conversion_event_setting_ids is left out of list output
            if not item["conversion_event_setting_ids"]:
                del item["conversion_event_setting_ids"]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": has_more,
    }


async def create_campaign(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    body = _json(body_text)
    try:
        doc = camp.validate_create(body, sandbox.settings.audience_minimum, sandbox.mutants)
    except ApiError as exc:
        if "name-refused-but-stored" in sandbox.mutants and exc.param == "name" and _named(body):
            # the mutant: the row is written before the name is checked, and the refusal does not roll it back
            rest = camp.validate_create({**body, "name": "name"}, sandbox.settings.audience_minimum, sandbox.mutants)
            sandbox.store.create_campaign(spec.account, {**rest, "name": body["name"]})
        raise
    if camp.touches_conflict_audience(doc["targeting"]):
        raise camp.conflict(sandbox.mutants)
    row = sandbox.store.create_campaign(spec.account, doc)
    return camp.render(row)


async def campaign(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    campaign_id = request.path_params["campaign_id"]
    if request.method == "GET":
        if "campaign-id-truncated" in sandbox.mutants:
            campaign_id = campaign_id[: len("cmp_") + 24]  # a fixed-width id column: the rest is dropped
        row = sandbox.store.get_campaign(spec.account, campaign_id)
        if row is None and "unknown-campaign-fallback" in sandbox.mutants:
            # the mutant: a lookup that falls back to the account's newest campaign when the id matches none
            newest = sandbox.store.list_campaigns(spec.account, limit=1, order="desc", after=None, before=None)
            row = newest[0][0] if newest and newest[0] else None
        if row is None:
            raise not_found("campaign", campaign_id)
        return camp.render(row)
    if request.method in ("PATCH", "PUT"):
        raise ApiError(
            405,
            "method_not_allowed",
            f"{request.method} is not supported; update a campaign with POST",
            headers={"Allow": "GET, POST"},
        )
    if request.method != "POST":
        raise ApiError(
            405,
            "method_not_allowed",
            f"{request.method} is not supported",
            headers={"Allow": "GET, POST"},
        )
    body = _json(body_text)
    conflict: list[bool] = []

    def change(doc: dict[str, Any]) -> dict[str, Any]:
        new = camp.apply_update(doc, body, sandbox.settings.audience_minimum, sandbox.lenient_archive(campaign_id))
        if isinstance(body, dict) and "targeting" in body and camp.touches_conflict_audience(new["targeting"]):
            conflict.append(True)
            included = camp.touches_conflict_audience(
                {"custom_audiences": new["targeting"].get("custom_audiences", {})}
            )
            lenient = "conflict-applies-edit" in sandbox.mutants or (
                "conflict-exclusion-applies-edit" in sandbox.mutants and not included
            )
            if not lenient:
                raise camp.conflict(sandbox.mutants)
        return new

    row = sandbox.store.update_campaign(spec.account, campaign_id, change)
    if row is None:
        raise not_found("campaign", campaign_id)
    if conflict:
        raise camp.conflict(sandbox.mutants)
    return camp.render(row)


def action(target: str) -> Handler:
    async def handler(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
        _no_body(body_text)
        campaign_id = request.path_params["campaign_id"]

        def change(doc: dict[str, Any]) -> dict[str, Any] | None:
            reversible = "archive-reversible" in sandbox.lenient_archive(campaign_id)
            if doc["status"] == "archived" and target != "archived" and not reversible:
                raise invalid(None, "the campaign is archived and can no longer be changed", "campaign_archived")
            if doc["status"] == target:
                return None  # idempotent: nothing written, updated_at kept
            return {**doc, "status": target}

        row = sandbox.store.update_campaign(spec.account, campaign_id, change)
        if row is None:
            raise not_found("campaign", campaign_id)
        if target == "archived":
            sandbox.archived_by_action.add(campaign_id)
        return camp.render(row)

    return handler


async def custom_audiences(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    use = request.query_params.get("intended_use")
    if use not in ("inclusion", "exclusion"):
        raise invalid("intended_use", "'intended_use' must be 'inclusion' or 'exclusion'")
    records = [seeds.audience_record(a, sandbox.settings.audience_minimum) for a in seeds.AUDIENCES.values()]
    data = [r for r in records if use in r["eligible_uses"]]
    return {"object": "list", "data": data, "has_more": False}


async def model_limits(sandbox: Sandbox, request: Request, spec: KeySpec, body_text: str) -> Any:
    return {"object": "list", "data": seeds.FINE_TUNING_MODEL_LIMITS}


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def not_found_handler(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 405:
        return ApiError(405, "method_not_allowed", f"{request.method} is not supported here").response()
    if status == 404:
        return ApiError(404, "unknown_url", f"unknown path {request.url.path}").response()
    return ApiError(status, None, "request failed").response()


def create_app(
    data_dir: Path,
    *,
    settings: SandboxSettings | None = None,
    mutants: frozenset[str] | set[str] = frozenset(),
) -> Starlette:
    """The sandbox app. ``data_dir`` holds the SQLite database (kept across restarts)."""
    sandbox = Sandbox(settings or SandboxSettings(), Path(data_dir), frozenset(mutants))
    every_method = ["GET", "POST", "PATCH", "PUT", "DELETE"]
    routes = [
        Route("/healthz", healthz),
        Route("/v1/responses/input_tokens", _api(sandbox, input_tokens), methods=["POST"]),
        Route("/v1/campaigns", _api(sandbox, list_campaigns), methods=["GET"]),
        Route("/v1/campaigns", _api(sandbox, create_campaign), methods=["POST"]),
        Route("/v1/campaigns/{campaign_id}", _api(sandbox, campaign), methods=every_method),
        Route("/v1/campaigns/{campaign_id}/activate", _api(sandbox, action("active")), methods=["POST"]),
        Route("/v1/campaigns/{campaign_id}/pause", _api(sandbox, action("paused")), methods=["POST"]),
        Route("/v1/campaigns/{campaign_id}/archive", _api(sandbox, action("archived")), methods=["POST"]),
        Route("/v1/custom_audiences", _api(sandbox, custom_audiences), methods=["GET"]),
        Route("/v1/fine_tuning/model_limits", _api(sandbox, model_limits), methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found_handler})
    app.state.sandbox = sandbox
    return app
