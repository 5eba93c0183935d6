"""The authorization-code flow with PKCE and resource indicators: AUTH-FLOW-01 … 07.

Negative probes use fresh authorizations (never the session's linked account): replaying a code revokes the
tokens of its first exchange.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from urllib.parse import urlsplit, urlunsplit

import jwt

from conformance import Blocked, expect, fail, observe, rule
from conformance.core import _context
from conformance.core._exceptions import TargetUnreachable
from conformance.host import fanout
from conformance.host.discovery import open_endpoint
from conformance.host.oauth import OAuthClient, TokenEndpoint, TokenResult, new_pkce
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import FlowAttempt, LinkedAccount, Linker
from conformance.verdict._verdicts import NeedsUnmet


@rule("AUTH-FLOW-01")
def test_code_comes_back_with_state(first_link_outcome: FlowAttempt | NeedsUnmet) -> None:
    # The login may have run while another check set the fixture up: its exchanges are this rule's evidence.
    _context.attach(getattr(first_link_outcome, "exchanges", []))
    if isinstance(first_link_outcome, NeedsUnmet):
        raise first_link_outcome  # the configuration stopped the login (skipped, incomplete), not the target
    first_link = first_link_outcome
    callback = first_link.callback
    if callback is None or callback.is_error:
        if first_link.rule in ("AUTH-FLOW-01", None):
            fail(first_link.problem or "no authorization response")
        raise Blocked(first_link.rule, first_link.problem or "")
    request = first_link.request
    expect(bool(callback.code), "the authorization response carries no code")
    if callback.state is None:
        fail("the authorization response lost the state parameter")
    expect(callback.state == request.state, "the authorization response's state differs from the state sent")
    observe(f"requested scopes {request.scope!r} for resource {request.resource!r} with PKCE S256")


@rule("AUTH-FLOW-02")
def test_token_request_returns_bearer(first_link: FlowAttempt) -> None:
    token = first_link.token
    if token is None:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no code to exchange")
    if first_link.rule not in ("AUTH-FLOW-02", None):
        raise Blocked(first_link.rule, first_link.problem or "")
    if first_link.need is not None:
        first_link.require()  # a configuration gap (a predefined client as configured): skipped, incomplete
    expect(token.ok, f"token request ({token.method}): {token.describe()}")
    observe(f"{token.token_type} token, expires_in {token.expires_in}, scope {token.scope!r}")


BOTH_KINDS = "RFC 9700 §2.1.1 (PKCE for public and confidential clients)"
IDENTITIES = {"none": "as a public client (none)", "private_key_jwt": "as a confidential client (private_key_jwt)"}
FLOW03 = attack_table(
    "AUTH-FLOW-03",
    Attack("a wrong code_verifier", "RFC 7636 §4.6; contract A Auth 1; OAuth 2.1", named=True),
    Attack("no code_verifier for a code issued with a challenge", "RFC 9700 §4.8.2 (PKCE downgrade); RFC 7636 §4.6"),
    Attack("an empty code_verifier", "RFC 7636 §4.1 (43 to 128 characters), §4.6"),
    Attack("the code_challenge itself as the verifier", "RFC 7636 §4.6 (S256 is not plain)"),
    *(
        Attack(f"a wrong code_verifier, the client authenticating {how}", f"{BOTH_KINDS}; RFC 7636 §4.6")
        for how in IDENTITIES.values()
    ),
)


@rule("AUTH-FLOW-03")
def test_wrong_verifier_is_refused(linker: Linker, linked_account: LinkedAccount) -> None:
    run = AttackRun.of("AUTH-FLOW-03")

    def attack(case: str) -> str | None:
        request = linker.request()
        accepted = linker.code(request)
        challenge = request.pkce.challenge if request.pkce else ""
        verifier: str | None = {
            "a wrong code_verifier": new_pkce().verifier,
            "no code_verifier for a code issued with a challenge": None,
            "an empty code_verifier": "",
            "the code_challenge itself as the verifier": challenge,
        }[case]
        if verifier:
            linker.http.redactor.add_secret(verifier)
        result = linker.host.tokens.exchange_code(accepted.code or "", verifier, request.redirect_uri, request.resource)
        if result.ok:
            return f"a code was exchanged with {case}"
        if not (result.status == 400 and result.error == "invalid_grant"):
            if case == "a wrong code_verifier":
                return f"{case} was refused with {result.describe()}, not 400 invalid_grant"
            # a missing or malformed verifier may also be invalid_request (RFC 7636 §4.4.1)
            observe(f"{case}: refused with {result.describe()}")
        return None

    # the verifier cases under the host's own client authentication, each an authorization of its own
    run.each([a.case for a in run.table[:4]], attack, limit=linker.concurrency)
    _wrong_verifier_per_identity(linker, run)
    run.conclude()


def _wrong_verifier_per_identity(linker: Linker, run: AttackRun) -> None:
    """The wrong verifier again, under each client authentication the host's client may use (a CIMD client whose
    document lists both): an AS that checks PKCE only for public, or only for confidential, clients fails one."""
    client = linker.host.client
    usable = client.decision.intersection if client.decision is not None else (client.auth_method,)
    cases = {f"a wrong code_verifier, the client authenticating {how}": method for method, how in IDENTITIES.items()}

    def flow(case: str) -> TokenResult:
        request = linker.request()
        accepted = linker.code(request)
        wrong = new_pkce().verifier
        linker.http.redactor.add_secret(wrong)
        return linker.host.tokens.exchange_code(
            accepted.code or "", wrong, request.redirect_uri, request.resource, method=cases[case]
        )

    tried = [case for case, method in cases.items() if method in usable]
    results = dict(zip(tried, fanout.each(tried, flow, limit=linker.concurrency, case=str), strict=True))
    for case, method in cases.items():
        how = case.removeprefix("a wrong code_verifier, the client authenticating ")
        if method not in usable:
            run.inapplicable(case, f"the host's client authenticates only with {list(usable)}")
            continue
        result = results[case]
        if _client_refused(result):
            run.not_tried(case, f"refused for its client authentication ({result.describe()}), not the verifier")
            continue
        run.tried_case(case, f"a code was exchanged with a wrong code_verifier {how}" if result.ok else None)


DOWNGRADES = (
    ("without code_challenge", "OAuth 2.1 §4.1.1, §7.5.1; RFC 9700 §2.1.1; contract AUTH-FLOW-04", True),
    ("an empty code_challenge", "RFC 6749 §3.1 (a parameter without a value is omitted); RFC 7636 §4.2", False),
    ("an unknown code_challenge_method", "RFC 7636 §4.3, §4.4.1", False),
)
# The `plain` method: whether it is accepted is reported, not judged (AUTH-FLOW-04; RFC 7636 §4.2 defines it, and
# neither the contract nor OAuth 2.1 forbids the server to accept it).
PLAIN_PROBES = ("with code_challenge_method plain", "a code_challenge without a method (plain by default)")
# Each downgrade for a public and for a confidential client: an AS may require PKCE of public clients only (it is
# node-oidc-provider's default), which RFC 9700 §2.1.1 and OAuth 2.1 do not allow.
FLOW04 = attack_table(
    "AUTH-FLOW-04",
    *(
        Attack(f"{case}, {how}", f"{source}; {BOTH_KINDS}", named=named)
        for method, how in IDENTITIES.items()
        for case, source, named in DOWNGRADES
    ),
)


@contextmanager
def _client_identities(linker: Linker) -> Iterator[dict[str, OAuthClient | str]]:
    """The client that authorizes each identity's cases, or why there is none. The host's own client stands for
    the kind it is at the authorization endpoint (public when it may use `none`); the other kind is a CIMD document
    listing only that method, published under the host's own origin at a client id of its own (the host's own
    documents, cached by the AS, stay as they are). The AS must accept that client first (a control
    authorization): if it does not, the identity's cases could not be tried, which says nothing of PKCE or
    redirects."""
    client = linker.host.client
    decision = client.decision
    usable = decision.intersection if decision is not None else (client.auth_method,)
    own = "none" if "none" in usable else "private_key_jwt"
    found: dict[str, OAuthClient | str] = {own: client}
    other = "private_key_jwt" if own == "none" else "none"
    if client.kind != "cimd" or decision is None:
        found[other] = f"the host's client is {client.kind} ({list(usable)}): no second client identity to publish"
        yield found
        return
    if other not in decision.as_methods:
        found[other] = f"the authorization server does not support {other} ({list(decision.as_methods)})"
        yield found
        return
    second = linker.other_identity(other)  # one per run: AUTH-FLOW-04 and AUTH-FLOW-07 share it
    found[other] = second if isinstance(second, OAuthClient) else UNTRIED + second
    yield found


UNTRIED = "not tried: "


def _no_identity(run: AttackRun, case: str, why: str) -> None:
    if why.startswith(UNTRIED):
        run.not_tried(case, why.removeprefix(UNTRIED))
    else:
        run.inapplicable(case, why)


@rule("AUTH-FLOW-04")
def test_pkce_is_required(linker: Linker, linked_account: LinkedAccount) -> None:
    plain = new_pkce().verifier
    linker.http.redactor.add_secret(plain)
    s256 = new_pkce().challenge
    probes: dict[str, dict[str, str | None]] = {
        "without code_challenge": {"code_challenge": None, "code_challenge_method": None},
        "an empty code_challenge": {"code_challenge": "", "code_challenge_method": "S256"},
        "an unknown code_challenge_method": {"code_challenge": s256, "code_challenge_method": "S512"},
        "with code_challenge_method plain": {"code_challenge": plain, "code_challenge_method": "plain"},
        "a code_challenge without a method (plain by default)": {
            "code_challenge": plain,
            "code_challenge_method": None,
        },
    }
    # Answered with a code, a derived case fails only when that code is redeemed without a verifier (an AS that
    # reads an unknown method as S256 is safe); a plain probe is reported with how its code could be redeemed.
    redeem_with: dict[str, str | None] = {
        "an empty code_challenge": None,
        "an unknown code_challenge_method": None,
        "with code_challenge_method plain": plain,
        "a code_challenge without a method (plain by default)": plain,
    }
    run = AttackRun.of("AUTH-FLOW-04")
    with _client_identities(linker) as identities:
        for method, how in IDENTITIES.items():
            client = identities[method]
            for what, extra in probes.items():
                case = f"{what}, {how}"
                reported = what in PLAIN_PROBES
                if isinstance(client, str):
                    if not reported:
                        _no_identity(run, case, client)
                    continue
                request = linker.request(client=client, params=extra)
                _, callback = linker.authorize(request)
                problem = None
                if callback is None or not callback.code:
                    if reported:
                        observe(f"{case}: refused (reported, not judged)")
                elif what not in redeem_with:
                    problem = f"an authorization request {what} ({how}) was answered with a code"
                else:
                    verifier = redeem_with[what]
                    tokens = (
                        linker.host.tokens
                        if client is linker.host.client
                        else TokenEndpoint(linker.http, linker.host.as_metadata, client)
                    )
                    result = tokens.exchange_code(callback.code, verifier, request.redirect_uri, request.resource)
                    weak = "the plain verifier" if verifier else "no code_verifier"
                    if reported:
                        outcome = "redeemed" if result.ok else f"not redeemed ({result.describe()})"
                        observe(f"{case}: accepted, its code {outcome} with {weak} (reported, not judged)")
                    elif result.ok:
                        problem = f"an authorization request {what} ({how}) gave a code redeemed with {weak}"
                    else:
                        observe(f"{case}: answered with a code that {weak} cannot redeem ({result.describe()})")
                if not reported:
                    run.tried_case(case, problem)
    run.conclude()


def _audience_ok(token: str, resource: str) -> bool | None:
    """True/False for a JWT (aud or resource claim), None for an opaque token."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    aud = claims.get("aud")
    audiences = aud if isinstance(aud, list) else [aud]
    return resource in audiences or claims.get("resource") == resource


