"""Token checks at the tool server: AUTH-TOK-01 … 10.

Every probe calls the same tool the same way (a tool declared oauth2 only, read-only when there is one, with
arguments made from its inputSchema), changing only the credentials. The positive control (AUTH-TOK-01) comes
first: when a valid token is refused, every negative check is blocked by it, since a server refusing everything
would pass them all. The token rules judge what they state, the refusal: an HTTP 401, or an ``isError`` result
carrying a ``mcp/www_authenticate`` challenge (the contract's "401 or an error result carrying a challenge"). The
challenge of a 401 is AUTH-PRM-05's business, judged there over every 401 of the run, so that a missing
``resource_metadata`` is reported once, under the rule that states it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from conformance import Blocked, TargetError, early, expect, fail, needs, observe, rule
from conformance.config import Settings, Target
from conformance.core import _budget
from conformance.core._early import asks
from conformance.host import LimitReached, fanout
from conformance.host.asmeta import OIDC_SCOPES
from conformance.host.challenge import Challenge
from conformance.host.fields import json_get
from conformance.host.forge import (
    CLOCK_MARGIN_S,
    ForgeError,
    HarnessIssuer,
    alg_none,
    hmac_with_public_key,
    split_jwt,
    strip_signature,
    tamper_payload,
    tamper_signature,
)
from conformance.host.http import HostHTTP
from conformance.judges.declarations import check_challenge_result
from conformance.suites._cases import Attack, AttackRun, Unreached, attack_table, unreached_text
from conformance.suites._linking import LinkedAccount, Linker
from conformance.suites._tool_access import (
    HARNESS_OPTION,
    CallOutcome,
    Listing,
    auth_tool,
    declared_writing,
    distinct,
    fresh_token,
    is_mixed,
    load_issuer,
    mcp_probe,
    oauth_scopes,
    safe_call,
    unverified_claims,
    vendor_of,
)
from conformance.verdict._verdicts import NeedsUnmet

EXPIRY_MARGIN_S = 2.0  # past exp before the expired real token is sent
UNTRUSTED_ISSUER = "https://untrusted-issuer.conformance.invalid"


ENDPOINT = "the MCP endpoint (tools/list)"


@dataclass
class Probe:
    """What every token probe calls, and how: a tool declared oauth2, or (``tool`` None) the endpoint itself when
    the server protects the whole endpoint (an anonymous session is refused with 401 and no tool says oauth2)."""

    http: HostHTTP
    url: str
    tool: Mapping[str, Any] | None
    resource: str
    scopes: list[str]  # what a token for this tool carries: the granted scopes and the tool's own

    @property
    def name(self) -> str:
        return repr(self.tool.get("name")) if self.tool is not None else ENDPOINT

    def send(self, token: str | None = None, **kwargs: Any) -> CallOutcome | str:
        if self.tool is None:
            try:
                return CallOutcome(mcp_probe(self.http, self.url, "tools/list", {}, token=token, **kwargs))
            except LimitReached:
                raise
            except TargetError as exc:
                return unreached_text(exc)
        return safe_call(self.http, self.url, self.tool, token=token, **kwargs)


def refusal_problem(outcome: CallOutcome | str, what: str) -> str | None:
    """None when ``outcome`` refused the credentials (HTTP 401, or an error result carrying a challenge); else
    what happened instead. A 401's challenge is not judged here (AUTH-PRM-05 judges every 401 of the run)."""
    if isinstance(outcome, Unreached):
        return Unreached(f"{what}: {outcome}")
    if isinstance(outcome, str):
        return f"{what}: the request failed ({outcome})"
    if outcome.status == 401:
        note_challenge(outcome, what)
        return None
    if outcome.auth_error_result:
        observe(f"{what}: refused with an auth error result instead of HTTP 401")
        return None
    verdict = (
        "was accepted"
        if outcome.returned_data
        else "was not refused (neither HTTP 401 nor an error result carrying a challenge)"
    )
    return f"{what} {verdict} ({outcome.describe()})"


def note_challenge(outcome: CallOutcome, what: str) -> None:
    """Report a 401 whose challenge a host could not follow: a note here, the verdict is AUTH-PRM-05's."""
    challenge = outcome.raw.challenge
    if challenge is None:
        observe(f"{what}: HTTP 401 without a parseable Bearer challenge (AUTH-PRM-05 judges it)")
    elif not (challenge.get("resource_metadata") or "").strip():
        observe(f"{what}: HTTP 401 whose Bearer challenge has no resource_metadata (AUTH-PRM-05 judges it)")


def run_attacks(probe: Probe, run: AttackRun, tokens: Mapping[str, str | None], **send: Any) -> None:
    """Send each prepared case of ``run`` (case -> token; None: not preparable, already marked untried) and judge
    each refusal whole; then conclude (fail with every wrong case, its citation included)."""
    prepared = {case: token for case, token in tokens.items() if token is not None}
    for token in prepared.values():
        probe.http.redactor.add_secret(token, crafted=True)

    def attack(case: str) -> str | None:
        return refusal_problem(probe.send(prepared[case], **send), f"{case} on {probe.name}")

    run.each(prepared, attack, limit=probe.http.concurrency)


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@early()
def probe(
    host_http: HostHTTP,
    tool_server_target: Target,
    conformance_settings: Settings,
    listing: Listing,
    linked_account: LinkedAccount,
) -> Probe:
    tool = auth_tool(listing, vendor_of(conformance_settings))
    if tool is None and not listing.authenticated:
        needs(
            "a tool declared with securitySchemes oauth2 only, or an endpoint that refuses anonymous sessions "
            "(nothing to present a token to)"
        )
    if tool is None:
        # The whole endpoint is protected (an anonymous tools/list got 401): the token checks judge the endpoint.
        observe(f"no tool declares oauth2 only; the endpoint refuses anonymous sessions: probing {ENDPOINT}")
    scopes = distinct([*linked_account.scopes, *(oauth_scopes(tool) if tool is not None else [])])
    return Probe(host_http, tool_server_target.base_url, tool, linked_account.resource, scopes)


@pytest.fixture(scope="session")
@early()
def control(probe: Probe, linked_account: LinkedAccount) -> CallOutcome | str:
    """The positive control: the linked account's valid token on the probe tool."""
    return probe.send(fresh_token(linked_account))


