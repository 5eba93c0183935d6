"""Issuer identification in authorization responses (RFC 9207): AUTH-ISS-01 … 03."""

from __future__ import annotations

from conformance import Blocked, expect, observe, rule
from conformance.host.asmeta import AsMetadata
from conformance.host.oauth import (
    AuthorizationRequest,
    AuthorizationResponseRejected,
    RejectReason,
    parse_callback,
    validate_callback,
)
from conformance.suites._linking import FlowAttempt
from conformance.suites.auth.client import Declined, require_iss_advertised
from conformance.validate.auth import response_iss_problems


@rule("AUTH-ISS-01")
def test_success_response_carries_iss(as_metadata: AsMetadata, first_link: FlowAttempt) -> None:
    require_iss_advertised(as_metadata)
    callback = first_link.callback
    if callback is None or callback.is_error:
        raise Blocked(first_link.rule or "AUTH-FLOW-01", first_link.problem or "no authorization response")
    problems = response_iss_problems(callback, first_link.request.issuer, "the authorization response")
    expect(not problems, "; ".join(problems))


@rule("AUTH-ISS-02")
def test_error_response_carries_iss(as_metadata: AsMetadata, declined: Declined) -> None:
    require_iss_advertised(as_metadata)
    callback = declined.callback
    what = f"the error response ({callback.error}, after the user declined consent)"
    problems = response_iss_problems(callback, declined.request.issuer, what)
    expect(not problems, "; ".join(problems))


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
def test_host_accepts_the_responses(as_metadata: AsMetadata, first_link: FlowAttempt, declined: Declined) -> None:
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
    expect(not refused, "; ".join(refused))
    observe("iss checked: " + ("advertised and identical" if as_metadata.iss_parameter_supported else "not advertised"))
