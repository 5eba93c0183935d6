"""The host's OAuth 2.1 client: PKCE, the authorization request, callback parsing with RFC 9207 checks, the token
request with client authentication, refresh, dynamic client registration and method negotiation.

Nothing here follows the authorization redirect: the login drivers (``login.py``) return the redirect to the
``redirect_uri`` un-followed and :func:`parse_callback` reads it. Every code, verifier, token, assertion and client
secret the client obtains or creates is registered with the HTTP client's redactor before it can reach evidence.

Decisions where the contract is silent:

- Metadata without ``token_endpoint_auth_methods_supported``: RFC 8414 §2's default (``client_secret_basic``) is the
  AS's list; the decision record says so.
- When the legacy preference is not in the intersection, the host takes the first of its own preference order
  (:data:`METHOD_PREFERENCE`): ``private_key_jwt``, ``none``, ``client_secret_basic``, ``client_secret_post``.
- The callback is checked for ``iss`` first (RFC 9207 §2.4 wants it compared before anything else is used), then
  ``state``. A present ``iss`` is compared even when not advertised (RFC 9207 §2.4).
- With no challenge scope and no PRM ``scopes_supported``, no resource scope is requested (only OIDC scopes).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import string
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import httpx

from conformance.core import _context
from conformance.core._exceptions import ConfigError, InvalidResponse, TargetError
from conformance.host import _json as target_json
from conformance.host.asmeta import OIDC_SCOPES, AsMetadata
from conformance.host.fields import JsonMember, as_int, as_str
from conformance.host.http import HostHTTP
from conformance.host.identity import ASSERTION_TYPE, HOST_AUTH_METHODS, LEGACY_AUTH_METHOD, HostIdentity

AuthMethod = Literal["none", "private_key_jwt", "client_secret_post", "client_secret_basic"]
SUPPORTED_METHODS: tuple[str, ...] = ("none", "private_key_jwt", "client_secret_post", "client_secret_basic")
METHOD_PREFERENCE: tuple[str, ...] = ("private_key_jwt", "none", "client_secret_basic", "client_secret_post")
RFC8414_DEFAULT_METHODS = ("client_secret_basic",)
PKCE_CHARSET = string.ascii_letters + string.digits + "-._~"  # RFC 7636 §4.1 unreserved characters
FORM = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}


# -- PKCE ------------------------------------------------------------------------------------------------------


def s256(verifier: str) -> str:
    """``BASE64URL(SHA256(ASCII(verifier)))`` without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class PkcePair:
    verifier: str
    challenge: str
    method: str = "S256"


def new_pkce(length: int = 64) -> PkcePair:
    """A fresh S256 pair; the verifier has ``length`` (43..128) characters from the unreserved set."""
    if not 43 <= length <= 128:
        raise ValueError("an RFC 7636 code_verifier has 43 to 128 characters")
    verifier = random_text(length, PKCE_CHARSET)
    return PkcePair(verifier=verifier, challenge=s256(verifier))


def random_text(length: int, alphabet: str) -> str:
    """``length`` characters drawn uniformly and independently from ``alphabet`` (at most 256 characters), like
    ``secrets.choice`` for each, from a few reads of the OS's random source instead of one per character (a
    system call each, which adds up over an auth run). A byte at or above the largest multiple of the alphabet's
    size is dropped, so that no character is likelier than another."""
    usable = 256 - 256 % len(alphabet)
    drawn: list[str] = []
    while len(drawn) < length:
        drawn += [alphabet[byte % len(alphabet)] for byte in secrets.token_bytes(length) if byte < usable]
    return "".join(drawn[:length])


# -- scopes and redirect mode ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeChoice:
    scopes: tuple[str, ...]
    source: str  # "challenge", "prm scopes_supported" or "none"
    oidc_added: tuple[str, ...] = ()

    @property
    def value(self) -> str:
        return " ".join(self.scopes)


def scope_value(scopes: ScopeChoice | str | Iterable[str]) -> str:
    """The ``scope`` parameter for a choice of scopes, a scope string as is, or scope tokens."""
    if isinstance(scopes, ScopeChoice):
        return scopes.value
    if isinstance(scopes, str):
        return scopes
    return " ".join(scopes)


def choose_scopes(
    challenge_scope: str | None,
    prm_scopes: Sequence[str] | None,
    as_scopes: Sequence[str] | None,
    *,
    include_oidc: bool = True,
) -> ScopeChoice:
    """The contract's order: the 401 challenge's ``scope``, else the PRM's ``scopes_supported``; plus the OIDC
    scopes (openid, email, profile) the AS lists, by default."""
    if challenge_scope and challenge_scope.split():
        base, source = challenge_scope.split(), "challenge"
    elif prm_scopes:
        base, source = [s for s in prm_scopes if isinstance(s, str) and s], "prm scopes_supported"
    else:
        base, source = [], "none"
    chosen = list(dict.fromkeys(base))
    added: list[str] = []
    if include_oidc and as_scopes:
        for scope in OIDC_SCOPES:
            if scope in as_scopes and scope not in chosen:
                chosen.append(scope)
                added.append(scope)
    return ScopeChoice(scopes=tuple(chosen), source=source, oidc_added=tuple(added))


