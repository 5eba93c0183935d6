"""Linking an account as the host does: the client behind the linking fixtures the suites share.

The fixtures themselves (``prm_discovery``, ``as_metadata``, ``publisher``, ``host_client``, ``linker``,
``linked_account`` ...) are in ``suites/fixtures.py`` and documented there; each calls one function here. A
prerequisite that fails raises ``Blocked(<rule>, why)``; missing configuration is ``needs(...)``.

:class:`Linker` runs authorizations: ``attempt(...)`` returns a :class:`FlowAttempt` (never raises for the target's
faults; ``rule``/``problem`` name the first failed rule), ``link(...)`` returns a :class:`LinkedAccount` or raises
``Blocked``. Negative probes build a request with ``request(...)`` (``params`` changes or removes query parameters,
``resource=None`` leaves it out), run ``authorize(request, decision=...)`` for the raw callback or ``code(request)``
for a fresh accepted code, and use ``host.tokens`` (the ``TokenEndpoint``) directly.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlsplit

import httpx
import jwt

from conformance import Blocked, TargetError, needs
from conformance.config import Settings, Target
from conformance.core import _context
from conformance.core._exceptions import ConfigError
from conformance.host import InvalidResponse, LimitReached
from conformance.host.asmeta import AsMetadata, discover_as_metadata
from conformance.host.discovery import PrmDiscovery, challenge_of, discover_prm, open_endpoint
from conformance.host.http import HostHTTP
from conformance.host.identity import HostIdentity, load_or_generate_key, new_callback_id
from conformance.host.login import (
    BrowserUnavailable,
    Credentials,
    Decision,
    LoginDriver,
    LoginResult,
    LoginSteps,
    MissingCredentials,
    make_driver,
)
from conformance.host.oauth import (
    INTERCEPTED_ORIGIN,
    SUPPORTED_METHODS,
    AcceptedResponse,
    AuthorizationRequest,
    AuthorizationResponseRejected,
    CallbackParams,
    ClientRegistry,
    OAuthClient,
    RedirectChoice,
    RegistrationRefused,
    RejectReason,
    ScopeChoice,
    TokenEndpoint,
    TokenResult,
    authorization_request,
    choose_redirect_mode,
    choose_scopes,
    identify_client,
    parse_callback,
    scope_value,
    validate_callback,
)
from conformance.host.publisher import Publisher
from conformance.judges.auth import endpoint_https_problems
from conformance.suites._transport import loopback_run
from conformance.verdict._verdicts import NeedsUnmet

INVALID_BEARER = "conformance-invalid-token"
DEFAULT: Any = object()  # "the host's default" for optional arguments where None means "leave it out"
ACCOUNT_OPTIONS = {1: ("test_user", "test_password"), 2: ("test_user_2", "test_password_2")}


# -- discovery -------------------------------------------------------------------------------------------------


def challenge_probe(http: HostHTTP, mcp_url: str) -> httpx.Response:
    """The opening request (initialize or server/discover) with a presented but invalid bearer token: what a host
    meets once a tool needs auth when the server also serves anonymous requests."""
    return open_endpoint(http, mcp_url, {"Authorization": f"Bearer {INVALID_BEARER}"})


@contextmanager
def blocked_by(rule_id: str) -> Iterator[None]:
    """A target that does not answer the block usably (TargetError, InvalidResponse included) blocks ``rule_id``;
    throttling and a spent time budget propagate unchanged (each has its own verdict)."""
    try:
        yield
    except LimitReached:
        raise
    except TargetError as exc:
        raise Blocked(rule_id, str(exc)) from None


def host_discovery(http: HostHTTP, mcp_url: str) -> PrmDiscovery:
    """The protected resource metadata found the host's way (blocked by AUTH-PRM-01), with the challenge of an
    invalid token when the unauthenticated request was served."""
    with blocked_by("AUTH-PRM-01"):
        found = discover_prm(http, mcp_url)
    if found.challenge is None:
        try:
            response = challenge_probe(http, mcp_url)
        except LimitReached:
            raise
        except TargetError:
            return found
        if response.status_code == 401:
            found = dataclasses.replace(found, challenge=challenge_of(response))
    return found


def first_as_metadata(http: HostHTTP, prm: PrmDiscovery) -> AsMetadata:
    """The metadata of ``authorization_servers[0]`` (blocked by AUTH-PRM-03 without one, AUTH-ASM-01 unserved)."""
    servers = prm.document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str) or not servers[0]:
        raise Blocked("AUTH-PRM-03", f"authorization_servers is {servers!r}: no issuer to try")
    with blocked_by("AUTH-ASM-01"):
        return discover_as_metadata(http, servers[0])


# -- the host's client ---------------------------------------------------------------------------------------


# Without a publisher, a registered or predefined client needs no published documents: its redirect URIs are these
# stable ones (the form and browser login drivers read the redirect without anything served there), so a vendor can
# register them once. The origin is never fetched (documents are only fetched for CIMD).
UNPUBLISHED_ORIGIN = INTERCEPTED_ORIGIN
DEFAULT_REDIRECT_BASE = "http://127.0.0.1/oauth/callback"
PREDEFINED_CALLBACK_ID = "conformance"  # the callback-specific redirect of a predefined client: {base}/conformance


def needs_cimd(settings: Settings, as_metadata: AsMetadata) -> bool:
    """Whether the host will identify itself with CIMD (so its documents must be published somewhere)."""
    mode = settings.get("client_registration", "auto")
    if mode == "cimd":
        return True
    return mode == "auto" and not settings.get("client_id") and as_metadata.cimd_supported


def host_identity_for(
    publisher: Publisher | None, settings: Settings, as_metadata: Callable[[], AsMetadata]
) -> HostIdentity:
    """The publisher's identity; without one, documents published elsewhere or (DCR, a predefined client) none.
    ``as_metadata`` is called only when the choice depends on it."""
    if publisher is not None:
        assert publisher.identity is not None
        return publisher.identity
    s = settings
    base = s.get("client_metadata_url")
    if not base and not needs_cimd(s, as_metadata()):
        # DCR or a predefined client: nothing to publish, so no publisher certificate is needed.
        return HostIdentity(
            base_url=UNPUBLISHED_ORIGIN,
            key=load_or_generate_key(s.get("client_key")),
            redirect_base=s.get("redirect_base") or DEFAULT_REDIRECT_BASE,
        )
    if not base:
        needs(
            "the host's client metadata origin: a publisher certificate or documents published elsewhere",
            "--publisher-certfile/--publisher-keyfile or --client-metadata-url with --client-key "
            "(or --client-registration dcr/predefined, which publish nothing)",
            incomplete=True,
        )
    return HostIdentity(
        base_url=base, key=load_or_generate_key(s.get("client_key")), redirect_base=s.get("redirect_base")
    )


@dataclass
class HostClient:
    """The client the host links with, and what it decided on the way."""

    client: OAuthClient
    redirect: RedirectChoice
    identity: HostIdentity
    as_metadata: AsMetadata
    resource: str
    scopes: ScopeChoice
    tokens: TokenEndpoint


def host_refusal(
    prm: PrmDiscovery, meta: AsMetadata, target: Target, judged: Callable[[str], bool] | None = None
) -> tuple[str, str] | None:
    """``(rule, why)`` when a host would not start linking with this server at all. ``judged(url)`` False: the
    transport of that URL is not judged (a loopback run), so plain HTTP there refuses nothing."""
    resource = prm.document.get("resource")
    if resource != target.base_url:
        return "AUTH-PRM-02", f"resource {resource!r} is not the URL the host connects to ({target.base_url!r})"
    if not meta.issuer_matches:
        return "AUTH-ASM-02", f"metadata issuer {meta.issuer!r} differs from {meta.expected_issuer!r}"
    if not meta.supports_s256:
        return "AUTH-ASM-03", f"code_challenge_methods_supported is {meta.code_challenge_methods!r}: no S256"
    if endpoint_https_problems(meta.document, judged):
        return "AUTH-ASM-04", "; ".join(endpoint_https_problems(meta.document, judged))
    return None


def make_host_client(
    host_http: HostHTTP,
    settings: Settings,
    target: Target,
    prm_discovery: PrmDiscovery,
    as_metadata: AsMetadata,
    host_identity: HostIdentity,
    client_registry: ClientRegistry,
) -> HostClient:
    """The client the host links with: refused (Blocked) where a host would not link with this server at all."""
    s = settings
    refusal = host_refusal(prm_discovery, as_metadata, target, judged=lambda url: not loopback_run(host_http, url))
    if refusal is not None:
        raise Blocked(*refusal)
    client_id = s.get("client_id")
    predefined = bool(client_id) and s.get("client_registration", "auto") in ("auto", "predefined")
    # A predefined client's redirect URIs are registered by hand: the callback id is fixed so that they are stable.
    callback_id = PREDEFINED_CALLBACK_ID if predefined else new_callback_id()
    redirect = choose_redirect_mode(
        as_metadata, host_identity, callback_id, legacy_stable=bool(s.get("legacy_stable_redirect"))
    )
    method = s.get("client_auth_method")
    if method and method not in SUPPORTED_METHODS:
        needs(
            f"a token endpoint auth method the host supports ({', '.join(SUPPORTED_METHODS)}), not {method!r}",
            "--client-auth-method",
            incomplete=True,
        )
    if not (as_metadata.cimd_supported or as_metadata.registration_endpoint or client_id):
        raise Blocked("AUTH-ASM-05", "neither CIMD, nor a registration endpoint, nor a predefined client")
    try:
        client = identify_client(
            host_http,
            as_metadata,
            host_identity,
            redirect,
            mode=s.get("client_registration", "auto"),
            registry=client_registry,
            client_id=client_id,
            client_secret=s.get("client_secret"),
            client_auth_method=method,
        )
    except LimitReached:
        raise
    except RegistrationRefused as exc:
        registration_need(exc, incomplete=True)
    except InvalidResponse as exc:
        registering = not as_metadata.cimd_supported and not client_id and as_metadata.registration_endpoint
        raise Blocked("AUTH-DCR-01" if registering else "AUTH-ASM-06", exc.message) from None
    except TargetError as exc:
        raise Blocked("AUTH-DCR-01", str(exc)) from None
    if client.kind == "dcr" and client.redirect_uris and client.redirect_uris[0] != redirect.redirect_uri:
        # Registered with the other form of redirect URI (the server refused the first): the host uses that one.
        redirect = dataclasses.replace(
            redirect,
            redirect_uri=client.redirect_uris[0],
            reason=f"{redirect.reason}; registered as {client.redirect_uris[0]} (the first form was refused)",
        )
    scopes = choose_scopes(
        prm_discovery.challenge.get("scope") if prm_discovery.challenge else None,
        _strings(prm_discovery.document.get("scopes_supported")),
        as_metadata.scopes_supported,
    )
    return HostClient(
        client=client,
        redirect=redirect,
        identity=host_identity,
        as_metadata=as_metadata,
        resource=str(prm_discovery.document["resource"]),
        scopes=scopes,
        tokens=TokenEndpoint(host_http, as_metadata, client),
    )


REGISTRATION_OPTIONS = (
    "--redirect-base (a redirect URI the authorization server registers), or --client-registration predefined "
    "with --client-id"
)


def registration_need(exc: RegistrationRefused, *, incomplete: bool = False) -> NoReturn:
    """The authorization server refused every registration the host can make (its redirect URIs, its metadata):
    the host's choices, never the target's MUST failure; the need names the options that supply another."""
    needs(
        f"a client registration the authorization server accepts: {exc.message}",
        REGISTRATION_OPTIONS,
        incomplete=incomplete,
    )


def register_connection_client(
    http: HostHTTP, host: HostClient, registry: ClientRegistry, settings: Settings
) -> OAuthClient:
    """The DCR client of this connection (registered once, for the host's redirect URI, or the other form of it
    when the server refuses that one), its registration exchanges attached to the running check's evidence."""
    try:
        client = registry.get_or_register(
            http,
            host.as_metadata,
            [host.redirect.redirect_uri],
            identity=host.identity,
            method=settings.get("client_auth_method"),
        )
    except RegistrationRefused as exc:
        registration_need(exc)
    _context.attach(registry.evidence(client))
    return client