@pytest.fixture(scope="session")
@early()
def accepted(control: CallOutcome | str, probe: Probe) -> Probe:
    """The probe, once the control passed; else every negative check is blocked by AUTH-TOK-01."""
    if isinstance(control, str) or control.refused_http or control.auth_error_result:
        why = control if isinstance(control, str) else control.describe()
        raise Blocked("AUTH-TOK-01", f"a valid token on {probe.name} was not accepted: {why}")
    return probe


@pytest.fixture(scope="session")
@early()
def harness_issuer(conformance_settings: Settings, host_http: HostHTTP, accepted: Probe) -> HarnessIssuer | None:
    """The test issuer the target trusts, proven by a valid harness-issued token; None when not configured."""
    issuer = load_issuer(conformance_settings, host_http)
    if issuer is None:
        return None
    control = accepted.send(issuer.valid(accepted.resource, accepted.scopes))
    if isinstance(control, str) or control.refused_http or control.auth_error_result:
        why = control if isinstance(control, str) else control.describe()
        needs(
            f"harness-issued tokens trusted by the target (a valid test-issuer token was refused: {why})",
            HARNESS_OPTION,
        )
    return issuer


@pytest.fixture(scope="session")
@asks("harness_issuer")
def harness_issuer_or_none(request: pytest.FixtureRequest) -> HarnessIssuer | None:
    """The trusted test issuer when configured and trusted; None otherwise (cases needing it are not tried)."""
    try:
        issuer: HarnessIssuer | None = request.getfixturevalue("harness_issuer")
    except NeedsUnmet:
        return None
    return issuer


def require_issuer(issuer: HarnessIssuer | None, what: str) -> HarnessIssuer:
    if issuer is None:
        needs(f"harness-issued tokens ({what})", HARNESS_OPTION)
    return issuer


# -- checks --------------------------------------------------------------------------------------------------


@rule("AUTH-TOK-01")
def test_valid_token_is_accepted(control: CallOutcome | str, probe: Probe) -> None:
    name = probe.name
    if isinstance(control, str):
        fail(f"calling {name} with a valid token failed: {control}")
    if control.refused_http or control.auth_error_result:
        fail(f"a valid access token from the flow was refused on {name}: {control.describe()}")
    if control.is_error_result:
        observe(f"{name} ran but returned an error result (not an auth error)")
    observe(f"accepted on {name}: {control.describe()}")


RFC6750_HEADER = "RFC 6750 §2.1"
TOK02 = attack_table(
    "AUTH-TOK-02",
    Attack("no Authorization header", "RFC 6750 §3.1; contract A Auth 2", named=True),
    Attack("an empty Authorization header", RFC6750_HEADER, named=True),
    Attack("'Bearer' without a token", RFC6750_HEADER, named=True),
    Attack("a lower-case 'bearer' without a token", "RFC 6750 §2.1; RFC 9110 §11.1 (case-insensitive scheme)"),
    Attack("a Basic header", "RFC 6750 §2.1 (the Bearer scheme); contract A Auth 2", named=True),
    Attack("a token without a scheme", RFC6750_HEADER, named=True),
    Attack("the real token under another scheme (Token)", RFC6750_HEADER),
    Attack("'Bearer' with a value outside the b64token syntax", "RFC 6750 §2.1 (b64token)"),
    Attack("'Bearer' with two tokens", "RFC 6750 §2.1; §3.1 invalid_request"),
    Attack("'Bearer' with a JWT-shaped value of garbage", "RFC 6750 §3.1 invalid_token; RFC 7519 §7.2"),
)


@rule("AUTH-TOK-02")
def test_missing_or_malformed_authorization(accepted: Probe, linked_account: LinkedAccount) -> None:
    token = fresh_token(linked_account)
    cases: dict[str, dict[str, str] | None] = {
        "no Authorization header": None,
        "an empty Authorization header": {"Authorization": ""},
        "'Bearer' without a token": {"Authorization": "Bearer"},
        "a lower-case 'bearer' without a token": {"Authorization": "bearer"},
        "a Basic header": {"Authorization": "Basic Y29uZm9ybWFuY2U6cHJvYmU="},
        "a token without a scheme": {"Authorization": "conformance-token"},
        "the real token under another scheme (Token)": {"Authorization": f"Token {token}"},
        "'Bearer' with a value outside the b64token syntax": {"Authorization": "Bearer {conformance}<probe>"},
        "'Bearer' with two tokens": {"Authorization": "Bearer conformance-one conformance-two"},
        "'Bearer' with a JWT-shaped value of garbage": {"Authorization": "Bearer eyJhbGciOi.eyJzdWIi.c2ln"},
    }
    run = AttackRun.of("AUTH-TOK-02")

    def attack(what: str) -> str | None:
        outcome = accepted.send(None, headers=cases[what])
        if isinstance(outcome, Unreached):
            return outcome  # a transport failure: the case was not tried
        if isinstance(outcome, str):
            return f"{what}: the request failed ({outcome})"
        if outcome.status == 401:
            note_challenge(outcome, what)
        elif outcome.is_error_result:
            if not outcome.challenges:
                observe(f"{what}: an error result without a challenge (AUTH-CHAL-01 judges its shape)")
        else:
            return f"{what} on {accepted.name}: {outcome.describe()}, no auth error"
        return None

    run.each(cases, attack, limit=accepted.http.concurrency)
    run.conclude()


TOK03 = attack_table(
    "AUTH-TOK-03",
    Attack("a token with a tampered payload (sub)", "RFC 7515 §5.2; contract A Auth 2", named=True),
    Attack("a token with a tampered payload (scope widened)", "RFC 7515 §5.2; RFC 8725 §3.10"),
    Attack("a token with a tampered payload (exp extended)", "RFC 7515 §5.2; RFC 7519 §4.1.4"),
    Attack("a token with a flipped signature byte", "RFC 7515 §5.2; contract A Auth 2", named=True),
    Attack("a token with its signature stripped", "RFC 8725 §2.1, §3.1"),
    Attack("a token with a truncated signature", "RFC 7515 §5.2; RFC 8725 §3.1"),
    Attack("an opaque token with one character changed", "RFC 6750 §3.1 invalid_token"),
    Attack("an opaque token truncated", "RFC 6750 §3.1 invalid_token"),
    Attack("an opaque token with a character appended", "RFC 6750 §3.1 invalid_token"),
)
OPAQUE_CASES = (
    "an opaque token with one character changed",
    "an opaque token truncated",
    "an opaque token with a character appended",
)