RedirectMode = Literal["stable", "callback-specific"]


@dataclass(frozen=True)
class RedirectChoice:
    mode: RedirectMode
    reason: str
    client_id: str  # the CIMD document URL for that mode
    redirect_uri: str
    callback_id: str | None

    def as_evidence(self) -> dict[str, Any]:
        return asdict(self)


def issuer_identification_met(as_meta: AsMetadata) -> bool:
    """Contract Auth 8: ``iss`` advertised (``true``) and the metadata issuer identical to the PRM's entry."""
    return as_meta.iss_parameter_supported and as_meta.issuer_matches


def choose_redirect_mode(
    as_meta: AsMetadata, identity: HostIdentity, callback_id: str, *, legacy_stable: bool = False
) -> RedirectChoice:
    """Stable redirect and stable CIMD document when issuer identification is met (or for a server published
    before callback-specific redirects, ``legacy_stable``); otherwise the callback-specific pair (Versioning 2)."""
    if legacy_stable or issuer_identification_met(as_meta):
        reason = (
            "published before callback-specific redirects (legacy): stable redirect kept"
            if legacy_stable
            else "issuer identification met (authorization_response_iss_parameter_supported true, issuer identical)"
        )
        return RedirectChoice("stable", reason, identity.stable_document_url, identity.redirect_uri(), None)
    missing = []
    if not as_meta.iss_parameter_supported:
        missing.append("authorization_response_iss_parameter_supported is not true")
    if not as_meta.issuer_matches:
        missing.append("metadata issuer differs from the authorization_servers entry")
    return RedirectChoice(
        "callback-specific",
        "issuer identification not met: " + "; ".join(missing),
        identity.callback_document_url(callback_id),
        identity.callback_redirect_uri(callback_id),
        callback_id,
    )


# -- client authentication method negotiation ------------------------------------------------------------------


@dataclass(frozen=True)
class MethodDecision:
    """How the token-endpoint authentication method was chosen (contract Authentication item 4)."""

    as_methods: tuple[str, ...]
    as_methods_source: str  # "metadata" or "RFC 8414 default (field absent)"
    client_methods: tuple[str, ...]
    legacy_preference: str | None
    intersection: tuple[str, ...]
    chosen: str | None
    reason: str
    unknown_as_methods: tuple[str, ...] = ()

    def as_evidence(self) -> dict[str, Any]:
        return asdict(self)

    def require(self) -> str:
        if self.chosen is None:
            raise InvalidResponse(self.reason)
        return self.chosen


def negotiate_auth_method(
    as_methods: Sequence[str] | None,
    client_methods: Sequence[str] = HOST_AUTH_METHODS,
    legacy_preference: str | None = LEGACY_AUTH_METHOD,
) -> MethodDecision:
    """Intersection of the AS's and the client's methods; the legacy singular preference first when in it."""
    source = "metadata"
    if as_methods is None:
        as_methods, source = RFC8414_DEFAULT_METHODS, "RFC 8414 default (field absent)"
    as_list = tuple(m for m in as_methods if isinstance(m, str))
    unknown = tuple(m for m in as_list if m not in SUPPORTED_METHODS and m not in _OTHER_KNOWN)
    intersection = tuple(m for m in client_methods if m in as_list)
    if legacy_preference and legacy_preference in intersection:
        chosen: str | None = legacy_preference
        reason = f"legacy preference {legacy_preference} is in the intersection {list(intersection)}"
    elif intersection:
        chosen = next(m for m in METHOD_PREFERENCE if m in intersection)
        why = f"legacy preference {legacy_preference} not in it" if legacy_preference else "no legacy preference"
        reason = f"{why}; took {chosen} from the intersection {list(intersection)}"
    else:
        chosen = None
        reason = (
            f"no common token endpoint auth method: the authorization server lists {list(as_list)} ({source}), "
            f"the client supports {list(client_methods)}"
        )
    return MethodDecision(
        as_methods=as_list,
        as_methods_source=source,
        client_methods=tuple(client_methods),
        legacy_preference=legacy_preference,
        intersection=intersection,
        chosen=chosen,
        reason=reason,
        unknown_as_methods=unknown,
    )


_OTHER_KNOWN = frozenset({"client_secret_jwt", "tls_client_auth", "self_signed_tls_client_auth"})


# -- clients ---------------------------------------------------------------------------------------------------


ClientKind = Literal["cimd", "dcr", "predefined"]