def _strings(value: Any) -> list[str] | None:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None


# -- authorizations --------------------------------------------------------------------------------------------


@dataclass
class FlowAttempt:
    """One authorization-code flow, as far as it got. ``rule`` and ``problem`` name the first failure."""

    request: AuthorizationRequest
    client: OAuthClient
    login: LoginResult | None = None
    callback: CallbackParams | None = None
    accepted: AcceptedResponse | None = None
    token: TokenResult | None = None
    rule: str | None = None
    problem: str | None = None
    # The exchanges of this flow (login included), so that the rule it broke shows them whichever check ran it.
    exchanges: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    need: tuple[str, str] | None = None  # (what, option): the configuration, not the target, stopped the flow

    @property
    def ok(self) -> bool:
        return self.rule is None and self.need is None and self.token is not None and self.token.ok

    def require(self) -> TokenResult:
        """The token result, or ``Blocked`` by the rule the flow broke (a configuration gap: skipped, incomplete)."""
        if self.need is not None:
            needs(*self.need, incomplete=True)
        if not self.ok or self.token is None:
            raise Blocked(self.rule or "AUTH-FLOW-02", self.problem or "no token")
        return self.token


RENEW_MARGIN_S = 15.0  # a shared token this close to its expiry is renewed before use


@dataclass(frozen=True)
class AccountKey:
    """What a host keeps one token for: the user, the scopes requested (as a set), the resource, the client."""

    account: int
    scopes: frozenset[str]
    resource: str
    client_id: str