@rule("AUTH-TOK-03")
def test_tampered_token_is_refused(accepted: Probe, linked_account: LinkedAccount) -> None:
    token = fresh_token(linked_account)
    run = AttackRun.of("AUTH-TOK-03")
    tokens: dict[str, str | None] = {}
    try:
        _, claims, _ = split_jwt(token)
        head, payload, signature = token.split(".")
        exp = claims.get("exp")
        tokens = {
            "a token with a tampered payload (sub)": tamper_payload(token),
            "a token with a tampered payload (scope widened)": tamper_payload(
                token, {"scope": " ".join([*str(claims.get("scope", "")).split(), "conformance.admin"])}
            ),
            "a token with a tampered payload (exp extended)": tamper_payload(
                token, {"exp": (exp if isinstance(exp, int | float) else int(time.time())) + 86400}
            ),
            "a token with a flipped signature byte": tamper_signature(token),
            "a token with its signature stripped": strip_signature(token),
            "a token with a truncated signature": f"{head}.{payload}.{signature[: len(signature) // 2]}",
        }
        for case in OPAQUE_CASES:
            run.inapplicable(case, "the token is a JWT: its payload and signature were tampered with instead")
    except ForgeError:
        middle = len(token) // 2
        observe("the access token is opaque: changed, truncated and extended instead of payload/signature tampering")
        tokens = {
            OPAQUE_CASES[0]: token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :],
            OPAQUE_CASES[1]: token[:-4],
            OPAQUE_CASES[2]: token + "A",
        }
        for attack in run.table:
            if attack.case not in OPAQUE_CASES:
                run.inapplicable(attack.case, "the token is opaque (not a JWT)")
    run_attacks(accepted, run, tokens)
    run.conclude()


TOK04 = attack_table(
    "AUTH-TOK-04",
    Attack("the real claims signed by an unknown key", "RFC 8725 §3.1; contract A Auth 2", named=True),
    Attack("a token from an issuer the server does not trust", "RFC 8725 §3.8; contract A Auth 2", named=True),
    Attack("the real claims unsigned (alg: none)", "RFC 8725 §2.1, §3.1; contract A Auth 2", named=True),
    Attack("the real claims unsigned (alg: None)", "RFC 8725 §2.1, §3.1; RFC 7515 §4.1.1 (case-sensitive)"),
    Attack("the real claims unsigned (alg: NONE)", "RFC 8725 §2.1, §3.1; RFC 7515 §4.1.1 (case-sensitive)"),
    Attack("the real claims unsigned (alg: nOnE)", "RFC 8725 §2.1, §3.1; RFC 7515 §4.1.1 (case-sensitive)"),
    Attack("alg: none keeping the real signature", "RFC 8725 §2.1"),
    Attack("HS256 signed with the issuer's public key as the secret", "RFC 8725 §2.1, §3.1, §3.2"),
    Attack("the real claims signed by an unknown key under the real kid", "RFC 8725 §3.10; RFC 7515 §4.1.4"),
    Attack("the real claims signed by an unknown key under an unknown kid", "RFC 8725 §3.10; RFC 7515 §4.1.4"),
    Attack("an attacker key embedded in the jwk header", "RFC 8725 §3.10; RFC 7515 §4.1.3"),
    Attack("an attacker JWKS named by the jku header", "RFC 8725 §3.10; RFC 7515 §4.1.2"),
    Attack("an attacker certificate URL in the x5u header", "RFC 8725 §3.10; RFC 7515 §4.1.5"),
)


@rule("AUTH-TOK-04")
def test_untrusted_key_and_alg_none_are_refused(
    accepted: Probe, linked_account: LinkedAccount, linker: Linker, harness_issuer_or_none: HarnessIssuer | None
) -> None:
    token = fresh_token(linked_account)
    foreign = HarnessIssuer(issuer=UNTRUSTED_ISSUER, redactor=accepted.http.redactor)
    run = AttackRun.of("AUTH-TOK-04")
    try:
        header, claims, _ = split_jwt(token)
        real: str | None = token
    except ForgeError:
        observe("the access token is opaque: forged tokens carry claims made by the harness")
        header, real = {}, None
        claims = foreign.claims(audience=accepted.resource, scopes=accepted.scopes, iss=linker.host.as_metadata.issuer)
    attacker_jwks = f"{UNTRUSTED_ISSUER}/jwks.json"
    tokens: dict[str, str | None] = {
        "the real claims signed by an unknown key": foreign.sign(claims),
        "a token from an issuer the server does not trust": foreign.valid(accepted.resource, accepted.scopes),
        "the real claims unsigned (alg: none)": alg_none(claims),
        "the real claims unsigned (alg: None)": alg_none(claims, "None"),
        "the real claims unsigned (alg: NONE)": alg_none(claims, "NONE"),
        "the real claims unsigned (alg: nOnE)": alg_none(claims, "nOnE"),
        "the real claims signed by an unknown key under an unknown kid": foreign.sign(
            claims, headers={"kid": "conformance-unknown-kid"}
        ),
        "an attacker key embedded in the jwk header": foreign.sign(claims, headers={"jwk": foreign.public_jwk()}),
        "an attacker JWKS named by the jku header": foreign.sign(claims, headers={"jku": attacker_jwks}),
        "an attacker certificate URL in the x5u header": foreign.sign(
            claims, headers={"x5u": f"{UNTRUSTED_ISSUER}/cert.pem"}
        ),
    }
    if real is not None:
        tokens["alg: none keeping the real signature"] = alg_none(real, keep_signature=True)
    else:
        run.not_tried("alg: none keeping the real signature", "the access token is opaque (no signature)")
    if header.get("kid"):
        tokens["the real claims signed by an unknown key under the real kid"] = foreign.sign(
            claims, headers={"kid": header["kid"]}
        )
    else:
        run.not_tried("the real claims signed by an unknown key under the real kid", "the access token has no kid")
    if harness_issuer_or_none is not None:
        # The trusted test issuer's public key is public: HMAC'd with it, a confused verifier accepts the token.
        issued = harness_issuer_or_none.claims(audience=accepted.resource, scopes=accepted.scopes)
        tokens["HS256 signed with the issuer's public key as the secret"] = hmac_with_public_key(
            issued, harness_issuer_or_none.key.public_key(), {"kid": harness_issuer_or_none.kid}
        )
    else:
        run.not_tried("HS256 signed with the issuer's public key as the secret", f"needs {HARNESS_OPTION}")
    run_attacks(accepted, run, tokens)
    run.conclude()