@dataclass
class OAuthClient:
    """A client the host can authenticate as at the token endpoint."""

    kind: ClientKind
    client_id: str
    auth_method: str
    redirect_uris: tuple[str, ...] = ()
    client_secret: str | None = None
    identity: HostIdentity | None = None  # signs private_key_jwt assertions
    decision: MethodDecision | None = None
    registration: dict[str, Any] | None = None  # DCR response (secrets removed)
    registration_access_token: str | None = None

    def __post_init__(self) -> None:
        if self.auth_method not in SUPPORTED_METHODS:
            raise ConfigError(f"unsupported client authentication method {self.auth_method!r}")
        if self.auth_method.startswith("client_secret") and not self.client_secret:
            raise ConfigError(f"{self.auth_method} needs a client secret")
        if self.auth_method == "private_key_jwt" and self.identity is None:
            raise ConfigError("private_key_jwt needs the host identity (its signing key)")


def cimd_client(identity: HostIdentity, as_meta: AsMetadata, redirect: RedirectChoice | None = None) -> OAuthClient:
    """The host as a CIMD client: ``client_id`` is the chosen document URL; the method is negotiated."""
    decision = negotiate_auth_method(as_meta.auth_methods_supported, HOST_AUTH_METHODS, LEGACY_AUTH_METHOD)
    client_id = redirect.client_id if redirect else identity.stable_document_url
    redirect_uri = redirect.redirect_uri if redirect else identity.redirect_uri()
    return OAuthClient(
        kind="cimd",
        client_id=client_id,
        auth_method=decision.require(),
        redirect_uris=(redirect_uri,),
        identity=identity,
        decision=decision,
    )


def predefined_client(
    client_id: str,
    *,
    client_secret: str | None = None,
    auth_method: str | None = None,
    redirect_uris: Sequence[str] = (),
    as_meta: AsMetadata | None = None,
    identity: HostIdentity | None = None,
    http: HostHTTP | None = None,
) -> OAuthClient:
    """A client registered by hand at the AS (from configuration). Without an explicit method, the first the AS
    lists among the secret methods (a secret was given) or ``none`` (public client)."""
    if http is not None and client_secret:
        http.redactor.add_secret(client_secret)
    decision = None
    if auth_method is None:
        client_methods: tuple[str, ...] = ("client_secret_basic", "client_secret_post") if client_secret else ("none",)
        if identity is not None:
            client_methods = ("private_key_jwt", *client_methods)
        as_methods = as_meta.auth_methods_supported if as_meta else None
        how = "not configured (--client-auth-method), the first the authorization server lists that the predefined "
        decision = registered_client_method(as_methods, client_methods, how=how + "client can use")
        auth_method = decision.require()
    return OAuthClient(
        kind="predefined",
        client_id=client_id,
        auth_method=auth_method,
        redirect_uris=tuple(redirect_uris),
        client_secret=client_secret,
        identity=identity,
        decision=decision,
    )


class RegistrationError(InvalidResponse):
    """DCR did not return a usable client."""


class RegistrationRefused(RegistrationError):
    """The authorization server refused the metadata the host registered (400, RFC 7591 §3.2.2: e.g.
    ``invalid_redirect_uri``, ``invalid_client_metadata``): the host's choice of redirect or metadata, which another
    choice may satisfy, not a registration endpoint that fails. Never a verdict on the running check by itself."""

    def __init__(self, message: str, *, exchange: dict[str, Any] | None = None) -> None:
        TargetError.__init__(self, message, exchange=exchange)  # not noted as the check's failure (InvalidResponse)
        self.message = message
        self.blocked_by = None


# The host name of redirect URIs the harness intercepts and never resolves (the login drivers read the redirect to
# it without loading it): an https redirect an authorization server that registers only web clients accepts.
INTERCEPTED_ORIGIN = "https://conformance-host.invalid"
LOOPBACK_ORIGIN = "http://127.0.0.1"


def is_loopback_redirect(uri: str) -> bool:
    """A plain-http loopback redirect URI: a native application's (RFC 8252 §7.3)."""
    parts = urlsplit(uri)
    return parts.scheme == "http" and (parts.hostname or "") in ("127.0.0.1", "::1", "localhost")


def alternative_redirects(redirect_uris: Sequence[str]) -> list[str] | None:
    """The other form of the host's redirect URIs (same paths): a loopback redirect becomes an https redirect on the
    intercepted host name (a web client), an https redirect a loopback one (a native client). None when there is no
    other form (a private-use scheme)."""
    other = []
    for uri in redirect_uris:
        parts = urlsplit(uri)
        if is_loopback_redirect(uri):
            origin = INTERCEPTED_ORIGIN
        elif parts.scheme == "https":
            origin = LOOPBACK_ORIGIN
        else:
            return None
        other.append(origin + urlunsplit(("", "", parts.path, parts.query, "")))
    return other


DCR_METHODS: tuple[str, ...] = ("private_key_jwt", "client_secret_basic", "client_secret_post", "none")


