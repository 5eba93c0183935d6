"""Reauthorization with more scopes, with and without id_token_hint: AUTH-REAUTH-01."""

from __future__ import annotations

from conformance import expect, observe, rule
from conformance.host.asmeta import OIDC_SCOPES
from conformance.suites._linking import LinkedAccount, Linker


@rule("AUTH-REAUTH-01")
def test_reauthorization_with_more_scopes(linker: Linker, linked_account: LinkedAccount) -> None:
    full = linker.host.scopes.scopes
    resource_scopes = [s for s in full if s not in OIDC_SCOPES]
    fewer = tuple(s for s in full if s in OIDC_SCOPES) + tuple(resource_scopes[:1])
    first = linker.link(scopes=fewer)  # Blocked by the flow's rule if the plain flow is broken
    problems = []
    plain = linker.attempt(scopes=full)
    if not plain.ok:
        problems.append(f"requesting {' '.join(full)} without id_token_hint: {plain.problem}")
    if first.id_token:
        hinted = linker.attempt(scopes=full, id_token_hint=first.id_token)
        if not hinted.ok:
            problems.append(f"requesting {' '.join(full)} with the earlier ID token as id_token_hint: {hinted.problem}")
    else:
        observe("no ID token was issued: reauthorization without id_token_hint only")
    expect(not problems, "; ".join(problems))
    observe(f"first {' '.join(fewer)}, then {' '.join(full)}")