TOK05 = attack_table(
    "AUTH-TOK-05",
    Attack("an expired token", "RFC 7519 §4.1.4; contract A Auth 2", named=True),
    Attack("a token expired beyond a few minutes' leeway (10 min)", "RFC 7519 §4.1.4 (leeway of a few minutes)"),
    Attack("a token without exp", "RFC 9068 §2.2 (exp REQUIRED); RFC 8725 §3.10"),
    Attack("a token whose exp is a string (in the past)", "RFC 7519 §2 NumericDate, §4.1.4"),
    Attack("a token whose exp is null", "RFC 7519 §2 NumericDate, §4.1.4"),
)
EXPIRED_CASE = "an expired token"


@rule("AUTH-TOK-05")
def test_expired_token_is_refused(
    accepted: Probe,
    harness_issuer: HarnessIssuer | None,
    linked_account: LinkedAccount,
    link_account: Callable[..., LinkedAccount],
    conformance_settings: Settings,
) -> None:
    run = AttackRun.of("AUTH-TOK-05")
    if harness_issuer is not None:
        past = int(time.time()) - 2 * CLOCK_MARGIN_S
        past_15m = int(time.time()) - 900
        valid = harness_issuer.claims(audience=accepted.resource, scopes=accepted.scopes)
        without_exp = {k: v for k, v in valid.items() if k != "exp"}
        run_attacks(
            accepted,
            run,
            {
                EXPIRED_CASE: harness_issuer.expired(accepted.resource, accepted.scopes),
                "a token expired beyond a few minutes' leeway (10 min)": harness_issuer.sign(
                    {
                        **valid,
                        "iat": past_15m,
                        "nbf": past_15m,
                        "exp": past_15m + 300,
                    }
                ),
                "a token without exp": harness_issuer.sign(without_exp),
                "a token whose exp is a string (in the past)": harness_issuer.sign({**valid, "exp": str(past)}),
                "a token whose exp is null": harness_issuer.sign({**valid, "exp": None}),
            },
        )
        run.conclude()
        return
    # No test issuer: wait out a real token, when its lifetime is short enough.
    expired, why = wait_out_real_token(linked_account, link_account, conformance_settings)
    if expired is None:
        needs(why, f"--max-expiry-wait or {HARNESS_OPTION}")
    observe(why)
    for attack in run.table[1:]:
        run.not_tried(attack.case, f"needs harness-issued tokens ({HARNESS_OPTION})")
    run_attacks(accepted, run, {EXPIRED_CASE: expired})
    run.conclude()


def wait_out_real_token(
    linked_account: LinkedAccount, link_account: Callable[..., LinkedAccount], settings: Settings
) -> tuple[str | None, str]:
    """(an expired real token, what was done), or (None, why not): a throwaway authorization's token, waited out
    when its lifetime is at most ``--max-expiry-wait``. The shared account is never spent (it renews itself)."""
    limit = float(settings.get("max_expiry_wait", 120.0))
    claims = unverified_claims(linked_account.access_token)
    lifetime = linked_account.token.expires_in
    if isinstance(claims.get("exp"), int | float) and isinstance(claims.get("iat"), int | float):
        lifetime = int(claims["exp"] - claims["iat"])
    if lifetime is None or lifetime > limit:
        shown = lifetime if lifetime is not None else "unknown"
        return None, f"an access-token lifetime ≤ {limit:.0f} s (it is {shown}) or harness-issued tokens"
    throwaway = link_account()
    expired = throwaway.current_token  # the raw token: ``access_token`` would renew it once expired
    exp = unverified_claims(expired).get("exp")
    deadline = float(exp) if isinstance(exp, int | float) else time.time() + lifetime
    _budget.wait(max(0.0, deadline - time.time()) + EXPIRY_MARGIN_S)  # not the target's slowness: not in the budget
    return expired, f"waited out a real token's lifetime ({lifetime} s) on a throwaway authorization"


AUD_AS = "aud: the authorization server's issuer (a token meant for it)"
AUD_OWN_ISSUER = "aud: the token's own issuer (the test issuer)"
AUD_CLIENT = "aud: the host's client_id (an ID token's audience)"
ID_TOKEN = "the linked account's ID token (signed by the trusted issuer)"
TOK06 = attack_table(
    "AUTH-TOK-06",
    Attack("a token for another audience", "RFC 8707 §2; RFC 8725 §3.9; contract A Auth 2, Auth 3", named=True),
    Attack("a real token issued for --alt-resource", "RFC 8707 §2; contract A Auth 3"),
    Attack("a token without aud", "RFC 9068 §2.2 (aud REQUIRED), §4"),
    Attack("aud: an array holding only another resource", "RFC 7519 §4.1.3; RFC 8725 §3.9"),
    Attack("aud: the resource with a trailing slash", "RFC 8707 §2 (absolute URI); RFC 3986 §6.2.1"),
    Attack("aud: the resource's origin only (prefix match)", "RFC 8707 §2; RFC 8725 §3.9"),
    Attack("aud: the resource extended (prefix match)", "RFC 8707 §2; RFC 8725 §3.9"),
    Attack("aud: the resource with its path case changed", "RFC 3986 §6.2.2.1 (paths are case-sensitive)"),
    Attack("aud: an object instead of a string", "RFC 7519 §4.1.3 (StringOrURI)"),
    # Audiences of the parties the server trusts for something else.
    Attack(AUD_AS, "RFC 8725 §3.9 (same issuer, other audience); RFC 8707 §2; contract A Access token checks"),
    Attack(AUD_OWN_ISSUER, "RFC 8725 §3.9; RFC 9068 §4 (aud must name the resource); contract A Access token checks"),
    Attack(AUD_CLIENT, "RFC 8725 §3.9, §3.11 (an ID token's audience is the client); RFC 9068 §4"),
    Attack(ID_TOKEN, "RFC 8725 §3.11; RFC 9068 §4 (ID tokens are not access tokens); contract A Auth 2"),
)


def _case_changed_path(resource: str) -> str:
    scheme, sep, rest = resource.partition("://")
    authority, slash, path = rest.partition("/")
    changed = path.swapcase() if path.lower() != path.upper() else path
    return f"{scheme}{sep}{authority}{slash}{changed}" if changed != path else resource + "/X"