def dcr_auth_method(as_methods: Sequence[str] | None, host_methods: Sequence[str]) -> str:
    """The first method in the AS's list (RFC 8414's default when absent) that the host supports."""
    listed = as_methods if as_methods is not None else RFC8414_DEFAULT_METHODS
    chosen = next((m for m in listed if m in host_methods), None)
    if chosen is None:
        raise RegistrationError(
            f"no common token endpoint auth method: the authorization server lists {list(listed)}, "
            f"the host supports {list(host_methods)} for a registered client"
        )
    return chosen


def registered_client_method(
    as_methods: Sequence[str] | None, client_methods: Sequence[str], chosen: str | None = None, *, how: str
) -> MethodDecision:
    """The method of a client registered at the AS (by hand or by RFC 7591), with the negotiation as evidence:
    ``chosen`` when the user configured it, else the first the AS lists that the client can use (the AS's order is
    its preference; no legacy preference applies). ``how`` ends the reason: "<method>: <how>"."""
    method = chosen or dcr_auth_method(as_methods, client_methods)
    negotiated = negotiate_auth_method(as_methods, client_methods, legacy_preference=None)
    return replace(negotiated, chosen=method, reason=f"{method}: {how}")


def register_client(
    http: HostHTTP,
    as_meta: AsMetadata,
    redirect_uris: Sequence[str],
    *,
    identity: HostIdentity | None = None,
    client_name: str = "Conformance host",
    scope: str | None = None,
    client_methods: Sequence[str] = DCR_METHODS,
    extra_metadata: Mapping[str, Any] | None = None,
    method: str | None = None,
) -> OAuthClient:
    """RFC 7591 registration at ``registration_endpoint``. The token endpoint auth method is ``method`` when the
    user chose one, else the first the authorization server lists that the host supports (private_key_jwt only
    when an identity can sign): the AS's order is its preference."""
    endpoint = as_meta.registration_endpoint
    if not endpoint:
        raise RegistrationError("the authorization server metadata has no registration_endpoint")
    methods = [m for m in client_methods if m != "private_key_jwt" or identity is not None]
    chosen_by = "chosen by the user (--client-auth-method)" if method else "the first the authorization server lists"
    how = f"{chosen_by} that the host supports for a registered client"
    decision = registered_client_method(as_meta.auth_methods_supported, methods, method, how=how)
    method = decision.require()
    metadata: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": list(redirect_uris),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if method == "private_key_jwt":
        assert identity is not None
        metadata["jwks"] = identity.jwks()  # inline: the JWKS URL may not be reachable from the AS
        metadata["token_endpoint_auth_signing_alg"] = identity.key.alg
    if scope:
        metadata["scope"] = scope
    if redirect_uris and all(is_loopback_redirect(u) for u in redirect_uris):
        # A loopback redirect is a native application's (RFC 8252 §7.3); OpenID DCR §2 registers it as one (a web
        # client's redirect URIs must be https).
        metadata["application_type"] = "native"
    metadata.update(extra_metadata or {})
    # No retry: a repeated POST could register twice.
    response = http.post(
        endpoint, json=metadata, headers={"Accept": "application/json"}, metadata_driven=True, retry=None
    )
    try:
        body = target_json.loads(response.content) if response.content else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        for name in ("client_secret", "registration_access_token"):
            if isinstance(body.get(name), str):
                http.redactor.add_secret(body[name])
    if response.status_code not in (200, 201) or not isinstance(body, dict):
        detail = _error_text(body) or f"body {response.text[:200]!r}"
        failure = RegistrationRefused if response.status_code == 400 else RegistrationError
        raise failure(f"registration at {endpoint} answered {response.status_code}: {detail}")
    client_id = body.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError(f"registration at {endpoint} returned no client_id")
    granted = body.get("token_endpoint_auth_method", method)
    if granted not in SUPPORTED_METHODS:
        raise RegistrationError(f"registration granted an unsupported token_endpoint_auth_method {granted!r}")
    secret = body.get("client_secret") if isinstance(body.get("client_secret"), str) else None
    if granted.startswith("client_secret") and not secret:
        raise RegistrationError(f"registration granted {granted} but returned no client_secret")
    public = {k: v for k, v in body.items() if k not in ("client_secret", "registration_access_token")}
    return OAuthClient(
        kind="dcr",
        client_id=client_id,
        auth_method=granted,
        redirect_uris=tuple(redirect_uris),
        client_secret=secret,
        identity=identity,
        decision=decision,
        registration=public,
        registration_access_token=body.get("registration_access_token"),
    )


def _form(redirect_uris: Sequence[str]) -> str:
    shown = ", ".join(redirect_uris)
    if redirect_uris and all(is_loopback_redirect(u) for u in redirect_uris):
        return f"the loopback redirect {shown} as a native client"
    if all(u.startswith(INTERCEPTED_ORIGIN + "/") for u in redirect_uris):
        return f"the https redirect {shown} on a host name the harness intercepts"
    return f"the redirect {shown}"