@rule("AUTH-FLOW-05")
def test_resource_reaches_the_token(linked_account: LinkedAccount, linker: Linker) -> None:
    token, resource = linked_account.access_token, linked_account.resource
    verdict = _audience_ok(token, resource)
    if verdict is not None:
        claims = jwt.decode(token, options={"verify_signature": False})
        expect(verdict, f"the JWT access token's aud is {json.dumps(claims.get('aud'))}, not {resource!r}")
        observe(f"the JWT access token's aud {json.dumps(claims.get('aud'))} is the requested resource {resource!r}")
        return
    # Opaque: the tool server must accept it for this resource.
    response = open_endpoint(linker.http, resource, linked_account.auth_header)
    expect(
        response.status_code == 200,
        f"the opaque access token was refused by the resource it was requested for ({response.status_code})",
    )
    observe("opaque access token: accepted by the tool server")


ONCE = "RFC 6749 §4.1.2, §10.5; OAuth 2.1 §4.1.3; RFC 9700 §4.5"
SAME_CASE = "a second exchange with the same code and verifier"
CONCURRENT_CASE = "two concurrent exchanges of one code"
AFTER_REFRESH_CASE = "a second exchange after the first exchange's refresh token was used"
CROSS_AUTH = {  # (first exchange's method, replay's method)
    f"a code redeemed {IDENTITIES['none']}, replayed {IDENTITIES['private_key_jwt']}": ("none", "private_key_jwt"),
    f"a code redeemed {IDENTITIES['private_key_jwt']}, replayed {IDENTITIES['none']}": ("private_key_jwt", "none"),
}
FLOW06 = attack_table(
    "AUTH-FLOW-06",
    Attack(SAME_CASE, f"{ONCE}; contract AUTH-FLOW-06", named=True),
    *(Attack(case, f"{ONCE}: the code is single-use whichever way the client authenticates") for case in CROSS_AUTH),
    Attack(AFTER_REFRESH_CASE, f"{ONCE}; RFC 6749 §6"),
    Attack(CONCURRENT_CASE, f"{ONCE} (a code MUST NOT be used more than once: at most one exchange succeeds)"),
)