@rule("AUTH-TOK-06")
def test_token_for_another_audience_is_refused(
    accepted: Probe,
    harness_issuer: HarnessIssuer | None,
    linker: Linker,
    linked_account: LinkedAccount,
    conformance_settings: Settings,
) -> None:
    run = AttackRun.of("AUTH-TOK-06")
    tokens: dict[str, str | None] = {}
    resource = accepted.resource
    if linked_account.id_token:
        tokens[ID_TOKEN] = linked_account.id_token
    else:
        run.inapplicable(ID_TOKEN, "the authorization server issued no ID token")
    if harness_issuer is not None:
        valid = harness_issuer.claims(audience=resource, scopes=accepted.scopes)
        origin = "/".join(resource.split("/", 3)[:3])
        as_issuer = linker.host.as_metadata.issuer
        parties: dict[str, str | None] = {
            AUD_AS: as_issuer,
            AUD_OWN_ISSUER: harness_issuer.issuer,
            AUD_CLIENT: linked_account.client.client_id,
        }
        for case, party in parties.items():
            if not party or party == resource:
                run.inapplicable(case, "that party's identifier is the resource itself" if party else "not known")
            else:
                tokens[case] = harness_issuer.sign({**valid, "aud": party})
        auds: dict[str, Any] = {
            "aud: an array holding only another resource": [resource.rstrip("/") + "/other-resource"],
            "aud: the resource with a trailing slash": resource + "/" if not resource.endswith("/") else resource[:-1],
            "aud: the resource's origin only (prefix match)": origin if origin != resource else origin + "/other",
            "aud: the resource extended (prefix match)": resource + "-other",
            "aud: the resource with its path case changed": _case_changed_path(resource),
            "aud: an object instead of a string": {"aud": resource},
        }
        tokens["a token for another audience"] = harness_issuer.wrong_audience(resource, accepted.scopes)
        tokens["a token without aud"] = harness_issuer.sign({k: v for k, v in valid.items() if k != "aud"})
        for case, aud in auds.items():
            tokens[case] = harness_issuer.sign({**valid, "aud": aud})
    else:
        for attack in run.table[1:]:
            if attack.case not in ("a real token issued for --alt-resource", ID_TOKEN):
                run.not_tried(attack.case, f"needs harness-issued tokens ({HARNESS_OPTION})")
    alt_token, why = alt_resource_token(linker, conformance_settings)
    if alt_token is not None:
        tokens["a real token issued for --alt-resource"] = alt_token
    else:
        run.not_tried("a real token issued for --alt-resource", why)
    # The ID token alone does not stand for the rule's named case: its audience is the client, not another resource.
    other_audience = [case for case in tokens if case != ID_TOKEN]
    if not other_audience and conformance_settings.get("alt_resource"):
        # --alt-resource was given and the authorization server refused it: only harness-issued tokens are left.
        needs(f"a token for another audience (--alt-resource was given: {why})", HARNESS_OPTION)
    if not other_audience:
        needs("a token for another audience", f"--alt-resource or {HARNESS_OPTION}")
    if "a token for another audience" not in tokens:
        # The rule names one token for another audience: the real --alt-resource token is that case.
        run.inapplicable("a token for another audience", "the real token for --alt-resource stands for it")
    run_attacks(accepted, run, tokens)
    run.conclude()


def alt_resource_token(linker: Linker, settings: Settings) -> tuple[str | None, str]:
    """(a real token issued for ``--alt-resource``, ""), or (None, why not)."""
    alt = settings.get("alt_resource")
    if not alt:
        return None, "no --alt-resource"
    attempt = linker.attempt(request=linker.request(resource=str(alt)))
    if attempt.ok and attempt.token is not None and attempt.token.access_token:
        return attempt.token.access_token, ""
    return None, f"no token for {alt}: {attempt.problem}"


# Confusion among the parties the server trusts: one trusted issuer's key signing for another trusted issuer.
ANOTHER_ISSUERS_KEY = "the real claims (iss: the authorization server) signed by the test issuer's key"
TOK07 = attack_table(
    "AUTH-TOK-07",
    Attack("a token whose nbf lies in the future", "RFC 7519 §4.1.5; contract A Access token checks", named=True),
    Attack(
        "a token of a trusted key naming another issuer",
        "RFC 8725 §3.8; RFC 9068 §4; contract A Access token checks",
        named=True,
    ),
    Attack("a token whose nbf is a string (in the future)", "RFC 7519 §2 NumericDate, §4.1.5"),
    Attack("a token without iss", "RFC 9068 §2.2 (iss REQUIRED), §4"),
    Attack("iss: the trusted issuer with a trailing slash", "RFC 8414 §3.3; RFC 9207 §2.4 (simple string comparison)"),
    Attack("iss: the trusted issuer in upper case", "RFC 9207 §2.4 (simple string comparison); RFC 8725 §3.8"),
    Attack("iss: an array holding the trusted issuer", "RFC 7519 §4.1.1 (StringOrURI)"),
    Attack("iss: the trusted issuer extended (prefix match)", "RFC 8725 §3.8; RFC 9068 §4"),
    Attack(
        ANOTHER_ISSUERS_KEY,
        "RFC 8725 §3.8 (the issuer's own keys); RFC 9068 §4; RFC 7519 §4.1.1; contract A Access token checks",
    ),
)


@rule("AUTH-TOK-07")
def test_not_yet_valid_and_wrong_issuer_are_refused(
    accepted: Probe, harness_issuer: HarnessIssuer | None, linked_account: LinkedAccount, linker: Linker
) -> None:
    issuer = require_issuer(harness_issuer, "nbf in the future, wrong iss with a trusted key")
    valid = issuer.claims(audience=accepted.resource, scopes=accepted.scopes)
    trusted = issuer.issuer
    slash = trusted + "/" if not trusted.endswith("/") else trusted.rstrip("/")
    irregular: dict[str, Any] = {
        "iss: the trusted issuer with a trailing slash": slash,
        "iss: the trusted issuer in upper case": trusted.upper(),
        "iss: an array holding the trusted issuer": [trusted],
        "iss: the trusted issuer extended (prefix match)": trusted.rstrip("/") + ".attacker.invalid",
    }
    run = AttackRun.of("AUTH-TOK-07")
    tokens: dict[str, str | None] = {
        "a token whose nbf lies in the future": issuer.not_yet_valid(accepted.resource, accepted.scopes),
        "a token of a trusted key naming another issuer": issuer.wrong_issuer(accepted.resource, accepted.scopes),
        "a token whose nbf is a string (in the future)": issuer.sign(
            {**valid, "nbf": str(int(time.time()) + CLOCK_MARGIN_S), "exp": int(time.time()) + 2 * CLOCK_MARGIN_S}
        ),
        "a token without iss": issuer.sign({k: v for k, v in valid.items() if k != "iss"}),
    }
    for case, iss in irregular.items():
        if iss == trusted:
            run.inapplicable(case, "the variant equals the trusted issuer")
            continue
        tokens[case] = issuer.sign({**valid, "iss": iss})
    tokens[ANOTHER_ISSUERS_KEY] = signed_for_the_authorization_server(
        run, issuer, accepted, fresh_token(linked_account), linker.host.as_metadata.issuer
    )
    run_attacks(accepted, run, tokens)
    run.conclude()