@dataclass
class LinkedAccount:
    """A completed authorization for one test account, shared by the checks of a session.

    ``access_token`` is always usable: a token about to expire is refreshed, or, when the authorization server
    issued no refresh token (or refuses it), replaced by linking again (``relink``). A check that needs a spent
    token (expiry, revocation, rotation) takes a throwaway from ``link_account()``, never this one.
    """

    account: int
    resource: str
    token: TokenResult
    tokens: TokenEndpoint
    attempt: FlowAttempt
    current_token: str
    refresh_token: str | None
    id_token: str | None
    scopes: tuple[str, ...]
    relink: Callable[[], FlowAttempt] | None = None
    obtained_at: float = dataclasses.field(default_factory=time.time)
    renewals: list[str] = dataclasses.field(default_factory=list)  # how the token was renewed, for the report
    # Checks running at once share the account: one renewal at a time, or two refreshes would send the same
    # refresh token twice (a reuse, which revokes the whole grant at an AS that rotates them).
    _renewing: threading.RLock = dataclasses.field(default_factory=threading.RLock, repr=False, compare=False)

    @classmethod
    def from_attempt(
        cls,
        account: int,
        resource: str,
        tokens: TokenEndpoint,
        attempt: FlowAttempt,
        relink: Callable[[], FlowAttempt] | None = None,
    ) -> LinkedAccount:
        token = attempt.require()
        granted = token.scope.split() if token.scope else attempt.request.scope.split()
        assert token.access_token is not None  # token.ok guarantees it
        return cls(
            account=account,
            resource=resource,
            token=token,
            tokens=tokens,
            attempt=attempt,
            current_token=token.access_token,
            refresh_token=token.refresh_token,
            id_token=token.id_token,
            scopes=tuple(granted),
            relink=relink,
        )

    @property
    def client(self) -> OAuthClient:
        return self.tokens.client

    @property
    def expires_at(self) -> float | None:
        """When the current access token expires: its ``exp`` claim, else ``expires_in`` from when it came."""
        try:
            exp = jwt.decode(self.current_token, options={"verify_signature": False}).get("exp")
        except jwt.PyJWTError:
            exp = None
        if isinstance(exp, int | float):
            return float(exp)
        return self.obtained_at + self.token.expires_in if self.token.expires_in is not None else None

    @property
    def access_token(self) -> str:
        """The account's access token, renewed first when it is (about to be) expired."""
        if self._expiring():
            with self._renewing:
                if self._expiring():  # not renewed meanwhile by another asker
                    self.renew()
        return self.current_token

    def _expiring(self) -> bool:
        expires_at = self.expires_at
        return expires_at is not None and expires_at - time.time() < RENEW_MARGIN_S

    @property
    def auth_header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}

    def renew(self) -> None:
        """Refresh; when that is impossible or refused, link again. A failure keeps the old token (the check that
        uses it then sees the target's answer) and is noted."""
        if self.refresh_token:
            result = self.refresh()
            if result.ok:
                self.renewals.append("refreshed")
                return
        if self.relink is None:
            return
        attempt = self.relink()
        if not attempt.ok or attempt.token is None or not attempt.token.access_token:
            self.renewals.append(f"relinking failed: {attempt.problem}")
            return
        self._take(attempt.token)
        self.attempt = attempt
        self.renewals.append("linked again (the token expired and could not be refreshed)")

    def refresh(self, *, scope: str | None = None) -> TokenResult:
        """A refresh-token grant for the same resource; on success the account holds the new (rotated) tokens."""
        with self._renewing:
            if not self.refresh_token:
                raise Blocked("AUTH-FLOW-02", "the token response carried no refresh_token")
            result = self.tokens.refresh(self.refresh_token, resource=self.resource, scope=scope)
            if result.ok and result.access_token:
                self._take(result)
            return result

    def _take(self, result: TokenResult) -> None:
        assert result.access_token is not None
        self.token, self.current_token = result, result.access_token
        self.refresh_token = result.refresh_token or self.refresh_token
        self.id_token = result.id_token or self.id_token
        self.obtained_at = time.time()