def _replay_problem(again: TokenResult, how: str) -> str | None:
    # No access token is what proves the refusal; the wording (RFC 6749 §5.2's 400 invalid_grant) is observed.
    if again.ok or again.access_token:
        return f"{how}: the same authorization code was exchanged twice ({again.describe()})"
    if not (400 <= again.status < 500 and again.error == "invalid_grant"):
        observe(f"{how}: the replayed code was refused with {again.describe()}, not RFC 6749 §5.2's 400 invalid_grant")
    return None


Judgement = Callable[[], None]  # a case's verdict on the attack run, given once its exchanges are done


@rule("AUTH-FLOW-06")
def test_code_works_once(linker: Linker, linked_account: LinkedAccount) -> None:
    run = AttackRun.of("AUTH-FLOW-06")
    client = linker.host.client
    usable = client.decision.intersection if client.decision is not None else (client.auth_method,)
    cases: dict[str, Callable[[], Judgement]] = {SAME_CASE: partial(_same_code_twice, linker, run)}
    for case, (method, replay) in CROSS_AUTH.items():
        if method not in usable or replay not in usable:
            run.inapplicable(case, f"the host's client authenticates only with {list(usable)}")
            continue
        cases[case] = partial(_cross_auth_replay, linker, run, case, method, replay)
    cases[AFTER_REFRESH_CASE] = partial(_replay_after_refresh, linker, run)
    cases[CONCURRENT_CASE] = partial(_concurrent_exchanges, linker, run)
    # Each case is an authorization of its own: they run at once, each one's exchanges filed under it, and are
    # judged in the table's order once all are done.
    for judge in fanout.each(list(cases), lambda case: cases[case](), limit=linker.concurrency, case=str):
        judge()
    run.conclude()