def signed_for_the_authorization_server(
    run: AttackRun, issuer: HarnessIssuer, probe: Probe, token: str, as_issuer: str | None
) -> str | None:
    """The linked account's claims (subject, audience, scopes, iss naming the authorization server) signed by the
    test issuer's key, which the target trusts only for the test issuer: a verifier that picks the key from every
    trusted issuer's keys, not from the token's issuer's, accepts it. None (and the case noted) when inapplicable."""
    claims = unverified_claims(token)
    if not claims:
        if not as_issuer:
            run.not_tried(ANOTHER_ISSUERS_KEY, "the access token is opaque and the metadata names no issuer")
            return None
        observe("the access token is opaque: the claims naming the authorization server are the harness's")
        claims = issuer.claims(audience=probe.resource, scopes=probe.scopes, iss=as_issuer)
    elif not claims.get("iss") and as_issuer:
        claims = {**claims, "iss": as_issuer}  # the issuer the metadata names, when the token does not say
    if claims.get("iss") == issuer.issuer:
        run.inapplicable(ANOTHER_ISSUERS_KEY, "the linked account's token is the test issuer's own")
        return None
    return issuer.sign(claims)


def scope_target(listing: Listing, granted: list[str]) -> tuple[Mapping[str, Any], str] | None:
    """(tool, scope): a tool whose securitySchemes name a scope, every declared scope considered (granted to the
    linked account or not). A scope the linked account lacks first (its token is already the probe), then one the
    fewest tools need (the downscoped token stays useful), a destructive tool first, since that is where a missing
    scope check hurts."""
    tools = [t for t in listing.named() if oauth_scopes(t)]
    counts: dict[str, int] = {}
    for tool in tools:
        for scope in set(oauth_scopes(tool)):
            counts[scope] = counts.get(scope, 0) + 1
    options = [(t, s) for t in tools for s in oauth_scopes(t) if s not in OIDC_SCOPES]
    options.sort(
        key=lambda ts: (
            ts[1] in granted,
            counts[ts[1]],
            json_get(ts[0], "annotations", "destructiveHint") is not True,
        )
    )
    return options[0] if options else None


@dataclass
class ScopeProbe:
    """The call AUTH-TOK-08 and AUTH-TOK-10 judge: ``what`` called with a token that lacks ``scope``."""

    what: str
    scope: str
    how: str  # where the token lacking the scope came from
    outcome: CallOutcome | str
    send: Callable[[str], CallOutcome | str]


def token_without(
    scope: str,
    probe: Probe,
    linked_account: LinkedAccount,
    linker: Linker,
    request: pytest.FixtureRequest,
) -> tuple[str, str]:
    """(token, how): an access token that does not carry ``scope``: the linked account's when it was not granted
    it, else the host's token for every other scope (``Linker.shared``), else (the AS granted it anyway) a
    harness-issued one."""
    token = fresh_token(linked_account)
    if scope not in linked_account.scopes and scope not in str(unverified_claims(token).get("scope", "")).split():
        return token, f"the linked account's token (granted {' '.join(linked_account.scopes) or 'no scope'})"
    fewer = [s for s in linker.host.scopes.scopes if s != scope]
    account = linker.shared(scopes=fewer)  # only presented: the host's token for those scopes, when it has one
    token = account.access_token
    if scope not in account.scopes and scope not in str(unverified_claims(token).get("scope", "")).split():
        return token, f"a second link asking for {' '.join(fewer) or 'no scope'}"
    issuer = request.getfixturevalue("harness_issuer_or_none")
    if issuer is None:
        needs(f"a token without {scope} (the authorization server granted it although not requested)", HARNESS_OPTION)
    observe(f"the authorization server granted {scope} anyway: used a harness-issued token without it")
    return issuer.missing_scope(probe.resource, probe.scopes, scope), "a harness-issued token without it"


@pytest.fixture(scope="session")
def scope_probe(
    accepted: Probe,
    listing: Listing,
    linked_account: LinkedAccount,
    linker: Linker,
    request: pytest.FixtureRequest,
) -> ScopeProbe:
    """A tool needing a scope, called with a token lacking it; at an endpoint protected as a whole (no tool names
    scopes), the endpoint with a token lacking a scope its 401 challenge requires."""
    found = scope_target(listing, list(linked_account.scopes))
    if found is None and accepted.tool is not None:
        needs("a tool whose securitySchemes name a scope")
    if found is None:
        challenge = request.getfixturevalue("prm_discovery").challenge
        scopes = str((challenge.get("scope") if challenge else None) or "").split()
        required = [s for s in scopes if s not in OIDC_SCOPES]
        if not required:
            needs(
                "the scopes the endpoint requires: a tool whose securitySchemes name scopes, or a scope= in the "
                "endpoint's 401 challenge"
            )
        scope = required[0]
        token, how = token_without(scope, accepted, linked_account, linker, request)
        what = f"{ENDPOINT} (its challenge requires {scope})"
        return ScopeProbe(what, scope, how, accepted.send(token), accepted.send)
    tool, scope = found
    token, how = token_without(scope, accepted, linked_account, linker, request)

    def send(t: str) -> CallOutcome | str:
        return safe_call(accepted.http, accepted.url, tool, token=t)

    return ScopeProbe(f"{tool['name']!r} (needs {scope})", scope, how, send(token), send)


TOK08 = attack_table(
    "AUTH-TOK-08",
    Attack("a token lacking the tool's scope", "contract A Errors; AUTH-TOK-08", named=True),
    Attack("the scope with a suffix (substring match)", "RFC 6749 §3.3 (space-delimited scope tokens)"),
    Attack("the scope in another case", "RFC 6749 §3.3 (scope tokens are case-sensitive)"),
    Attack("the scope glued to another scope without a space", "RFC 6749 §3.3 (space-delimited scope tokens)"),
)
CHALLENGE_PARAMS = ("resource_metadata", "error", "error_description")


