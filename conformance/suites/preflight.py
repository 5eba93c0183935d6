"""Preflight: what every selected suite needs, checked in seconds before the first check (``--preflight``) or alone
(``conformance doctor``), one line per finding.

Per target of a selected suite:

- tool server: it answers an MCP initialize; its protected-resource metadata is found and parses; the authorization
  server it names serves metadata; the test account's credential variables (named by the login steps) are set;
- a target with an API key (platform, compression): the key is set; on the cheap request its row of
  ``conformance/core/targets.py`` names (``probe``: ``GET /v1/campaigns?limit=1``; ``POST /shrink`` with no image,
  which a sandbox refuses with 400) the service answers, neither rejecting the key (401/403) nor throttled or
  failing (429, 5xx);
- CIMD: when the host will identify itself by a client metadata document and the harness publishes it (a publisher
  certificate is configured), the publisher serves a probe document and an authorization request names it as the
  client: the authorization server must fetch it (else it cannot reach the publisher, and every CIMD link fails).

- login: when the authorization request can name a client without registering one (the CIMD probe's, or a
  predefined ``client_id``) and the login is not manual, the login steps run once against the authorization server's
  sign-in page with the test account: a page that refuses it is one line ("the test account could not log in").
  No code is redeemed; a DCR-only host is not probed (that would register a client).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from conformance.core._exceptions import ConfigError, InvalidResponse, TargetError
from conformance.core.targets import SUITE_TARGET, TARGETS, TargetKind

PROBE_WAIT_S = 3.0
TIMEOUTS = {"connect_timeout": 3.0, "read_timeout": 5.0, "total_timeout": 8.0}  # seconds, not minutes


@dataclass(frozen=True)
class Finding:
    target: str
    ok: bool
    message: str

    def line(self) -> str:
        return f"{'ok     ' if self.ok else 'PROBLEM'} {self.target}: {self.message}"


def _targets_in_play(settings: Any) -> dict[str, Any]:
    wanted = {SUITE_TARGET[s] for s in settings.selected_suites}
    return {name: t for name, t in settings.targets().items() if name in wanted}


def _tool_server(http: Any, settings: Any, url: str) -> list[Finding]:
    from conformance.host import mcp_era
    from conformance.host.asmeta import discover_as_metadata
    from conformance.host.discovery import discover_prm, unauthenticated_probe

    name = "tool_server"
    before = mcp_era.known(http, url)
    opening = "initialize" if before is not None and not before.modern else mcp_era.DISCOVER
    try:
        probe = unauthenticated_probe(http, url)
    except TargetError as exc:
        return [Finding(name, False, f"unreachable: {exc}")]
    era = mcp_era.known(http, url)
    found = [Finding(name, True, f"reachable ({opening} without a token → {probe.status_code})")]
    if era is not None:
        found.append(Finding(name, True, f"{era.describe()} (--mcp-era {mcp_era.choice_of(http)})"))
    try:
        prm = discover_prm(http, url)
        servers = prm.document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise InvalidResponse(f"protected resource metadata at {prm.url} lists no authorization_servers")
        found.append(Finding(name, True, f"protected resource metadata at {prm.url} ({prm.via})"))
        metadata = discover_as_metadata(http, servers[0])
        found.append(Finding(name, True, f"authorization server metadata at {metadata.url}"))
        found += _cimd_probe(http, settings, metadata)
    except InvalidResponse as exc:
        found.append(Finding(name, False, f"discovery: {exc.message}"))
    except TargetError as exc:
        found.append(Finding(name, False, f"discovery: {exc}"))
    if settings.get("login_driver", "form") != "manual":
        from conformance.host.login import LoginSteps

        try:
            path = settings.get("login_steps")
            steps = LoginSteps.load(path) if path else LoginSteps.default()
            steps.credentials()
            found.append(Finding(name, True, f"test account set ({steps.user_env}, {steps.password_env})"))
        except ConfigError as exc:
            found.append(Finding(name, False, f"{exc} (the login steps name it; --login-driver manual needs none)"))
    return found


def _cimd_probe(http: Any, settings: Any, metadata: Any) -> list[Finding]:
    """Can the authorization server fetch the host's documents? Serve a probe and watch for the fetch."""
    import secrets

    from conformance.host.publisher import Publisher

    mode = settings.get("client_registration", "auto")
    if not (mode == "cimd" or (mode == "auto" and not settings.get("client_id") and metadata.cimd_supported)):
        # DCR or a predefined client: nothing is fetched from the host; a predefined client can still log in.
        endpoint = metadata.document.get("authorization_endpoint")
        if settings.get("client_id") and mode in ("auto", "predefined") and isinstance(endpoint, str) and endpoint:
            from conformance.suites._linking import DEFAULT_REDIRECT_BASE, PREDEFINED_CALLBACK_ID

            base = (settings.get("redirect_base") or DEFAULT_REDIRECT_BASE).rstrip("/")
            redirect = f"{base}/{PREDEFINED_CALLBACK_ID}"
            return _login_probe(http, settings, endpoint, str(settings.get("client_id")), redirect)
        return []
    certfile, keyfile = settings.get("publisher_certfile"), settings.get("publisher_keyfile")
    endpoint = metadata.document.get("authorization_endpoint")
    if not certfile or not keyfile:
        if settings.get("client_metadata_url"):
            return []  # documents hosted elsewhere (conformance cimd export): no fetch the harness can watch
        return [
            Finding(
                "tool_server",
                False,
                "the host identifies itself by CIMD but has no publisher: --publisher-certfile and "
                "--publisher-keyfile (or --client-metadata-url with `conformance cimd export`)",
            )
        ]
    if not isinstance(endpoint, str) or not endpoint:
        return [Finding("tool_server", False, "authorization server metadata has no authorization_endpoint")]
    publisher = Publisher.from_settings(settings, http.redactor, record_evidence=False)
    with publisher:
        identity = publisher.identity
        assert identity is not None
        client_id = identity.stable_document_url
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": identity.redirect_uri(),
            "state": secrets.token_urlsafe(12),
            "code_challenge": secrets.token_urlsafe(32),
            "code_challenge_method": "S256",
        }
        try:
            http.get(endpoint, params=params, metadata_driven=True)
        except TargetError as exc:
            return [Finding("tool_server", False, f"CIMD probe: the authorization request failed: {exc}")]
        deadline = time.monotonic() + PROBE_WAIT_S  # an authorization server may fetch after it answered
        while not publisher.fetched(client_id) and time.monotonic() < deadline:
            time.sleep(0.1)
        if publisher.fetched(client_id):
            found = [Finding("tool_server", True, f"the authorization server fetched the probe document {client_id}")]
            return found + _login_probe(http, settings, endpoint, client_id, identity.redirect_uri())
    return [
        Finding(
            "tool_server",
            False,
            f"CIMD probe: the authorization server never fetched {client_id} (an authorization request named it): "
            "can it reach the publisher? (--client-metadata-url, --publisher-host/--publisher-port)",
        )
    ]