def _same_code_twice(linker: Linker, run: AttackRun) -> Judgement:
    tokens = linker.host.tokens
    attempt = linker.attempt()
    first = attempt.require()
    assert attempt.accepted is not None
    try:
        again: TokenResult | TargetUnreachable = tokens.exchange(attempt.request, attempt.accepted)
    except TargetUnreachable as exc:
        again = exc
    after = None
    if first.refresh_token and not isinstance(again, TargetUnreachable):
        # RFC 6749 §4.1.2: the AS SHOULD revoke what the code granted; observed, not judged
        linker.http.redactor.add_secret(first.refresh_token)
        after = tokens.refresh(first.refresh_token)

    def judge() -> None:
        with run.attempt(SAME_CASE):
            if isinstance(again, TargetUnreachable):
                raise again
            problem = _replay_problem(again, SAME_CASE)
            if problem:
                fail(problem)
        if after is not None:
            observe(
                "after the replay, the first exchange's refresh token "
                + (
                    "still works (RFC 6749 §4.1.2: SHOULD be revoked)"
                    if after.ok
                    else f"is refused ({after.describe()})"
                )
            )

    return judge


def _cross_auth_replay(linker: Linker, run: AttackRun, case: str, method: str, replay: str) -> Judgement:
    request = linker.request()
    accepted = linker.code(request)
    verifier = request.pkce.verifier if request.pkce else None
    # If the AS does not take this client authentication for this client, the replay has nothing to replay.
    exchange = partial(
        linker.host.tokens.exchange_code, accepted.code or "", verifier, request.redirect_uri, request.resource
    )
    refused = f"the first exchange ({method}) was refused: {{}}"
    return _replay(run, case, partial(exchange, method=method), refused, partial(exchange, method=replay))


