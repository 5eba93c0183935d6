"""IdP and proxy mutants: each starts (for real) and differs from the reference IdP in exactly its defect.

The probes (observe(), FOOTPRINT, REFERENCE) live in tests/reference/auth_probe.py. Here: the reference IdP shows
REFERENCE, and the catalogue of footprints is complete. Each mutant's footprint is asserted on the stack the mutant
matrix starts for its harness run anyway (nothing is started twice), by
tests/matrix/test_matrix.py::test_mutant_differs_in_exactly_its_defect.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.reference.idp.mutants import MUTANTS as IDP_MUTANTS
from conformance.reference.proxy.mutants import MUTANTS as PROXY_MUTANTS
from conformance.reference.stack import Stack
from tests.matrix.plan import plan
from tests.reference.auth_probe import FOOTPRINT, REFERENCE, observe, observes


@pytest.fixture(scope="module")
def reference(auth_stack: Stack) -> dict[str, Any]:
    return observe(auth_stack)


def test_reference_idp_behaves(reference: dict[str, Any]) -> None:
    statuses, metadata = reference["metadata"]
    assert statuses == [200, 200]
    assert metadata["issuer"] == "ORIGIN" and metadata["code_challenge_methods_supported"] == ["S256"]
    assert reference["flow_iss"] == "ORIGIN" and reference["deny_iss"] == ["access_denied", "ORIGIN"]
    assert reference["no_pkce_iss"] == "ORIGIN"  # an error raised before consent carries iss too (RFC 9207 §2)
    assert reference["token_aud"] is True
    assert reference["code_reuse"] is False and reference["client_reuse"] == 200
    assert reference["code_race"] == 1  # one of two concurrent exchanges of a code gets tokens
    assert reference["no_pkce"] == reference["no_pkce_confidential"] == ["error", "error_description", "state"]
    assert reference["later_iss"] == "ORIGIN"
    assert reference["redirect_prefix"] == reference["redirect_prefix_confidential"] == "refused"
    assert reference["redirect_case"] == "refused"
    assert reference["userinfo_verified"] is True and reference["jti_replay"] is False
    assert reference["cimd_none"] == 200 and reference["cimd_pkjwt"] == 200 and reference["cimd_both_none"] == 200
    assert reference["cimd_secret"] == 401 and reference["cimd_any_key"] == 401 and reference["wrong_verifier"] == 400
    assert reference["cimd_alg_none"] == 401 and reference["cimd_no_exp"] == 401 and reference["cimd_basic"] == 401
    assert reference["no_verifier"] == 400
    # An unknown scope is refused by an error redirect that carries iss and state (RFC 6749 §4.1.2.1, RFC 9207).
    assert reference["admin_scope"] == ["error", "error_description", "scope", "state"]
    assert reference["admin_scope_error"] == ["invalid_scope", "ORIGIN"]
    assert reference["dcr"] == (201, True) and reference["flow_state"] == "state-123"
    assert reference["token_type"] == "Bearer" and reference["id_token_hint"] == ["code", "state"]
    # All of it, every probe: the matrix's footprint tests compare each mutant's observation with REFERENCE.
    assert reference == REFERENCE


def test_every_idp_and_proxy_mutant_has_a_footprint() -> None:
    assert {m.name for m in [*IDP_MUTANTS, *PROXY_MUTANTS]} == set(FOOTPRINT)
    # ... and each is a case of the mutant matrix that observes its stack (where its footprint is asserted).
    assert {case.id for case in plan() if observes(case)} == set(FOOTPRINT)