@dataclass(frozen=True)
class ObtainedResponse:
    """An authorization response the run obtained (parsed, unvalidated), with the check that obtained it."""

    request: AuthorizationRequest
    callback: CallbackParams
    during: str  # the rules of the check (or "a fixture")


class Linker:
    """Authorizations of the host's client through the configured login driver."""

    def __init__(
        self,
        http: HostHTTP,
        settings: Settings,
        host: HostClient,
        publisher: Publisher | None,
    ) -> None:
        self.http = http
        self.settings = settings
        self.host = host
        self.publisher = publisher
        self.responses: list[ObtainedResponse] = []  # every authorization response of the run (AUTH-ISS-01)
        # A real browser or a person logs in one flow at a time, whichever checks ask (see ``concurrency``).
        self._one_login = threading.Lock()
        self._identities: dict[str, OAuthClient | str] = {}  # other_identity(): per method, the client or why not
        self._identity_lock = threading.Lock()
        self._accounts: dict[AccountKey, LinkedAccount] = {}  # shared(): the host's tokens, per user and grant
        self._upgrades: dict[tuple[AccountKey, frozenset[str]], FlowAttempt] = {}  # upgrade(): per grant and scopes
        self._account_locks: dict[object, threading.Lock] = {}
        self._accounts_lock = threading.Lock()
        steps_file = settings.get("login_steps")
        self.steps = LoginSteps.load(steps_file) if steps_file else LoginSteps.default()

    # -- pieces --------------------------------------------------------------------------------------------

    def credentials(self, account: int) -> Credentials | None:
        """Credentials from the settings; None for account 1 without settings (the steps file names them)."""
        user_option, password_option = ACCOUNT_OPTIONS[account]
        user, password = self.settings.get(user_option), self.settings.get(password_option)
        if user and password:
            return Credentials(str(user), str(password))
        if account == 1:
            return None
        needs("a second test account", "CONFORMANCE_TEST_USER_2 and CONFORMANCE_TEST_PASSWORD_2")

    @property
    def concurrency(self) -> int:
        """How many authorizations may run at once: the form driver's logins are separate browsers (a cookie jar
        each, ``conformance.host._cookies``); a real browser or a person logs in one flow at a time."""
        return self.http.concurrency if self.settings.get("login_driver", "form") == "form" else 1

    def driver(self, account: int) -> LoginDriver:
        try:
            driver = make_driver(
                self.settings.get("login_driver", "form"),
                http=self.http,
                steps=self.steps,
                publisher=self.publisher,
                credentials=self.credentials(account),
                timeout_s=float(self.settings.get("login_timeout", 300.0)),
            )
        except BrowserUnavailable as exc:
            needs(f"the browser login driver ({exc})", "--login-driver form", incomplete=True)
        except ConfigError as exc:
            needs(f"a usable login driver ({exc})", "--login-driver", incomplete=True)
        if hasattr(driver, "fresh_session"):
            # A new login per authorization: the AS session of another account must never leak into this one.
            driver.fresh_session = True
        return driver

    def request(
        self,
        *,
        client: OAuthClient | None = None,
        scopes: ScopeChoice | str | Sequence[str] | None = None,
        id_token_hint: str | None = None,
        redirect_uri: str | None = None,
        resource: str | None = DEFAULT,
        params: Mapping[str, str | None] | None = None,
        **extra: str | None,
    ) -> AuthorizationRequest:
        """An authorization request as the host builds it; ``resource=None`` leaves the parameter out; ``params``
        (or keywords) add, change or (value None) remove query parameters for negative probes."""
        extra = {**(params or {}), **extra}
        return authorization_request(
            self.host.as_metadata,
            client or self.host.client,
            resource=self.host.resource if resource is DEFAULT else resource,
            scopes=self.host.scopes if scopes is None else scopes,
            redirect_uri=redirect_uri,
            id_token_hint=id_token_hint,
            http=self.http,
            **extra,
        )

    def login(self, request: AuthorizationRequest, *, account: int = 1, decision: Decision = "approve") -> LoginResult:
        """Run the login driver; MissingCredentials becomes a need."""
        driver = self.driver(account)
        try:
            if self.concurrency > 1:
                result = driver.login(request.url, request.redirect_uri, decision=decision, state=request.state)
            else:
                with self._one_login:
                    result = driver.login(request.url, request.redirect_uri, decision=decision, state=request.state)
        except MissingCredentials as exc:
            needs(
                f"test account credentials ({exc.variable})",
                "CONFORMANCE_TEST_USER and CONFORMANCE_TEST_PASSWORD",
                incomplete=account == 1,  # without account 1 nothing is linked; account 2 only serves PROF-09
            )
        if result.config_problem:
            # Stuck at the sign-in page (steps that do not fit it, or the account refused): the user's to fix.
            needs(
                result.config_problem,
                "--login-steps and the test account (CONFORMANCE_TEST_USER, CONFORMANCE_TEST_PASSWORD)",
                incomplete=account == 1,
            )
        return result

    def authorize(
        self, request: AuthorizationRequest, *, account: int = 1, decision: Decision = "approve"
    ) -> tuple[LoginResult, CallbackParams | None]:
        """The login and the parsed (unvalidated) callback, or None when the flow never reached the redirect URI."""
        result = self.login(request, account=account, decision=decision)
        callback = parse_callback(result.callback_url) if result.callback_url else None
        if callback is not None:
            obtained = ObtainedResponse(request, callback, _context.current_rules_text())
            _context.in_order(lambda: self.responses.append(obtained))  # in the cases' order
        return result, callback

    def decline(self) -> tuple[AuthorizationRequest, LoginResult, CallbackParams]:
        """The user declines consent: the error response the authorization server sent back. The request asks for
        consent (``prompt=consent``, OpenID Connect Core §3.1.2.1) when the metadata lists it in
        ``prompt_values_supported``; when it does not and the answer is a code (consent remembered for this client),
        once more with it (an authorization server ignores a parameter it does not know, RFC 6749 §3.1). Blocked by
        AUTH-FLOW-01 when declining leads nowhere; a need saying what would make the case reachable when the server
        never showed a page the user could decline."""
        advertised = "consent" in (self.host.as_metadata.prompt_values or [])
        asks = [True] if advertised else [False, True]
        for ask in asks:
            request = self.request(prompt="consent") if ask else self.request()
            login, callback = self.authorize(request, decision="deny")
            if callback is None:
                raise Blocked("AUTH-FLOW-01", f"declining consent led nowhere: {login.stopped}")
            if callback.is_error:
                return request, login, callback
        sent = (
            "prompt=consent was sent (prompt_values_supported lists consent)"
            if advertised
            else "also with prompt=consent, which prompt_values_supported does not list"
        )
        # A steps file cannot add a page the AS never shows (a page the steps did not recognise stops the login
        # instead), so the remedy is on the AS's side.
        needs(
            "an error authorization response: the authorization server granted the request without a consent page "
            f"the user could decline ({sent})",
            "an authorization server that shows its consent page on prompt=consent (listed in "
            "prompt_values_supported), or a test client configured to ask for consent on every authorization",
        )

    def code(self, request: AuthorizationRequest, *, account: int = 1) -> AcceptedResponse:
        """A fresh accepted code for ``request`` (approve), else ``Blocked`` by the rule the flow broke."""
        attempt = self.attempt(request=request, account=account, exchange=False)
        if attempt.rule is not None or attempt.accepted is None or not attempt.accepted.code:
            raise Blocked(attempt.rule or "AUTH-FLOW-01", attempt.problem or "no code")
        return attempt.accepted

    # -- the host's tokens ---------------------------------------------------------------------------------

    def account_key(self, account: int, scopes: ScopeChoice | str | Sequence[str] | None = None) -> AccountKey:
        """The key of ``account``'s token for ``scopes`` (the host's default when None) with the host's client."""
        value = scope_value(self.host.scopes if scopes is None else scopes)
        return AccountKey(account, frozenset(value.split()), self.host.resource, self.host.client.client_id)

    def keep(self, linked: LinkedAccount) -> LinkedAccount:
        """Keep ``linked`` (an authorization of the host's client) as the token of its account and requested scopes,
        which ``shared`` then returns."""
        key = self.account_key(linked.account, linked.attempt.request.scope)
        with self._accounts_lock:
            self._accounts.setdefault(key, linked)
        return linked

    def shared(self, account: int = 1, scopes: ScopeChoice | str | Sequence[str] | None = None) -> LinkedAccount:
        """The host's token for ``account`` and ``scopes`` at this server, as a host keeps one per user and server
        until it expires: the one already obtained (``access_token`` renews it when about to expire), else a new
        authorization, kept for the next asker. For checks that only present the token or read what came with it;
        a check whose flow the rule is about, or that spends, revokes or rotates a token, takes its own
        (``link``)."""
        key = self.account_key(account, scopes)
        with self._accounts_lock:
            lock = self._account_locks.setdefault(key, threading.Lock())
        with lock:  # one authorization per key, also when checks ask at once
            with self._accounts_lock:
                found = self._accounts.get(key)
            if found is None:
                found = self.link(account=account, scopes=scopes)
                with self._accounts_lock:
                    self._accounts[key] = found
            return found

    def upgrade(
        self,
        before: ScopeChoice | str | Sequence[str],
        after: ScopeChoice | str | Sequence[str],
        *,
        account: int = 1,
    ) -> FlowAttempt:
        """The authorization of ``account`` for ``after`` (no ``id_token_hint``) once it holds a grant for
        ``before`` (the caller obtained it): a scope upgrade, made once per run and read by the checks that judge
        it or the token it gave (with its exchanges as their evidence). Never raises for the target's faults (see
        ``attempt``)."""
        key = (self.account_key(account, before), self.account_key(account, after).scopes)
        with self._accounts_lock:
            lock = self._account_locks.setdefault(key, threading.Lock())
        with lock:
            found = self._upgrades.get(key)
            if found is None:
                start = _context.mark()
                found = self.attempt(account=account, scopes=after)
                found.exchanges = _context.since(start)
                self._upgrades[key] = found
        _context.attach(found.exchanges)
        return found

    def upgraded(
        self,
        before: ScopeChoice | str | Sequence[str],
        after: ScopeChoice | str | Sequence[str],
        *,
        account: int = 1,
    ) -> LinkedAccount:
        """The token of ``upgrade``, raising ``Blocked`` like ``link`` when the flow broke a rule."""
        attempt = self.upgrade(before, after, account=account)
        return LinkedAccount.from_attempt(
            account, self.host.resource, self.host.tokens, attempt, relink=self.relinker(account, attempt)
        )

    # -- whole flows ---------------------------------------------------------------------------------------

    def attempt(
        self,
        *,
        account: int = 1,
        request: AuthorizationRequest | None = None,
        client: OAuthClient | None = None,
        tokens: TokenEndpoint | None = None,
        scopes: ScopeChoice | str | Sequence[str] | None = None,
        id_token_hint: str | None = None,
        exchange: bool = True,
    ) -> FlowAttempt:
        """Authorize, validate the callback as the host does, exchange the code. Faults of the target are recorded
        in the attempt (``rule``, ``problem``), never raised."""
        client = client or (tokens.client if tokens else None) or self.host.client
        request = request or self.request(client=client, scopes=scopes, id_token_hint=id_token_hint)
        attempt = FlowAttempt(request=request, client=client)
        try:
            attempt.login, attempt.callback = self.authorize(request, account=account)
        except (InvalidResponse, LimitReached):
            raise  # a verdict on the check, not a fault of this attempt
        except TargetError as exc:
            return self._failed(attempt, "AUTH-FLOW-01", f"authorization: {exc}")
        if attempt.callback is None:
            assert attempt.login is not None
            why = attempt.login.stopped or "the login did not reach the redirect URI"
            return self._failed(attempt, self._client_rule(attempt, why) or "AUTH-FLOW-01", f"authorization: {why}")
        if attempt.callback.is_error:
            why = f"the authorization response is error {attempt.callback.error!r}" + (
                f" ({attempt.callback.error_description})" if attempt.callback.error_description else ""
            )
            return self._failed(attempt, self._client_rule(attempt, why) or "AUTH-FLOW-01", why)
        try:
            attempt.accepted = validate_callback(request, attempt.callback, http=self.http)
        except AuthorizationResponseRejected as exc:
            iss = exc.reason in (RejectReason.ISS_MISSING, RejectReason.ISS_MISMATCH, RejectReason.ISS_DUPLICATED)
            return self._failed(attempt, "AUTH-ISS-01" if iss else "AUTH-FLOW-01", f"the host refused: {exc.message}")
        if not exchange:
            return attempt
        endpoint = tokens or (
            self.host.tokens if client is self.host.client else TokenEndpoint(self.http, self.host.as_metadata, client)
        )
        try:
            attempt.token = endpoint.exchange(request, attempt.accepted)
        except (InvalidResponse, LimitReached):
            raise  # a verdict on the check, not a fault of this attempt
        except TargetError as exc:
            return self._failed(attempt, "AUTH-FLOW-02", f"token request: {exc}")
        if not attempt.token.ok and client.kind == "predefined" and attempt.token.error == "invalid_client":
            # The user registered this client by hand: invalid_client means its secret or method as configured
            # does not match the registration (RFC 7591 §2), not that the server broke a rule.
            attempt.problem = f"token request ({attempt.token.method}): {attempt.token.describe()}"
            attempt.need = (
                f"a predefined client the authorization server accepts ({attempt.problem})",
                "CONFORMANCE_CLIENT_SECRET and --client-auth-method as the client was registered",
            )
            return attempt
        if not attempt.token.ok:
            why = f"token request ({attempt.token.method}): {attempt.token.describe()}"
            cimd_auth = client.kind == "cimd" and attempt.token.error == "invalid_client"
            rule = "AUTH-CIMD-02" if cimd_auth and client.auth_method == "private_key_jwt" else "AUTH-FLOW-02"
            return self._failed(attempt, rule, why)
        return attempt

    def link(
        self,
        account: int = 1,
        scopes: ScopeChoice | str | Sequence[str] | None = None,
        id_token_hint: str | None = None,
    ) -> LinkedAccount:
        attempt = self.attempt(account=account, scopes=scopes, id_token_hint=id_token_hint)
        return LinkedAccount.from_attempt(
            account, self.host.resource, self.host.tokens, attempt, relink=self.relinker(account, attempt)
        )

    def other_identity(self, method: str) -> OAuthClient | str:
        """A CIMD client of the other kind than the host's own, whose document lists only ``method``: published by
        the host's publisher under the origin configured for the host's own documents (``--client-metadata-url``,
        the publisher certificate), which the authorization server already fetches, at a path of its own (a new
        client id, not a document the server may have cached). The server must accept it first (a control
        authorization); otherwise, or without a publisher, the reason its cases could not be tried.

        One such client per method and run, as a host keeps a client it registered: the checks that authorize with
        it share its document (published until the run ends) and its control authorization, whose result they only
        read."""
        with self._identity_lock:
            if method not in self._identities:
                self._identities[method] = self._publish_identity(method)
            return self._identities[method]

    def _publish_identity(self, method: str) -> OAuthClient | str:
        publisher = self.publisher
        if publisher is None or publisher.identity is None:
            return (
                "the host's documents are published elsewhere (--client-metadata-url without the publisher), so a "
                f"second client identity listing only {method} cannot be published under that origin (supply with "
                "--publisher-certfile and --publisher-keyfile)"
            )
        identity = publisher.identity
        callback_id = f"{method.replace('_', '-')}-{new_callback_id()}"
        client_id = identity.callback_document_url(callback_id)
        document = {
            **identity.client_document(callback_id),
            "token_endpoint_auth_methods_supported": [method],
            "token_endpoint_auth_method": method,
        }
        if method == "none":
            for name in ("jwks_uri", "token_endpoint_auth_signing_alg"):
                document.pop(name)
        path = urlsplit(client_id).path
        publisher.override(path, 200, document)
        probe = OAuthClient(
            "cimd", client_id, method, (identity.callback_redirect_uri(callback_id),), identity=identity
        )
        try:
            control = self.attempt(client=probe, exchange=False)
        except BaseException:
            publisher.drop_override(path)
            raise
        if control.accepted is not None and control.accepted.code:
            return probe
        publisher.drop_override(path)
        return (
            f"the authorization server refused a CIMD client listing only {method}, published at {client_id}: "
            f"{control.problem}"
        )

    def relinker(self, account: int, attempt: FlowAttempt) -> Callable[[], FlowAttempt]:
        """Link ``account`` again with the scopes of ``attempt`` (the renewal of a token that cannot be refreshed)."""
        return lambda: self.attempt(account=account, scopes=attempt.request.scope)

    # -- classification ------------------------------------------------------------------------------------

    @staticmethod
    def _failed(attempt: FlowAttempt, rule: str, problem: str) -> FlowAttempt:
        attempt.rule, attempt.problem = rule, problem
        return attempt

    def _client_rule(self, attempt: FlowAttempt, why: str) -> str | None:
        """When a CIMD client is refused before any login: never fetched → AUTH-CIMD-01; fetched and refused
        although it asks for private_key_jwt → AUTH-CIMD-02 (the suite's CIMD-01 check separates the two)."""
        client = attempt.client
        if client.kind != "cimd" or "invalid_client" not in why or self.publisher is None:
            return None
        if not self.publisher.fetched(client.client_id):  # ever: the AS may serve a cached document
            return "AUTH-CIMD-01"
        return "AUTH-CIMD-02" if client.auth_method == "private_key_jwt" else "AUTH-CIMD-01"