def _login_probe(http: Any, settings: Any, endpoint: str, client_id: str, redirect_uri: str) -> list[Finding]:
    """Run the login steps once from an authorization request for ``client_id``, as a run's first link would. Only a
    sign-in page that stays (the account refused, or steps that do not fit it) is a problem: an authorization
    server that refuses the request itself is the full run's verdict, not configuration."""
    import secrets

    from conformance.host.login import LoginSteps, MissingCredentials, make_driver
    from conformance.host.oauth import new_pkce
    from conformance.suites._linking import ACCOUNT_OPTIONS

    if settings.get("login_driver", "form") == "manual":
        return []
    user_option, password_option = ACCOUNT_OPTIONS[1]
    user, password = settings.get(user_option), settings.get(password_option)
    path = settings.get("login_steps")
    try:
        steps = LoginSteps.load(path) if path else LoginSteps.default()
        credentials = None
        if user and password:
            from conformance.host.login import Credentials

            credentials = Credentials(str(user), str(password))
            http.redactor.add_secret(credentials.password)  # before any request: never in a line, whatever happens
            http.redactor.add_secret(credentials.user)
        driver = make_driver(
            settings.get("login_driver", "form"),
            http=http,
            steps=steps,
            credentials=credentials,
            timeout_s=TIMEOUTS["total_timeout"] * 4,
        )
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": secrets.token_urlsafe(12),
            "code_challenge": new_pkce().challenge,
            "code_challenge_method": "S256",
            "resource": str(settings.get("target_url") or ""),
        }
        result = driver.login(_with_query(endpoint, params), redirect_uri, state=params["state"])
    except MissingCredentials:
        return []  # the credential check says which variable is missing, once
    except ConfigError as exc:
        return [Finding("tool_server", False, f"login probe: {exc}")]
    except TargetError as exc:
        return [Finding("tool_server", False, f"login probe: the sign-in did not complete: {exc}")]
    if result.config_problem:
        return [Finding("tool_server", False, f"the test account could not log in: {result.config_problem}")]
    if result.callback_url is not None:
        return [Finding("tool_server", True, "the test account logged in (the flow reached the redirect URI)")]
    signed_in = {s.name for s in steps.steps if "{password}" in s.fill.values()} & set(result.steps)
    if signed_in:
        return [Finding("tool_server", True, f"the test account got past the sign-in page (then: {result.stopped})")]
    # No sign-in page was reached (the authorization server refused the request first): the full run judges that.
    return [Finding("tool_server", True, f"login not checked: {result.stopped}")]