def result_challenges(outcome: CallOutcome) -> list[Challenge]:
    """The Bearer challenges of an error result's ``_meta["mcp/www_authenticate"]`` that parse."""
    return [c for c in check_challenge_result(outcome.result).challenges if c.scheme.lower() == "bearer"]


def scope_refusal(outcome: CallOutcome | str, what: str) -> str | None:
    """None when a token lacking a scope was refused as AUTH-TOK-08 states (HTTP 401; 403 with a Bearer challenge;
    an error result whose challenge has resource_metadata, error and error_description); else what happened. An
    error result without a challenge means the tool ran (and failed on its own): not a scope refusal."""
    if isinstance(outcome, Unreached):
        return Unreached(f"{what}: {outcome}")
    if isinstance(outcome, str):
        return f"{what}: the request failed ({outcome})"
    if outcome.status == 401:
        note_challenge(outcome, what)
        return None
    if outcome.status == 403:
        return None if outcome.raw.challenge is not None else f"{what}: HTTP 403 without a Bearer challenge"
    if outcome.is_error_result and outcome.challenges:
        found = result_challenges(outcome)
        if any(all((c.get(p) or "").strip() for p in CHALLENGE_PARAMS) for c in found):
            return None
        return f"{what}: an error result whose challenge lacks one of {', '.join(CHALLENGE_PARAMS)}"
    return f"{what}: {outcome.describe()}, not refused"


@rule("AUTH-TOK-08")
def test_insufficient_scope(
    accepted: Probe, scope_probe: ScopeProbe, harness_issuer_or_none: HarnessIssuer | None
) -> None:
    probe = scope_probe
    run = nearly_right_scopes(accepted, probe.scope, harness_issuer_or_none, probe.send, probe.what)
    problem = scope_refusal(probe.outcome, f"{probe.what} with {probe.how}, which lacks {probe.scope}")
    run.judged("a token lacking the tool's scope", problem)
    if problem is None and isinstance(probe.outcome, CallOutcome):
        observe(f"{probe.what} with {probe.how}: refused ({probe.outcome.describe()})")
    run.conclude()


def nearly_right_scopes(
    probe: Probe,
    scope: str,
    issuer: HarnessIssuer | None,
    send: Callable[[str], CallOutcome | str],
    name: str,
) -> AttackRun:
    """AUTH-TOK-08's derived cases: harness-issued tokens whose scope claim nearly holds ``scope``, sent with
    ``send``; each must be refused like a token without it. Returns the run (the caller judges the named case)."""
    run = AttackRun.of("AUTH-TOK-08")
    others = [s for s in probe.scopes if s != scope]
    variants = {
        "the scope with a suffix (substring match)": [*others, scope + "x"],
        "the scope in another case": [*others, scope.swapcase()] if scope.lower() != scope.upper() else None,
        "the scope glued to another scope without a space": [*others[:-1], (others[-1] if others else "x") + scope],
    }
    for case, scopes in variants.items():
        if issuer is None or scopes is None:
            run.not_tried(case, f"needs {HARNESS_OPTION}" if issuer is None else "the scope has no letters")
            continue
        run.judged(case, scope_refusal(send(issuer.valid(probe.resource, scopes)), f"{name} with {case}"))
    return run


@rule("AUTH-TOK-10")
def test_insufficient_scope_is_named(scope_probe: ScopeProbe) -> None:
    probe, outcome = scope_probe, scope_probe.outcome
    if isinstance(outcome, str) or scope_refusal(outcome, probe.what) is not None:
        why = outcome if isinstance(outcome, str) else outcome.describe()
        raise Blocked("AUTH-TOK-08", f"{probe.what} with {probe.how} was not refused: {why}")
    if outcome.status in (401, 403):
        where = f"the HTTP {outcome.status} challenge"
        challenges = [outcome.raw.challenge] if outcome.raw.challenge is not None else []
    else:
        where, challenges = "the error result's challenge", result_challenges(outcome)
    errors = [c.get("error") for c in challenges]
    named = [c for c in challenges if c.get("error") == "insufficient_scope"]
    if not named:
        fail(f'{probe.what} with {probe.how}: {where} says error={errors or "nothing"}, not "insufficient_scope"')
    scopes = [(c.get("scope") or "").split() for c in named]
    expect(
        any(probe.scope in s for s in scopes),
        f'{probe.what} with {probe.how}: {where} (insufficient_scope) names scope="{" ".join(scopes[0])}", '
        f"not the needed {probe.scope}",
    )
    observe(f'{probe.what}: {where} says error="insufficient_scope" and names {probe.scope}')


A_AUTH_6 = "contract A Auth 6 (declaring both: anonymous use allowed; the server still verifies every token)"
TOOL07 = attack_table(
    "AUTH-TOOL-07",
    Attack("an anonymous call", "contract A Auth 6 (declaring both means anonymous use is allowed)", named=True),
    Attack("an invalid token (its signature changed)", f"{A_AUTH_6}; A Errors; RFC 7515 §5.2", named=True),
    Attack("an expired token", f"{A_AUTH_6}; A Errors; RFC 7519 §4.1.4", named=True),
    Attack("a token for another audience", f"{A_AUTH_6}; A Errors; RFC 8707 §2", named=True),
)


def invalid_variant(token: str) -> str:
    """The token with its signature changed, or (opaque) one character changed."""
    try:
        return tamper_signature(token)
    except ForgeError:
        middle = len(token) // 2
        return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