def first_attempt(linker: Linker) -> FlowAttempt | NeedsUnmet:
    """The first authorization of test account 1 with the default scopes, or the configuration gap that stopped it
    (a login the test account cannot pass), each with the flow's exchanges: AUTH-FLOW-01 shows them either way."""
    start = _context.mark()
    try:
        attempt = linker.attempt(account=1)
    except NeedsUnmet as exc:
        exc.exchanges = _context.since(start)
        return exc
    attempt.exchanges = _context.since(start)
    return attempt


def fresh_access_token(http: HostHTTP, settings: Settings) -> str:
    """An access token of test account 1 for the configured tool server, obtained outside a run (``conformance
    replay``) the way a run's first link obtains one: discovery, the host's client (CIMD through the publisher when
    one is configured, DCR, or the predefined client), the login. Raises ``NeedsUnmet`` for what the configuration
    lacks and ``Blocked`` for the rule the target broke on the way; the redactor learns every secret of it."""
    import contextlib

    from conformance.host.oauth import ClientRegistry

    target = settings.target("tool_server")
    if target is None:
        needs("the tool server's URL", "--target-url")
    prm = host_discovery(http, target.base_url)
    meta = first_as_metadata(http, prm)
    with contextlib.ExitStack() as cleanup:
        publisher = None
        if settings.get("publisher_certfile") and settings.get("publisher_keyfile"):
            publisher = cleanup.enter_context(Publisher.from_settings(settings, http.redactor))
        identity = host_identity_for(publisher, settings, lambda: meta)
        host = make_host_client(http, settings, target, prm, meta, identity, ClientRegistry())
        return Linker(http, settings, host, publisher).link(account=1).access_token


__all__ = [
    "AccountKey",
    "FlowAttempt",
    "HostClient",
    "LinkedAccount",
    "Linker",
    "ObtainedResponse",
    "challenge_probe",
    "first_as_metadata",
    "first_attempt",
    "fresh_access_token",
    "host_discovery",
    "host_identity_for",
    "host_refusal",
    "make_host_client",
    "register_connection_client",
    "registration_need",
]