def _replay_after_refresh(linker: Linker, run: AttackRun) -> Judgement:
    attempt = linker.attempt()
    first = attempt.require()
    assert attempt.accepted is not None
    if not first.refresh_token:
        return partial(run.inapplicable, AFTER_REFRESH_CASE, "the token response carries no refresh token")
    linker.http.redactor.add_secret(first.refresh_token)
    accepted, refresh_token = attempt.accepted, first.refresh_token
    return _replay(
        run,
        AFTER_REFRESH_CASE,
        lambda: linker.host.tokens.refresh(refresh_token),
        "the refresh failed ({})",
        lambda: linker.host.tokens.exchange(attempt.request, accepted),
    )


def _replay(
    run: AttackRun,
    case: str,
    first: Callable[[], TokenResult],
    first_refused: str,
    replay: Callable[[], TokenResult],
) -> Judgement:
    """One replay case: the legitimate ``first`` use must succeed (else the case is not tried, or unreached when the
    AS cannot be reached; ``first_refused`` says why, ``{}`` the refused answer), then ``replay`` of the same code
    must be refused. The exchanges are made now, the verdict is given when the judgement runs."""
    try:
        used = first()
    except TargetUnreachable as exc:
        return partial(run.unreached, case, str(exc))
    if not used.ok:
        return partial(run.not_tried, case, first_refused.format(used.describe()))
    try:
        again = replay()
    except TargetUnreachable as exc:
        return partial(run.unreached, case, str(exc))
    if _client_refused(again):
        # Refused for how the client authenticated, not for the code's reuse: that proves nothing of single use.
        why = f"the replay was refused for its client authentication ({again.describe()}), not the code"
        return partial(run.not_tried, case, why)

    def judge() -> None:
        with run.attempt(case):
            problem = _replay_problem(again, case)
            if problem:
                fail(problem)

    return judge


def _client_refused(result: TokenResult) -> bool:
    """A token request refused because the client's authentication failed (RFC 6749 §5.2 ``invalid_client``)."""
    return not result.ok and not result.access_token and result.error == "invalid_client"


def _concurrent_exchanges(linker: Linker, run: AttackRun) -> Judgement:
    """Both exchanges in flight at once: an AS that marks a code used after a slow write redeems it twice."""
    request = linker.request()
    accepted = linker.code(request)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            # Each exchange in a copy of this thread's context: both record into this case, whatever else runs.
            contexts = [contextvars.copy_context() for _ in range(2)]
            answers = list(pool.map(lambda c: c.run(linker.host.tokens.exchange, request, accepted), contexts))
    except TargetUnreachable as exc:
        return partial(run.unreached, CONCURRENT_CASE, str(exc))

    def judge() -> None:
        with run.attempt(CONCURRENT_CASE):
            granted = [a for a in answers if a.ok or a.access_token]
            observe(f"{CONCURRENT_CASE}: " + ", ".join(a.describe() for a in answers))
            if len(granted) > 1:
                fail(f"{CONCURRENT_CASE}: both exchanges returned an access token")

    return judge


EXACT = "RFC 9700 §2.1, §4.1 (exact string matching); OAuth 2.1"
REDIRECT_CASES = (
    ("the path extended (/elsewhere)", f"{EXACT}; contract AUTH-FLOW-07", True),
    ("the path with a suffix and no separator", f"{EXACT}: prefix matching", False),
    ("the parent path", f"{EXACT}: prefix matching the other way", False),
    ("the path in another case", f"{EXACT}; RFC 3986 §6.2.2.1 (paths are case-sensitive)", False),
    ("a trailing slash added or removed", f"{EXACT}: normalization is not exact matching", False),
    ("a path character percent-encoded", f"{EXACT}: normalization is not exact matching", False),
    ("an added query parameter", f"{EXACT}; RFC 6749 §3.1.2", False),
    ("another host, same path", "RFC 9700 §4.1.1; RFC 6749 §10.6", False),
    ("the registered host as userinfo before another host", "RFC 9700 §4.1; RFC 3986 §3.2.1", False),
    ("another scheme", EXACT, False),
    ("another port", f"{EXACT} (a loopback redirect URI may vary its port: RFC 8252 §7.3)", False),
)
# Every case for a public and for a confidential client (RFC 9700 §4.1 applies to both; RFC 6749 §3.1.2.2 asks
# registration of confidential clients too): an AS may match one kind's redirect URIs more loosely.
FLOW07 = attack_table(
    "AUTH-FLOW-07",
    *(
        Attack(f"{case}, {how}", f"{source}; RFC 6749 §3.1.2", named=named)
        for how in IDENTITIES.values()
        for case, source, named in REDIRECT_CASES
    ),
)
PROBE_PARAM = "conformance_probe"