def _with_query(url: str, params: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return url + ("&" if "?" in url else "?") + urlencode(params)


def _keyed(http: Any, target: Any, kind: TargetKind, prefix: str = "CONFORMANCE_") -> list[Finding]:
    name = target.name
    if not target.api_key:
        return [Finding(name, False, f"no API key: set {prefix}{str(kind.api_key_setting).upper()}")]
    method, path = str(kind.probe).split(" ", 1)
    try:
        body = None if method in ("GET", "HEAD") else b""
        response = http.request(method, target.url(path), content=body, headers=target.auth)
    except TargetError as exc:
        return [Finding(name, False, f"unreachable: {exc}")]
    status = response.status_code
    if status in (401, 403):
        return [Finding(name, False, f"API key rejected: {response.request.method} {response.request.url} → {status}")]
    if status == 429 or status >= 500:  # throttled or failing: the key is neither accepted nor rejected yet
        return [
            Finding(
                name,
                False,
                f"answered {status} to {response.request.method} {response.request.url}: "
                "cannot tell whether the API key is accepted",
            )
        ]
    return [Finding(name, True, f"reachable, API key accepted ({response.request.method} → {status})")]


def preflight(settings: Any, http: Any = None) -> list[Finding]:
    """Every finding, problems and passes, per target in play (the client is made with short timeouts, no retries)."""
    from conformance.host.http import HostHTTP

    if settings.fleet:  # each named target on its own, its findings named "name/kind"
        return [
            Finding(f"{name}/{f.target}", f.ok, f.message)
            for name, member in settings.fleet.items()
            for f in preflight(member, http)
        ]
    own = http is None
    if http is None:
        http = HostHTTP.from_settings(settings, retry=None, **TIMEOUTS)
        from conformance.host import mcp_era

        mcp_era.choose_setting(http, settings.get("mcp_era"))
    findings: list[Finding] = []
    try:
        targets = _targets_in_play(settings)
        if not targets:
            flags = ", ".join(kind.flag for kind in TARGETS.values())
            return [Finding("run", False, f"no target set for the selected suites ({flags})")]
        for name, target in targets.items():
            kind = TARGETS[name]
            try:
                if kind.probe is None:
                    findings += _tool_server(http, settings, target.base_url)
                else:
                    findings += _keyed(http, target, kind, settings.env_prefix)
            except Exception as exc:  # a broken target's answer must not crash the preflight
                findings.append(Finding(name, False, f"could not be checked: {type(exc).__name__}: {exc}"))
    finally:
        if own:
            http.close()
    scrub = http.redactor.scrub  # a message may quote a URL or an answer
    return [Finding(f.target, f.ok, scrub(f.message)) for f in findings]


def problem_lines(settings: Any) -> list[str]:
    """The plugin's --preflight: one line per problem (none: the run goes on). The plugin stops the run with them
    as a usage error, before any check, keeping the last reports (nothing was decided)."""
    problems = [f for f in preflight(settings) if not f.ok]
    if not problems:
        return []
    lines = [f"conformance preflight: {finding.line()}" for finding in problems]
    return [*lines, f"conformance preflight: {len(problems)} problem(s), no check was run"]
