"""Issuer identification in authorization responses (RFC 9207): AUTH-ISS-01 … 03."""

from __future__ import annotations

from conformance import Blocked, expect, observe, rule
from conformance.host.asmeta import AsMetadata
from conformance.host.oauth import (
    AuthorizationRequest,
    AuthorizationResponseRejected,
    CallbackParams,
    RejectReason,
    new_pkce,
    parse_callback,
    validate_callback,
)
from conformance.judges.auth import response_iss_problems
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import FlowAttempt, Linker
from conformance.suites.auth.client import Declined, require_iss_advertised
from conformance.verdict._verdicts import NeedsUnmet


@rule("AUTH-ISS-01")
def test_success_response_carries_iss(as_metadata: AsMetadata, first_link: FlowAttempt, linker: Linker) -> None:
    """Every successful authorization response of the run, not only the first link's: this check runs after the
    others (suites/_order.py), so every login, client and probe that got a code is judged."""
    require_iss_advertised(as_metadata)
    callback = first_link.callback
    if callback is None or callback.is_error:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    problems = response_iss_problems(callback, first_link.request.issuer, "the first authorization response")
    later = [r for r in linker.responses if r.callback is not callback and r.callback.code and not r.callback.is_error]
    for number, found in enumerate(later, 2):
        what = f"successful authorization response {number} (during {found.during})"
        problems += response_iss_problems(found.callback, found.request.issuer, what)
    expect(not problems, "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""))
    during: dict[str, int] = {}
    for found in later:
        during[found.during] = during.get(found.during, 0) + 1
    observe(
        f"iss judged on {1 + len(later)} successful authorization response(s): the first link"
        + "".join(f"; {n} during {what}" for what, n in during.items())
    )


ERRORS = "RFC 9207 §2 (iss in all authorization responses, including errors); RFC 6749 §4.1.2.1"
ISS02 = attack_table(
    "AUTH-ISS-02",
    Attack("the user declines consent (access_denied)", f"AUTH-ISS-02; {ERRORS}", named=True),
    Attack("an unknown scope (invalid_scope)", f"AUTH-ISS-02; {ERRORS}", named=True),
    Attack("no code_challenge (invalid_request)", f"{ERRORS}; RFC 9700 §2.1.1"),
    Attack("code_challenge_method plain", f"{ERRORS}; RFC 7636 §4.4.1"),
    Attack("an unknown response_type (unsupported_response_type)", ERRORS),
)
UNKNOWN_SCOPE = "conformance-no-such-scope"


def response_problem(case: str, request: AuthorizationRequest, callback: CallbackParams) -> str | None:
    """An authorization response judged whole: ``iss`` equal to the issuer, and the request's ``state`` back."""
    what = f"{case}: the {'error response (' + str(callback.error) + ')' if callback.is_error else 'response'}"
    problems = response_iss_problems(callback, request.issuer, what)
    if request.state and callback.state != request.state:
        problems.append(f"{what} returns state {callback.state!r}, not the request's (RFC 6749 §4.1.2.1)")
    return "; ".join(problems) or None


@rule("AUTH-ISS-02")
def test_error_response_carries_iss(
    as_metadata: AsMetadata, linker: Linker, declined_or_need: Declined | NeedsUnmet
) -> None:
    require_iss_advertised(as_metadata)
    run = AttackRun.of("AUTH-ISS-02")
    declined = "the user declines consent (access_denied)"
    if isinstance(declined_or_need, NeedsUnmet):
        run.not_tried(declined, str(declined_or_need))
    else:
        found = declined_or_need
        run.tried_case(declined, response_problem(declined, found.request, found.callback))
    probes: dict[str, dict[str, str | None]] = {
        "an unknown scope (invalid_scope)": {"scope": UNKNOWN_SCOPE},
        "no code_challenge (invalid_request)": {"code_challenge": None, "code_challenge_method": None},
        "code_challenge_method plain": {"code_challenge": new_pkce().verifier, "code_challenge_method": "plain"},
        "an unknown response_type (unsupported_response_type)": {"response_type": "conformance_unknown"},
    }
    for case, params in probes.items():
        auth_request = linker.request(params=params)
        login, callback = linker.authorize(auth_request)
        if callback is None:
            run.not_tried(case, f"no authorization response reached the redirect URI ({login.stopped})")
            continue
        if not callback.is_error:
            observe(f"{case}: answered with a code, not an error (AUTH-FLOW-04 and the scope rules judge that)")
        run.tried_case(case, response_problem(case, auth_request, callback))
    run.conclude()


def _self_test(request: AuthorizationRequest) -> None:
    """The host's validation must refuse a missing and a foreign iss while advertised, or it proves nothing."""
    base = f"{request.redirect_uri}?code=probe&state={request.state}"
    for query, reason in (
        (base, RejectReason.ISS_MISSING),
        (base + "&iss=https%3A%2F%2Fevil.test", RejectReason.ISS_MISMATCH),
    ):
        try:
            validate_callback(request, parse_callback(query))
        except AuthorizationResponseRejected as exc:
            if exc.reason is reason:
                continue
        raise RuntimeError(f"harness: the host's callback validation did not refuse with {reason}")


@rule("AUTH-ISS-03")
def test_host_refuses_what_rfc_9207_refuses(
    as_metadata: AsMetadata, first_link: FlowAttempt, declined: Declined
) -> None:
    """A rule about the host: it refuses a response whose iss is missing or foreign while advertised. The self-test
    proves the validation in every run; a real response the host refused is the server's defect, reported here and
    judged under AUTH-ISS-01/02 (never this rule's failure: the host did what the rule asks)."""
    if as_metadata.iss_parameter_supported:
        _self_test(first_link.request)
    refused = []
    for what, request, callback in (
        ("authorization response", first_link.request, first_link.callback),
        ("error response", declined.request, declined.callback),
    ):
        if callback is None:
            raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
        try:
            validate_callback(request, callback)
        except AuthorizationResponseRejected as exc:
            if exc.reason in (RejectReason.ISS_MISSING, RejectReason.ISS_MISMATCH, RejectReason.ISS_DUPLICATED):
                refused.append(f"the host refused the {what} ({exc.reason}): {exc.message}")
            else:
                raise Blocked("AUTH-FLOW-01", exc.message) from None
    if as_metadata.iss_parameter_supported:
        observe("the host's validation refuses a missing and a foreign iss while advertised (self-test)")
    if refused:  # the host did what the rule asks; the server's defect is AUTH-ISS-01's or AUTH-ISS-02's
        observe("; ".join(refused) + " (the authorization server's defect is judged under AUTH-ISS-01/02)")
    else:
        observe(
            "iss checked: " + ("advertised and identical" if as_metadata.iss_parameter_supported else "not advertised")
        )
