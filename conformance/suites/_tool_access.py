"""Calling a tool server's tools as a host does, for the auth (tokens, tools) and profile suites.

Not fixtures (those live in each suite's test modules and conftest): plain helpers over ``raw_call`` so that every
probe sees the HTTP status line and the result exactly as sent, and a small classification of what came back
(refused at HTTP, an auth error result, an ordinary error, data).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conformance import Blocked, TargetError, needs
from conformance.config import Settings
from conformance.core import _context
from conformance.host import InvalidResponse, LimitReached
from conformance.host.forge import HarnessIssuer
from conformance.host.http import HostHTTP
from conformance.host.mcp import McpSessionError, RawResult, raw_call
from conformance.judges.declarations import (
    CHALLENGE_META_KEY,
    DEFAULT_VENDOR,
    DeclarationChecker,
    Problem,
    profile_marker,
    security_scheme_problems,
    security_schemes_of,
)
from conformance.suites._cases import unreached_text

PROBE_TEXT = "conformance"
HARNESS_OPTION = "--test-issuer, --test-issuer-key-file and --test-issuer-kid"


def vendor_of(settings: Settings) -> str:
    return str(settings.get("vendor_prefix") or DEFAULT_VENDOR)


# -- listing -------------------------------------------------------------------------------------------------


@dataclass
class Listing:
    """Every tool of ``tools/list`` (all pages) with the declaration verdicts, and how it was obtained."""

    tools: list[Any]
    problems: list[Problem]  # AUTH-TOOL-01/02/06 problems of DeclarationChecker
    paging: list[str]  # pagination / SDK problems of the listing itself
    checker: DeclarationChecker
    authenticated: bool
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # the tools/list requests: the evidence

    def named(self) -> list[Mapping[str, Any]]:
        return [t for t in self.tools if isinstance(t, Mapping) and isinstance(t.get("name"), str) and t["name"]]

    def problems_of(self, rule_id: str) -> list[Problem]:
        return [p for p in self.problems if p.rule == rule_id]


def list_tools(
    http: HostHTTP, url: str, *, vendor: str, token: str | None = None, authenticated: bool = False
) -> Listing:
    """tools/list the SDK's way (a real host's session); raises McpSessionError (TargetError) when refused."""
    from conformance.core import _gc

    with _gc.long_lived("conformance.host.mcp_session"):  # the SDK: loaded by the first check that lists tools
        from conformance.host.mcp_session import McpSession

    with McpSession(http, url, token=token) as session:
        found = session.list_tools()
    checker = DeclarationChecker(vendor=vendor)
    problems = checker.check_tools(found.tools)
    return Listing(found.tools, problems, [*found.problems, *found.sdk_errors], checker, authenticated)


def listing_for(http: HostHTTP, url: str, vendor: str, token_source: Callable[[], str] | None = None) -> Listing:
    """The anonymous listing; when the server refuses anonymous sessions (401), the listing with a linked token.

    ``token_source`` is a zero-argument callable returning an access token (it may raise Blocked)."""
    try:
        return list_tools(http, url, vendor=vendor)
    except McpSessionError as exc:
        if exc.status != 401 or token_source is None:
            raise
    return list_tools(http, url, vendor=vendor, token=token_source(), authenticated=True)


def suite_listing(http: HostHTTP, url: str, vendor: str, token_source: Callable[[], str]) -> Listing:
    """``listing_for`` for fixtures: a failed tools/list blocks the checks (AUTH-TOOL-01 judges declarations)."""
    try:
        return listing_for(http, url, vendor, token_source)
    except (InvalidResponse, LimitReached):
        raise
    except TargetError as exc:
        raise Blocked("AUTH-TOOL-01", f"tools/list failed: {exc}") from None


# -- declarations --------------------------------------------------------------------------------------------


def scheme_kinds(tool: Mapping[str, Any]) -> set[str] | None:
    """The declared scheme types when ``securitySchemes`` is present and well-formed, else None."""
    declared = security_schemes_of(tool)
    if declared is None or security_scheme_problems(declared[0]):
        return None
    return {str(s["type"]) for s in declared[0]}


def oauth_scopes(tool: Mapping[str, Any]) -> list[str]:
    declared = security_schemes_of(tool)
    if declared is None or security_scheme_problems(declared[0]):
        return []
    return [str(scope) for s in declared[0] if s.get("type") == "oauth2" for scope in s.get("scopes", [])]


def is_oauth_only(tool: Mapping[str, Any]) -> bool:
    return scheme_kinds(tool) == {"oauth2"}


def is_noauth_only(tool: Mapping[str, Any]) -> bool:
    return scheme_kinds(tool) == {"noauth"}


def hints(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = tool.get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def is_read_only(tool: Mapping[str, Any]) -> bool:
    """readOnlyHint true and destructiveHint not true (AUTH-TOOL-04's reading of "read-only")."""
    h = hints(tool)
    return h.get("readOnlyHint") is True and h.get("destructiveHint") is not True


def declared_writing(tool: Mapping[str, Any]) -> bool:
    """Declared as writing: readOnlyHint false or destructiveHint true (AUTH-TOOL-04's tools)."""
    h = hints(tool)
    return h.get("readOnlyHint") is False or h.get("destructiveHint") is True


def is_mixed(tool: Mapping[str, Any]) -> bool:
    """Declares both noauth and oauth2: anonymous use allowed, linking unlocks more (AUTH-TOOL-07)."""
    return scheme_kinds(tool) == {"noauth", "oauth2"}


def is_profile_tool(tool: Mapping[str, Any], vendor: str) -> bool:
    return profile_marker(tool, vendor) != "absent"


def auth_tool(listing: Listing, vendor: str) -> Mapping[str, Any] | None:
    """A tool that needs auth (declared oauth2 only), safest first: read-only, not the profile tool."""
    candidates = [t for t in listing.named() if is_oauth_only(t)]
    candidates.sort(key=lambda t: (not is_read_only(t), is_profile_tool(t, vendor)))
    return candidates[0] if candidates else None


# -- arguments -----------------------------------------------------------------------------------------------


def sample_value(schema: Any, depth: int = 0) -> Any:
    """A plausible value for a (sub)schema: enough to get past argument validation to the auth decision."""
    if not isinstance(schema, Mapping) or depth > 5:
        return PROBE_TEXT
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        return sample_arguments(schema, depth + 1)
    if kind == "integer":
        return int(schema.get("minimum", 1)) if isinstance(schema.get("minimum"), int | float) else 1
    if kind == "number":
        return schema.get("minimum", 1) if isinstance(schema.get("minimum"), int | float) else 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    text = PROBE_TEXT
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and min_length > len(text):
        text = text + "x" * (min_length - len(text))
    return text


def sample_arguments(schema: Any, depth: int = 0) -> dict[str, Any]:
    """Arguments for the required properties of an inputSchema."""
    if not isinstance(schema, Mapping):
        return {}
    found_properties, found_required = schema.get("properties"), schema.get("required")
    properties: Mapping[str, Any] = found_properties if isinstance(found_properties, Mapping) else {}
    required: list[Any] = found_required if isinstance(found_required, list) else []
    return {str(name): sample_value(properties.get(name), depth) for name in required if isinstance(name, str)}


# -- calls ---------------------------------------------------------------------------------------------------


@dataclass
class CallOutcome:
    """One tools/call probe, classified."""

    raw: RawResult

    @property
    def status(self) -> int:
        return self.raw.status

    @property
    def refused_http(self) -> bool:
        """Refused before any tool ran (401/403 at any step of the session)."""
        return self.raw.status in (401, 403)

    @property
    def result(self) -> dict[str, Any] | None:
        result = self.raw.result if self.raw.step == "call" else None
        return result if isinstance(result, dict) else None

    @property
    def is_error_result(self) -> bool:
        return self.result is not None and self.result.get("isError") is True

    @property
    def challenges(self) -> list[Any]:
        meta = self.result.get("_meta") if self.result else None
        value = meta.get(CHALLENGE_META_KEY) if isinstance(meta, Mapping) else None
        return value if isinstance(value, list) else []

    @property
    def auth_error_result(self) -> bool:
        """An isError result carrying a ``mcp/www_authenticate`` challenge (the in-call auth error)."""
        return self.is_error_result and bool(self.challenges)

    @property
    def returned_data(self) -> bool:
        """A result that is not an error: the tool ran for this caller."""
        return self.result is not None and self.result.get("isError") is not True

    def describe(self) -> str:
        if self.raw.step != "call":
            return f"HTTP {self.status} at {self.raw.step}"
        if self.result is None:
            error = self.raw.error
            return f"HTTP {self.status}, " + (f"JSON-RPC error {error}" if error else "no JSON-RPC result")
        if self.auth_error_result:
            return f"HTTP {self.status}, an auth error result (isError with a challenge)"
        if self.is_error_result:
            return f"HTTP {self.status}, an error result without a challenge"
        return f"HTTP {self.status}, a result with data (isError {self.result.get('isError', False)!r})"


def call(
    http: HostHTTP,
    url: str,
    tool: Mapping[str, Any] | str,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
    body: Mapping[str, str] | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> CallOutcome:
    name = tool if isinstance(tool, str) else str(tool.get("name"))
    args = (
        dict(arguments)
        if arguments is not None
        else (sample_arguments(tool.get("inputSchema")) if isinstance(tool, Mapping) else {})
    )
    raw = mcp_probe(
        http,
        url,
        "tools/call",
        {"name": name, "arguments": args},
        token=token,
        headers=headers,
        query=query,
        body=body,
    )
    outcome = CallOutcome(raw)
    if outcome.result is not None:
        during = _context.current_rules_text()
        obtained = ObtainedResult(name, args, token is not None, outcome.result, during)
        _context.in_order(lambda: _OBTAINED.setdefault(http, []).append(obtained))  # in the checks' order
    return outcome


@dataclass(frozen=True)
class ObtainedResult:
    """A tool result the run obtained, by any check (AUTH-TOOL-05 judges every one)."""

    tool: str
    arguments: dict[str, Any]
    with_token: bool
    result: dict[str, Any]
    during: str  # the rules of the check that made the call

    def describe(self) -> str:
        who = "with a token" if self.with_token else "anonymous"
        return f"{self.tool}({json.dumps(self.arguments, sort_keys=True)[:80]}) {who}, during {self.during}"


# Per HostHTTP (one per run): every call() that came back with a result.
_OBTAINED: weakref.WeakKeyDictionary[HostHTTP, list[ObtainedResult]] = weakref.WeakKeyDictionary()


def obtained_results(http: HostHTTP) -> list[ObtainedResult]:
    """Every tool result ``call`` obtained through ``http`` so far, in order."""
    return list(_OBTAINED.get(http, ()))


def mcp_probe(
    http: HostHTTP,
    url: str,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
    body: Mapping[str, str] | None = None,
) -> RawResult:
    """``raw_call`` that remembers every 401 it met (AUTH-PRM-05 judges each one's challenge, whatever check
    provoked it)."""
    raw = raw_call(http, url, method, params, token=token, headers=headers, query=query, body=body)
    if raw.status == 401:
        what = f"{method} {params.get('name')!r}" if params and isinstance(params.get("name"), str) else method
        step = "" if raw.step == "call" else f" (at {raw.step})"
        found = Unauthorized(
            what + step, tuple(raw.headers.get_list("www-authenticate")), _context.current_rules_text()
        )
        _context.in_order(lambda: _UNAUTHORIZED.setdefault(http, []).append(found))  # in the cases' order
    return raw


@dataclass(frozen=True)
class Unauthorized:
    """A 401 the tool server answered to a probe of the run."""

    what: str  # the method (and tool) called, and the handshake step that answered when not the call itself
    challenges: tuple[str, ...]  # its WWW-Authenticate header values, as sent
    during: str  # the rules of the check that made the call


# Per HostHTTP (one per run): every 401 that mcp_probe met.
_UNAUTHORIZED: weakref.WeakKeyDictionary[HostHTTP, list[Unauthorized]] = weakref.WeakKeyDictionary()


def unauthorized_answers(http: HostHTTP) -> list[Unauthorized]:
    """Every 401 that ``mcp_probe`` (and so ``call``) met through ``http`` so far, in order."""
    return list(_UNAUTHORIZED.get(http, ()))


# -- tokens --------------------------------------------------------------------------------------------------


def unverified_claims(token: str | None) -> dict[str, Any]:
    """A JWT's claims without verification (the harness reads its own tokens), {} for opaque tokens."""
    if not token:
        return {}
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return {}
    return claims if isinstance(claims, dict) else {}


def fresh_token(account: Any) -> str:
    """A LinkedAccount's access token: renewed (refreshed, or linked again) when it is about to expire."""
    return str(account.access_token)


def load_issuer(settings: Settings, http: HostHTTP) -> HarnessIssuer | None:
    """The harness's test issuer from the settings (its key signs tokens the target trusts), None if unset."""
    issuer, key_file, kid = (settings.get(n) for n in ("test_issuer", "test_issuer_key_file", "test_issuer_kid"))
    if not issuer or not key_file:
        return None
    key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        needs("an EC P-256 test issuer key (ES256)", "--test-issuer-key-file")
    return HarnessIssuer(issuer=str(issuer), kid=str(kid or "test-issuer-1"), redactor=http.redactor, key=key)


def safe_call(*args: Any, **kwargs: Any) -> CallOutcome | str:
    """``call`` that returns the TargetError message instead of raising (for probes judged as a whole)."""
    try:
        return call(*args, **kwargs)
    except (InvalidResponse, LimitReached):
        raise
    except TargetError as exc:
        return unreached_text(exc)  # a transport failure stays recognisable: an attack case it hits is not tried


def distinct(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))