class ClientRegistry:
    """DCR clients registered once per run (per registration endpoint and redirect URIs) and reused after.

    When the authorization server refuses the host's metadata (:class:`RegistrationRefused`), the registration is
    tried once more with the other form of redirect URI (:func:`alternative_redirects`); the client is then kept
    under the URIs asked for, its ``redirect_uris`` being the ones registered. ``evidence(client)``: the exchanges
    of its registration (refusals included), for the rule that judges it.
    """

    def __init__(self) -> None:
        self._clients: dict[tuple[str, tuple[str, ...]], OAuthClient] = {}
        self._evidence: dict[int, list[dict[str, Any]]] = {}
        self.registrations = 0
        self._registering = threading.Lock()  # checks running at once register a connection once

    def get_or_register(
        self, http: HostHTTP, as_meta: AsMetadata, redirect_uris: Sequence[str], **kwargs: Any
    ) -> OAuthClient:
        key = (as_meta.registration_endpoint or "", tuple(redirect_uris))
        with self._registering:
            return self._registered(key, http, as_meta, redirect_uris, **kwargs)

    def _registered(
        self,
        key: tuple[str, tuple[str, ...]],
        http: HostHTTP,
        as_meta: AsMetadata,
        redirect_uris: Sequence[str],
        **kwargs: Any,
    ) -> OAuthClient:
        if key not in self._clients:
            start = _context.mark()
            try:
                client = register_client(http, as_meta, redirect_uris, **kwargs)
            except RegistrationRefused as first:
                other = alternative_redirects(redirect_uris)
                if other is None:
                    raise
                try:
                    client = register_client(http, as_meta, other, **kwargs)
                except RegistrationRefused as second:
                    raise RegistrationRefused(
                        f"the authorization server refused {_form(redirect_uris)} ({first.message}) and "
                        f"{_form(other)} ({second.message})",
                        exchange=second.exchange,
                    ) from None
            self._clients[key] = client
            self._evidence[id(client)] = _context.since(start)
            self.registrations += 1
        return self._clients[key]

    def evidence(self, client: OAuthClient) -> list[dict[str, Any]]:
        """The exchanges that registered ``client`` (recorded during whichever check registered it)."""
        return list(self._evidence.get(id(client), []))

    def forget(self, as_meta: AsMetadata, redirect_uris: Sequence[str]) -> None:
        self._clients.pop((as_meta.registration_endpoint or "", tuple(redirect_uris)), None)


RegistrationMode = Literal["auto", "cimd", "dcr", "predefined"]


def identify_client(
    http: HostHTTP,
    as_meta: AsMetadata,
    identity: HostIdentity,
    redirect: RedirectChoice,
    *,
    mode: RegistrationMode | str = "auto",
    registry: ClientRegistry | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    client_auth_method: str | None = None,
) -> OAuthClient:
    """How the host identifies itself. ``auto``: a configured predefined client (the user asked for
    it), else CIMD when advertised (the contract's preference), else DCR. Raises :class:`InvalidResponse` naming what
    each way lacked."""
    orders: dict[str, tuple[str, ...]] = {
        "auto": ("predefined", "cimd", "dcr"),
        "cimd": ("cimd",),
        "dcr": ("dcr",),
        "predefined": ("predefined",),
    }
    if mode not in orders:
        raise ConfigError(f"client_registration must be auto, cimd, dcr or predefined, not {mode!r}")
    lacking: list[str] = []
    for kind in orders[mode]:
        if kind == "predefined":
            if client_id:
                return predefined_client(
                    client_id,
                    client_secret=client_secret,
                    auth_method=client_auth_method,
                    redirect_uris=[redirect.redirect_uri],
                    as_meta=as_meta,
                    http=http,
                )
            lacking.append("no predefined client configured (client_id)")
        elif kind == "cimd":
            if as_meta.cimd_supported:
                return cimd_client(identity, as_meta, redirect)
            lacking.append("CIMD: client_id_metadata_document_supported is not true")
        else:
            if as_meta.registration_endpoint:
                registry = registry if registry is not None else ClientRegistry()
                return registry.get_or_register(
                    http, as_meta, [redirect.redirect_uri], identity=identity, method=client_auth_method
                )
            lacking.append("DCR: no registration_endpoint")
    raise InvalidResponse("the host cannot identify itself to the authorization server: " + "; ".join(lacking))


# -- the authorization request ---------------------------------------------------------------------------------