def _percent_encoded(path: str, index: int) -> str:
    return f"{path[:index]}%{ord(path[index]):02X}{path[index + 1 :]}"


def _redirect_variants(registered: str) -> dict[str, str | None]:
    """The FLOW-07 cases for this registered redirect URI (None: not applicable to it)."""
    parts = urlsplit(registered)
    path = parts.path or "/"
    host = parts.hostname or ""
    loopback = host in ("127.0.0.1", "::1", "localhost")

    def with_(**changes: str) -> str:
        return urlunsplit(parts._replace(**changes))

    parent = path.rstrip("/").rsplit("/", 1)[0] + "/"
    swapped = path.swapcase() if path.lower() != path.upper() else None
    encoded = next((i for i, c in enumerate(path) if c.isalpha()), None)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {
        "the path extended (/elsewhere)": registered.rstrip("/") + "/elsewhere",
        "the path with a suffix and no separator": with_(path=path.rstrip("/") + "x"),
        "the parent path": with_(path=parent) if parent != path else None,
        "the path in another case": with_(path=swapped) if swapped else None,
        "a trailing slash added or removed": with_(path=path[:-1] if path.endswith("/") else path + "/")
        if path != "/"
        else None,
        "a path character percent-encoded": with_(
            path=f"{path[:encoded]}%{ord(path[encoded]):02X}{path[encoded + 1 :]}"
        )
        if encoded is not None
        else None,
        "an added query parameter": with_(query=(parts.query + "&" if parts.query else "") + f"{PROBE_PARAM}=1"),
        "another host, same path": with_(netloc="evil.conformance.invalid"),
        "the registered host as userinfo before another host": with_(netloc=f"{parts.netloc}@evil.conformance.invalid"),
        "another scheme": with_(scheme="http" if parts.scheme == "https" else "https"),
        "another port": None if loopback or not host else with_(netloc=f"{host}:{port + 1}"),
    }


def _redirected(linker: Linker, client: OAuthClient, item: tuple[str, str, str]) -> str | None:
    """One FLOW-07 case: what went wrong when the authorization server redirected to the variant, else None."""
    _, variant, probe = item
    login, callback = linker.authorize(linker.request(client=client, redirect_uri=probe))
    reached = callback is not None
    if reached and variant == "an added query parameter":
        # A redirect to the registered URI without the added parameter is not a redirect to the probe.
        reached = PROBE_PARAM in (urlsplit(login.callback_url or "").query or "")
    return f"the authorization server redirected to {probe}" if reached else None


@rule("AUTH-FLOW-07")
def test_redirect_uri_must_match_exactly(linker: Linker, linked_account: LinkedAccount) -> None:
    run = AttackRun.of("AUTH-FLOW-07")
    with _client_identities(linker) as identities:
        for method, how in IDENTITIES.items():
            client = identities[method]
            if isinstance(client, str):
                for case, _, _ in REDIRECT_CASES:
                    _no_identity(run, f"{case}, {how}", client)
                continue
            registered = (
                client.redirect_uris[0] if client is not linker.host.client else linker.host.redirect.redirect_uri
            )
            variants = _redirect_variants(registered)
            # Each variant an authorization of its own, at once; judged in the table's order.
            probed = [(f"{variant}, {how}", variant, probe) for variant, probe in variants.items() if probe]
            found = fanout.each(
                probed, partial(_redirected, linker, client), limit=linker.concurrency, case=lambda item: item[0]
            )
            problems = {case: problem for (case, _, _), problem in zip(probed, found, strict=True)}
            for variant, probe in variants.items():
                case = f"{variant}, {how}"
                if probe is None:
                    run.inapplicable(case, f"no such variant of {registered} (or a loopback port, RFC 8252 §7.3)")
                    continue
                problem = problems[case]
                run.tried_case(case, f"{case}: {problem} (registered: {registered})" if problem else None)
    run.conclude()
