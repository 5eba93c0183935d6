"""The profile tool's results: PROF-06, 07, 10, 11, 12 (for each linked test account), anonymous calls."""

from __future__ import annotations

from collections.abc import Callable

from conformance import expect, fail, needs, observe, rule
from conformance.host.fields import json_get
from conformance.host.profile import (
    ID_DERIVATIONS,
    id_encoding_problems,
    id_problems,
    invented_field_problems,
    result_problems,
)
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites._linking import INVALID_BEARER
from conformance.suites.profile.client import AccountProfile, ProfileCaller


def _per_account(profiles: list[AccountProfile], problems_of: Callable[[AccountProfile], list[str]]) -> list[str]:
    return [f"account {p.account.account}: {m}" for p in profiles for m in problems_of(p)]


@rule("PROF-06")
def test_result_holds_the_profile(profile_1: AccountProfile) -> None:
    problems = result_problems(profile_1.result)
    expect(not problems, "; ".join(problems))


@rule("PROF-07")
def test_id_is_a_non_blank_string(profiles: list[AccountProfile]) -> None:
    problems = _per_account(profiles, lambda p: id_problems(p.record))
    expect(not problems, "; ".join(problems))


PROF10_CONTRACT = "contract PROF-10 (opaque id)"
PROF10 = attack_table(
    "PROF-10",
    Attack("the value itself, any case", PROF10_CONTRACT, named=True),
    Attack("the value with separators dropped", PROF10_CONTRACT),
    Attack("base64 or base64url of the value", f"{PROF10_CONTRACT}; RFC 4648 §4, §5"),
    Attack("hex of the value", f"{PROF10_CONTRACT}; RFC 4648 §8"),
    Attack(
        "an MD5/SHA-1/SHA-256/SHA-512 digest of the value (hex, whole or truncated)",
        f"{PROF10_CONTRACT}: an unsalted digest of an email is reversible by dictionary",
    ),
    Attack("a digest of the value in base64 or base64url", f"{PROF10_CONTRACT}; RFC 4648 §4, §5"),
    Attack("a name-based UUID (v3/v5) of the value", f"{PROF10_CONTRACT}; RFC 9562 §5.3, §5.5"),
)
if [a.case for a in PROF10] != list(ID_DERIVATIONS):  # the table is the derivations the detector runs
    raise RuntimeError("PROF-10's attack table and conformance.host.profile.ID_DERIVATIONS disagree")


@rule("PROF-10")
def test_id_encodes_no_identity(profiles: list[AccountProfile]) -> None:
    problems = _per_account(profiles, lambda p: id_encoding_problems(p.record, known=p.known))
    run = AttackRun.of("PROF-10")
    for attack in PROF10:
        run.tried_case(attack.case, "; ".join(m for m in problems if m.endswith(f"({attack.case})")) or None)
    compared = sorted(
        {k for p in profiles for k in p.known}
        | {k for p in profiles for k in ("email", "name", "organization") if isinstance((p.record or {}).get(k), str)}
    )
    if not compared:
        needs(
            "an email, name or organization of the test account to compare the id with (none in the profile, the "
            "ID token or the access token, and the login is not an email address)",
            "CONFORMANCE_TEST_USER set to the account's email, or an ID token with email/name claims",
        )
    observe(f"compared with {compared} of {len(profiles)} account(s)")
    run.conclude()


@rule("PROF-12")
def test_unavailable_fields_are_omitted(profiles: list[AccountProfile]) -> None:
    problems = _per_account(profiles, lambda p: invented_field_problems(p.record))
    expect(not problems, "; ".join(problems))
    fields = [sorted(k for k in (p.record or {}) if k != "id") for p in profiles]
    observe(f"display fields returned: {fields}")


@rule("PROF-11")
def test_no_placeholder_without_credentials(profile_caller: ProfileCaller) -> None:
    problems = []
    for what, token in (("without credentials", None), ("with an invalid token", INVALID_BEARER)):
        outcome = profile_caller.call(token)
        if outcome.status == 401 or outcome.auth_error_result:
            continue
        if outcome.returned_data:
            record = json_get(outcome.result, "structuredContent")
            problems.append(f"{what}: a profile came back instead of an auth error ({record!r})")
        else:
            problems.append(f"{what}: {outcome.describe()}, not an auth error (401 or a result with a challenge)")
    if problems:
        fail(f"{profile_caller.name!r} " + "; ".join(problems))