@dataclass
class AuthorizationRequest:
    """One authorization request. ``issuer`` and ``iss_advertised`` are recorded before redirecting (RFC 9207)."""

    authorization_endpoint: str
    client_id: str
    redirect_uri: str
    resource: str | None
    scope: str
    issuer: str
    iss_advertised: bool
    state: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    pkce: PkcePair | None = field(default_factory=new_pkce)
    id_token_hint: str | None = None
    extra: dict[str, str | None] = field(default_factory=dict)  # None removes a parameter (negative probes)

    def params(self) -> dict[str, str]:
        params: dict[str, str] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
        }
        if self.scope:
            params["scope"] = self.scope
        params["state"] = self.state
        if self.pkce is not None:
            params["code_challenge"] = self.pkce.challenge
            params["code_challenge_method"] = self.pkce.method
        if self.resource is not None:
            params["resource"] = self.resource  # exact: never normalized
        if self.id_token_hint:
            params["id_token_hint"] = self.id_token_hint
        for name, value in self.extra.items():
            if value is None:
                params.pop(name, None)
            else:
                params[name] = value
        return params

    @property
    def url(self) -> str:
        parts = urlsplit(self.authorization_endpoint)
        query = urlencode(self.params(), quote_via=quote)  # spaces as %20, "/" and ":" encoded too
        joined = f"{parts.query}&{query}" if parts.query else query
        return urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))

    def register_secrets(self, http: HostHTTP) -> None:
        if self.pkce is not None:
            http.redactor.add_secret(self.pkce.verifier)
        if self.id_token_hint:
            http.redactor.add_secret(self.id_token_hint)


def authorization_request(
    as_meta: AsMetadata,
    client: OAuthClient,
    *,
    resource: str | None,
    scopes: ScopeChoice | str | Iterable[str],
    redirect_uri: str | None = None,
    id_token_hint: str | None = None,
    http: HostHTTP | None = None,
    **extra: str | None,
) -> AuthorizationRequest:
    """Build the request for ``client`` at the AS described by ``as_meta`` (the issuer recorded is the PRM's)."""
    endpoint = as_meta.authorization_endpoint
    if not endpoint:
        raise InvalidResponse(f"authorization server metadata {as_meta.url} has no authorization_endpoint")
    scope = scope_value(scopes)
    redirect = redirect_uri or (client.redirect_uris[0] if client.redirect_uris else None)
    if redirect is None:
        raise ConfigError("no redirect_uri for the authorization request")
    request = AuthorizationRequest(
        authorization_endpoint=endpoint,
        client_id=client.client_id,
        redirect_uri=redirect,
        resource=resource,
        scope=scope,
        issuer=as_meta.expected_issuer,
        iss_advertised=as_meta.iss_parameter_supported,
        id_token_hint=id_token_hint,
        extra=dict(extra),
    )
    if http is not None:
        request.register_secrets(http)
    return request


# -- the authorization response (callback) ---------------------------------------------------------------------


@dataclass(frozen=True)
class CallbackParams:
    """What came back to the redirect URI. Parsed, never followed."""

    url: str
    code: str | None
    state: str | None
    iss: str | None
    error: str | None
    error_description: str | None
    error_uri: str | None
    params: dict[str, str]
    duplicated: tuple[str, ...] = ()  # parameters that appeared more than once (RFC 6749 §3.1 forbids it)
    in_fragment: bool = False

    @property
    def is_error(self) -> bool:
        return self.error is not None


def parse_callback(url: str) -> CallbackParams:
    """Read an authorization response from the redirect URL (query, or fragment when the query is empty)."""
    parts = urlsplit(url)
    raw, in_fragment = parts.query, False
    if not raw and parts.fragment:
        raw, in_fragment = parts.fragment, True
    multi = parse_qs(raw, keep_blank_values=True)
    params = {k: v[0] for k, v in multi.items()}
    duplicated = tuple(sorted(k for k, v in multi.items() if len(v) > 1))
    return CallbackParams(
        url=url,
        code=params.get("code"),
        state=params.get("state"),
        iss=params.get("iss"),
        error=params.get("error"),
        error_description=params.get("error_description"),
        error_uri=params.get("error_uri"),
        params=params,
        duplicated=duplicated,
        in_fragment=in_fragment,
    )


class RejectReason(StrEnum):
    ISS_MISSING = "iss_missing"  # iss advertised but absent
    ISS_MISMATCH = "iss_mismatch"  # iss present and not identical to the recorded issuer
    ISS_DUPLICATED = "iss_duplicated"
    STATE_MISSING = "state_missing"
    STATE_MISMATCH = "state_mismatch"
    WRONG_REDIRECT = "wrong_redirect"  # the response came to another URI than the request's redirect_uri
    CODE_MISSING = "code_missing"  # neither code nor error


class AuthorizationResponseRejected(InvalidResponse):
    """The host refuses an authorization response; ``reason`` says exactly why (RFC 9207 §2.4)."""

    def __init__(self, reason: RejectReason, message: str, callback: CallbackParams) -> None:
        super().__init__(message)
        self.reason = reason
        self.callback = callback


@dataclass(frozen=True)
class AcceptedResponse:
    """A callback that passed the host's checks: a code to exchange, or an error the AS returned properly."""

    callback: CallbackParams
    iss_checked: bool  # True when an iss was present and compared

    @property
    def code(self) -> str | None:
        return self.callback.code

    @property
    def error(self) -> str | None:
        return self.callback.error