@rule("AUTH-TOOL-07")
def test_tool_with_both_schemes(
    host_http: HostHTTP,
    tool_server_target: Target,
    listing: Listing,
    linked_account: LinkedAccount,
    linker: Linker,
    link_account: Callable[..., LinkedAccount],
    conformance_settings: Settings,
    harness_issuer_or_none: HarnessIssuer | None,
) -> None:
    mixed = [t for t in listing.named() if is_mixed(t)]
    if not mixed:
        needs("a tool declaring both noauth and oauth2 in its securitySchemes")
    writing = [str(t["name"]) for t in mixed if declared_writing(t)]
    if writing:
        observe(f"not called: {writing} are declared as writing (a writing tool declaring noauth is AUTH-TOOL-04's)")
    tools = [t for t in mixed if not declared_writing(t)]
    if not tools:
        needs("a tool declaring noauth and oauth2 that is not declared as writing (calling it anonymously writes)")
    url = tool_server_target.base_url
    run = AttackRun.of("AUTH-TOOL-07")
    anonymous: list[str] = []
    for tool in tools:
        name, outcome = tool["name"], safe_call(host_http, url, tool)
        if isinstance(outcome, str):
            anonymous.append(outcome if isinstance(outcome, Unreached) else f"calling {name!r} failed: {outcome}")
        elif outcome.refused_http or outcome.auth_error_result or outcome.result is None:
            anonymous.append(f"{name!r} declares noauth and oauth2 but an anonymous call got {outcome.describe()}")
    unreached = [a for a in anonymous if isinstance(a, Unreached)]
    if unreached and len(unreached) == len(anonymous) == len(tools):
        run.unreached("an anonymous call", "; ".join(unreached))
    else:
        run.tried_case("an anonymous call", "; ".join(a for a in anonymous if a not in unreached) or None)
    token = fresh_token(linked_account)
    issuer = harness_issuer_or_none
    resource = linked_account.resource
    tokens: dict[str, str | None] = {"an invalid token (its signature changed)": invalid_variant(token)}
    scopes = distinct([*linked_account.scopes, *(s for t in tools for s in oauth_scopes(t))])
    if issuer is not None:
        tokens["an expired token"] = issuer.expired(resource, scopes)
        tokens["a token for another audience"] = issuer.wrong_audience(resource, scopes)
    else:
        expired, why = wait_out_real_token(linked_account, link_account, conformance_settings)
        tokens["an expired token"] = expired
        if expired is None:
            run.not_tried("an expired token", f"needs {why} ({HARNESS_OPTION} or --max-expiry-wait)")
        alt, why = alt_resource_token(linker, conformance_settings)
        tokens["a token for another audience"] = alt
        if alt is None:
            run.not_tried("a token for another audience", f"needs --alt-resource or {HARNESS_OPTION} ({why})")
    for case, bad in tokens.items():
        if bad is None:
            continue
        host_http.redactor.add_secret(bad)
        problems = [refusal_problem(safe_call(host_http, url, t, token=bad), f"{case} on {t['name']!r}") for t in tools]
        found = [p for p in problems if p is not None]
        unreached = [p for p in found if isinstance(p, Unreached)]
        if unreached and len(unreached) == len(tools):
            run.unreached(case, "; ".join(unreached))
        else:
            run.tried_case(case, "; ".join(p for p in found if p not in unreached) or None)
    control = safe_call(host_http, url, tools[0], token=fresh_token(linked_account))
    if isinstance(control, CallOutcome):
        observe(f"{tools[0]['name']!r} with the linked account's valid token: {control.describe()}")
    run.conclude()


# Where careless servers look for a bearer token besides the header. RFC 6750 §2 defines the header, a form-encoded
# body and the access_token query parameter (the last two only by agreement, §2.2/§2.3); OAuth 2.1 §5.1.1 and the
# MCP authorization specification (contract A Auth 1) leave the header alone. The other names are those token
# lookups read: express-jwt's documented getToken and many hand-written middlewares read ?token=, Jupyter Server's
# ?token=, API-key style server URLs ?api_key= / ?apiKey=; passport-http-bearer reads the body's access_token
# (a JSON body once a JSON parser runs); cookie-session setups read an access_token or token cookie.
OUTSIDE_HEADER = "RFC 6750 §2 (three methods), §5.3; OAuth 2.1 §5.1.1; contract A Auth 1"
TOK09 = attack_table(
    "AUTH-TOK-09",
    Attack("access_token in the query string (no header)", "RFC 6750 §2.3, §5.3; OAuth 2.1 §5.1", named=True),
    Attack("access_token in the query string with an invalid header", "RFC 6750 §2.3, §3.1 (one method only)"),
    Attack("token in the query string (no header)", f"{OUTSIDE_HEADER}; RFC 6750 §2.3 (only access_token)"),
    Attack("api_key in the query string (no header)", f"{OUTSIDE_HEADER}; RFC 6750 §2.3 (only access_token)"),
    Attack("apiKey in the query string (no header)", f"{OUTSIDE_HEADER}; RFC 6750 §2.3 (only access_token)"),
    Attack(
        "access_token as a member of the JSON request body (no header)",
        f"{OUTSIDE_HEADER}; RFC 6750 §2.2 (a body parameter only in a form-encoded body)",
    ),
    Attack("the token in an access_token cookie (no header)", f"{OUTSIDE_HEADER}; RFC 6750 §5.3 (not in cookies)"),
    Attack("the token in a token cookie (no header)", f"{OUTSIDE_HEADER}; RFC 6750 §5.3 (not in cookies)"),
)


@rule("AUTH-TOK-09")
def test_token_in_query_string_is_not_accepted(accepted: Probe, linked_account: LinkedAccount) -> None:
    token = fresh_token(linked_account)
    # Data for a token outside the header proves it accepted only when an anonymous call gets none.
    anonymous = accepted.send(None)
    open_to_anyone = isinstance(anonymous, CallOutcome) and anonymous.returned_data
    run = AttackRun.of("AUTH-TOK-09")
    sends: dict[str, dict[str, Any]] = {
        "access_token in the query string (no header)": {"query": {"access_token": token}},
        "access_token in the query string with an invalid header": {
            "query": {"access_token": token},
            "headers": {"Authorization": "Bearer conformance-invalid"},
        },
        "token in the query string (no header)": {"query": {"token": token}},
        "api_key in the query string (no header)": {"query": {"api_key": token}},
        "apiKey in the query string (no header)": {"query": {"apiKey": token}},
        "access_token as a member of the JSON request body (no header)": {"body": {"access_token": token}},
        "the token in an access_token cookie (no header)": {"headers": {"Cookie": f"access_token={token}"}},
        "the token in a token cookie (no header)": {"headers": {"Cookie": f"token={token}"}},
    }
    outcomes = fanout.each(
        sends, lambda case: accepted.send(None, **sends[case]), limit=accepted.http.concurrency, case=str
    )
    for case, outcome in zip(sends, outcomes, strict=True):
        if isinstance(outcome, str):
            run.judged(case, outcome if isinstance(outcome, Unreached) else f"{case}: the request failed ({outcome})")
            continue
        if outcome.returned_data and open_to_anyone:
            run.not_tried(case, f"{accepted.name} returns data to an anonymous call too (AUTH-TOOL-03 judges that)")
            continue
        problem = f"{case} was accepted: {outcome.describe()}" if outcome.returned_data else None
        run.tried_case(case, problem)
        observe(f"{case}: {outcome.describe()}")
    run.conclude()
