"""Reauthorization with more scopes, with and without id_token_hint: AUTH-REAUTH-01."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conformance import expect, needs, observe, rule
from conformance.host import fanout
from conformance.host.asmeta import OIDC_SCOPES
from conformance.suites._linking import FlowAttempt, LinkedAccount, Linker


def scope_sets(default: Sequence[str], advertised: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(fewer, more): two different scope sets, the second a strict superset, or None when there are none.

    Fewer is the OIDC scopes and the first resource scope of the host's default; when the default has only one
    resource scope, more is the default plus a scope the authorization server advertises beyond it."""
    full = tuple(default)
    resource_scopes = [s for s in full if s not in OIDC_SCOPES]
    fewer = tuple(s for s in full if s in OIDC_SCOPES) + tuple(resource_scopes[:1])
    if set(fewer) != set(full):
        return fewer, full
    extra = [s for s in advertised if s not in full and s not in OIDC_SCOPES and s != "offline_access"]
    return (full, (*full, extra[0])) if extra else None


@rule("AUTH-REAUTH-01")
def test_reauthorization_with_more_scopes(linker: Linker, linked_account: LinkedAccount) -> None:
    sets = scope_sets(linker.host.scopes.scopes, linker.host.as_metadata.scopes_supported or [])
    if sets is None:
        needs(
            f"two different scope sets to request (the host requests {linker.host.scopes.value!r} and the "
            "authorization server advertises no other scope: a reauthorization would ask for nothing more)"
        )
    fewer, full = sets
    # The earlier, narrower grant the host holds (Blocked by the flow's rule if the plain flow is broken); the
    # reauthorizations below are the rule's own flows.
    first = linker.shared(scopes=fewer)
    # Both reauthorizations follow the narrower grant, neither the other: they go at once.
    flows: dict[str, Callable[[], FlowAttempt]] = {
        "without id_token_hint": lambda: linker.upgrade(fewer, full)  # PROF-08 reads the same upgrade
    }
    if first.id_token:
        flows["with id_token_hint"] = lambda: linker.attempt(scopes=full, id_token_hint=first.id_token)
    else:
        observe("no ID token was issued: reauthorization without id_token_hint only (the hint is optional)")
    attempts = fanout.each(list(flows), lambda case: flows[case](), limit=linker.concurrency, case=str)
    shown = {"without id_token_hint": "without id_token_hint", "with id_token_hint": "with the earlier ID token"}
    problems = [
        f"requesting {' '.join(full)} {shown[case]}{' as id_token_hint' * (case != 'without id_token_hint')}: "
        f"{attempt.problem}"
        for case, attempt in zip(flows, attempts, strict=True)
        if not attempt.ok
    ]
    expect(not problems, "; ".join(problems))
    observe(f"first {' '.join(fewer)}, then {' '.join(full)}; cases run: {', '.join(flows)}")