def validate_callback(
    request: AuthorizationRequest, callback: CallbackParams, *, http: HostHTTP | None = None
) -> AcceptedResponse:
    """The host's checks of an authorization response, success or error (RFC 9207, RFC 6749 §4.1.2)."""
    if http is not None and callback.code:
        http.redactor.add_secret(callback.code)

    def reject(reason: RejectReason, message: str) -> AuthorizationResponseRejected:
        return AuthorizationResponseRejected(reason, message, callback)

    arrived, expected = _without_query(callback.url), _without_query(request.redirect_uri)
    if arrived != expected:
        raise reject(RejectReason.WRONG_REDIRECT, f"response arrived at {arrived}, not at {expected}")
    kind = "error response" if callback.is_error else "authorization response"
    if "iss" in callback.duplicated:
        raise reject(RejectReason.ISS_DUPLICATED, f"{kind} carries iss more than once")
    if callback.iss is None:
        if request.iss_advertised:
            raise reject(
                RejectReason.ISS_MISSING,
                f"{kind} has no iss although the authorization server advertises "
                f"authorization_response_iss_parameter_supported (expected {request.issuer!r})",
            )
    elif callback.iss != request.issuer:
        raise reject(
            RejectReason.ISS_MISMATCH,
            f"{kind} iss {callback.iss!r} is not identical to the issuer {request.issuer!r} recorded before "
            "redirecting",
        )
    if callback.state is None:
        raise reject(RejectReason.STATE_MISSING, f"{kind} has no state (sent {len(request.state)} characters)")
    if callback.state != request.state or "state" in callback.duplicated:
        raise reject(RejectReason.STATE_MISMATCH, f"{kind} state does not equal the state sent")
    if not callback.is_error and not callback.code:
        raise reject(RejectReason.CODE_MISSING, "authorization response carries neither code nor error")
    return AcceptedResponse(callback=callback, iss_checked=callback.iss is not None)


# -- the token endpoint ----------------------------------------------------------------------------------------


@dataclass
class TokenResult:
    """A token endpoint answer, parsed; ``problems`` lists what makes a success response unusable."""

    response: httpx.Response
    body: dict[str, Any] | None
    method: str  # client authentication method used
    problems: list[str] = field(default_factory=list)

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.problems

    # The members of a token response (RFC 6749 §5.1, §5.2), None when absent or of another type.
    access_token = JsonMember(as_str, source="body")
    refresh_token = JsonMember(as_str, source="body")
    id_token = JsonMember(as_str, source="body")
    token_type = JsonMember(as_str, source="body")
    expires_in = JsonMember(as_int, source="body")
    scope = JsonMember(as_str, source="body")
    error = JsonMember(as_str, source="body")
    error_description = JsonMember(as_str, source="body")

    def describe(self) -> str:
        if self.ok:
            return f"200 with a {self.token_type} access token"
        if self.status == 200:
            return "200 but " + "; ".join(self.problems)
        if self.error:
            return f"{self.status} {self.error}" + (f" ({self.error_description})" if self.error_description else "")
        # No OAuth error member (RFC 6749 §5.2): the body says what the server meant, so show its start.
        text = json.dumps(self.body, ensure_ascii=False) if self.body is not None else self.response.text
        text = " ".join(text.split())
        return (
            f"{self.status}, no OAuth error member: {text[:200]}{'…' if len(text) > 200 else ''}"
            if text
            else str(self.status)
        )

    def require_bearer(self, what: str = "token request") -> str:
        """The access token, or a InvalidResponse saying what the answer was."""
        if not self.ok or self.access_token is None:
            raise InvalidResponse(f"{what} ({self.method}): {self.describe()}")
        return self.access_token


def token_response_problems(status: int, body: Any) -> list[str]:
    """Why a 200 token response is unusable (RFC 6749 §5.1): access_token string, token_type Bearer (any case)."""
    if status != 200:
        return []
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    problems = []
    if not isinstance(body.get("access_token"), str) or not body.get("access_token"):
        problems.append("access_token is missing or not a non-empty string")
    token_type = body.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        problems.append(f"token_type is {json.dumps(token_type)}, expected Bearer")
    expires_in = body.get("expires_in")
    if expires_in is not None and (not isinstance(expires_in, int | float) or isinstance(expires_in, bool)):
        problems.append(f"expires_in is {json.dumps(expires_in)}, expected a number")
    for name in ("refresh_token", "id_token", "scope"):
        if name in body and not isinstance(body[name], str):
            problems.append(f"{name} is not a string")
    return problems


def basic_credentials(client_id: str, secret: str) -> str:
    """RFC 6749 §2.3.1: each part form-urlencoded before base64."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


@dataclass
class TokenEndpoint:
    """Token requests for one client at one AS."""

    http: HostHTTP
    as_meta: AsMetadata
    client: OAuthClient
    assertion_audience: str | None = None  # default: the token endpoint URL (see identity.py's decision)
    last_assertion: str | None = field(default=None, repr=False)  # the client assertion last sent (replay probes)

    @property
    def url(self) -> str:
        url = self.as_meta.token_endpoint
        if not url:
            raise InvalidResponse(f"authorization server metadata {self.as_meta.url} has no token_endpoint")
        return url

    def client_authentication(
        self, method: str | None = None, *, assertion: str | None = None
    ) -> tuple[dict[str, str], dict[str, str]]:
        """``(headers, form fields)`` for ``method`` (default: the client's). ``assertion`` overrides the signed
        one (negative probes)."""
        method = method or self.client.auth_method
        client = self.client
        if method == "none":
            return {}, {"client_id": client.client_id}
        if method == "private_key_jwt":
            if assertion is None:
                if client.identity is None:
                    raise ConfigError("private_key_jwt needs the host identity")
                assertion = client.identity.client_assertion(client.client_id, self.assertion_audience or self.url)
            self.http.redactor.add_secret(assertion)
            self.last_assertion = assertion
            fields = {"client_id": client.client_id, "client_assertion_type": ASSERTION_TYPE}
            return {}, {**fields, "client_assertion": assertion}
        secret = client.client_secret or "conformance-probe-secret"  # probes of a method outside the intersection
        self.http.redactor.add_secret(secret, user=client.client_id)  # also as the Basic pair it may travel in
        if method == "client_secret_post":
            return {}, {"client_id": client.client_id, "client_secret": secret}
        if method == "client_secret_basic":
            return {"Authorization": basic_credentials(client.client_id, secret)}, {}
        raise ConfigError(f"unsupported client authentication method {method!r}")

    def request(
        self,
        form: Mapping[str, str | None],
        *,
        method: str | None = None,
        assertion: str | None = None,
    ) -> TokenResult:
        """POST the form (``None`` values dropped) with client authentication; parse and check the answer."""
        used = method or self.client.auth_method
        headers, auth_fields = self.client_authentication(used, assertion=assertion)
        data = {**{k: v for k, v in form.items() if v is not None}, **auth_fields}
        for name in ("code", "code_verifier", "refresh_token"):
            if data.get(name):
                self.http.redactor.add_secret(data[name])
        response = self.http.post(self.url, data=data, headers={**FORM, **headers}, retry=None, metadata_driven=True)
        try:
            body = target_json.loads(response.content) if response.content else None
        except ValueError:
            body = None
        if isinstance(body, dict):
            for name in ("access_token", "refresh_token", "id_token"):
                if isinstance(body.get(name), str):
                    self.http.redactor.add_secret(body[name])
        return TokenResult(
            response=response,
            body=body if isinstance(body, dict) else None,
            method=used,
            problems=token_response_problems(response.status_code, body),
        )

    def exchange_code(
        self,
        code: str,
        code_verifier: str | None,
        redirect_uri: str,
        resource: str | None,
        *,
        method: str | None = None,
        assertion: str | None = None,
        extra: Mapping[str, str | None] | None = None,
    ) -> TokenResult:
        form: dict[str, str | None] = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
            "resource": resource,
            **(extra or {}),
        }
        return self.request(form, method=method, assertion=assertion)

    def exchange(self, request: AuthorizationRequest, accepted: AcceptedResponse, **kwargs: Any) -> TokenResult:
        """The token request that follows an accepted authorization response."""
        if not accepted.code:
            raise InvalidResponse(f"no code to exchange: the authorization response was error {accepted.error!r}")
        verifier = request.pkce.verifier if request.pkce else None
        return self.exchange_code(accepted.code, verifier, request.redirect_uri, request.resource, **kwargs)

    def refresh(
        self,
        refresh_token: str,
        *,
        resource: str | None = None,
        scope: str | None = None,
        method: str | None = None,
    ) -> TokenResult:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "resource": resource, "scope": scope}
        return self.request(form, method=method)


def _without_query(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _error_text(body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        description = body.get("error_description")
        return body["error"] + (f" ({description})" if isinstance(description, str) else "")
    return None


__all__ = [
    "METHOD_PREFERENCE",
    "AcceptedResponse",
    "AuthorizationRequest",
    "AuthorizationResponseRejected",
    "CallbackParams",
    "ClientRegistry",
    "MethodDecision",
    "OAuthClient",
    "PkcePair",
    "RedirectChoice",
    "RegistrationError",
    "RegistrationRefused",
    "RejectReason",
    "ScopeChoice",
    "TokenEndpoint",
    "TokenResult",
    "alternative_redirects",
    "authorization_request",
    "basic_credentials",
    "choose_redirect_mode",
    "choose_scopes",
    "cimd_client",
    "identify_client",
    "issuer_identification_met",
    "negotiate_auth_method",
    "new_pkce",
    "parse_callback",
    "predefined_client",
    "register_client",
    "s256",
    "token_response_problems",
    "validate_callback",
]
