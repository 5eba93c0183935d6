"""The profile tool's results: PROF-06, 07, 10, 11, 12, 14 (for each linked test account), anonymous calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from conformance import expect, needs, observe, rule
from conformance.config import Settings
from conformance.host.fields import json_get
from conformance.host.forge import ForgeError, HarnessIssuer, tamper_signature
from conformance.host.http import HostHTTP
from conformance.judges.profile import (
    BLANK_EMPTY,
    BLANK_FORMS,
    BLANK_INVISIBLE,
    BLANK_NULL,
    BLANK_UNICODE,
    BLANK_WHITESPACE,
    ID_DERIVATIONS,
    PH_DASHES,
    PH_EMAIL,
    PH_NAMED,
    PH_URL,
    PH_WORDS,
    PH_ZERO,
    PLACEHOLDER_FORMS,
    id_encoding_problems,
    id_local_part_notes,
    id_problems,
    invented_field_findings,
    placeholder_findings,
    result_problems,
)
from conformance.suites._cases import Attack, AttackRun, Unreached, attack_table
from conformance.suites._credentials import absent_credentials, empty_credential_attacks
from conformance.suites._linking import INVALID_BEARER, LinkedAccount
from conformance.suites._tool_access import (
    HARNESS_OPTION,
    CallOutcome,
    distinct,
    fresh_token,
    load_issuer,
    oauth_scopes,
    safe_call,
)
from conformance.suites.profile.client import AccountProfile, ProfileCaller
from conformance.verdict._verdicts import NeedsUnmet


def _per_account(profiles: list[AccountProfile], problems_of: Callable[[AccountProfile], list[str]]) -> list[str]:
    return [f"account {p.account.account}: {m}" for p in profiles for m in problems_of(p)]


@rule("PROF-06")
def test_result_holds_the_profile(profile_1: AccountProfile) -> None:
    problems = result_problems(profile_1.result)
    expect(not problems, "; ".join(problems))
    fields = ", ".join(sorted(profile_1.record)) if isinstance(profile_1.record, Mapping) else "?"
    observe(f"isError false; structuredContent ({fields}) is the same JSON as the one text item")


@rule("PROF-07")
def test_id_is_a_non_blank_string(profiles: list[AccountProfile]) -> None:
    problems = _per_account(profiles, lambda p: id_problems(p.record))
    expect(not problems, "; ".join(problems))
    observe(f"the id of {len(profiles)} account(s) is a string with a non-whitespace character")


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
    raise RuntimeError("PROF-10's attack table and conformance.judges.profile.ID_DERIVATIONS disagree")


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
    local = _per_account(profiles, lambda p: id_local_part_notes(p.record, known=p.known))
    if local:
        observe("reported, not judged (the email's local part): " + "; ".join(local))
    run.conclude()


def _display_fields(profiles: list[AccountProfile]) -> str:
    return str([sorted(k for k in (p.record or {}) if k != "id") for p in profiles])


PROFILE_RULE_8 = "contract A Profile id rule 8 (omit unavailable optional display fields instead of inventing them)"
PROF12 = attack_table(
    "PROF-12",
    Attack(BLANK_NULL, PROFILE_RULE_8, named=True, expected="omitted"),
    Attack(BLANK_EMPTY, PROFILE_RULE_8, named=True, expected="omitted"),
    Attack(BLANK_WHITESPACE, PROFILE_RULE_8, named=True, expected="omitted"),
    Attack(BLANK_UNICODE, f"{PROFILE_RULE_8}; Unicode White_Space property", expected="omitted"),
    Attack(BLANK_INVISIBLE, f"{PROFILE_RULE_8}; Unicode general category Cf", expected="omitted"),
)
PROF14 = attack_table(
    "PROF-14",
    Attack(PH_NAMED, PROFILE_RULE_8, named=True, expected="omitted"),
    Attack(PH_WORDS, PROFILE_RULE_8, expected="omitted"),
    Attack(PH_DASHES, PROFILE_RULE_8, expected="omitted"),
    Attack(PH_ZERO, PROFILE_RULE_8, expected="omitted"),
    Attack(PH_EMAIL, f"{PROFILE_RULE_8}; RFC 2606 §2, §3 (names reserved for examples)", expected="omitted"),
    Attack(PH_URL, f"{PROFILE_RULE_8}; RFC 2606 §3; RFC 6694 (about:blank)", expected="omitted"),
)
if [a.case for a in PROF12] != list(BLANK_FORMS) or [a.case for a in PROF14] != list(PLACEHOLDER_FORMS):
    raise RuntimeError("PROF-12/14's attack tables and conformance.judges.profile's forms disagree")


def _judge_forms(rule_id: str, findings: list[tuple[str, str]]) -> AttackRun:
    """Every display field of every account's record is read against each form of the table."""
    run = AttackRun.of(rule_id)
    for attack in run.table:
        run.tried_case(attack.case, "; ".join(m for case, m in findings if case == attack.case) or None)
    return run


def _account_findings(
    profiles: list[AccountProfile], findings: Callable[[AccountProfile], list[tuple[str, str]]]
) -> list[tuple[str, str]]:
    return [(case, f"account {p.account.account}: {m}") for p in profiles for case, m in findings(p)]


@rule("PROF-12")
def test_unavailable_fields_are_omitted(profiles: list[AccountProfile]) -> None:
    run = _judge_forms("PROF-12", _account_findings(profiles, lambda p: invented_field_findings(p.record)))
    observe(f"no null, empty, blank or invisible optional field; display fields returned: {_display_fields(profiles)}")
    run.conclude()


@rule("PROF-14")
def test_no_placeholder_fields(profiles: list[AccountProfile]) -> None:
    found = _account_findings(profiles, lambda p: placeholder_findings(p.record, known=p.known))
    run = _judge_forms("PROF-14", found)
    observe(f"no placeholder value; display fields returned: {_display_fields(profiles)}")
    run.conclude()


PROF11_CONTRACT = "contract PROF-11 (no placeholder profile without valid credentials)"
PROF11_EMPTY = absent_credentials(
    "no Authorization header", "an empty Authorization header", "'Bearer' without a token", "a Basic header"
)
PROF11 = attack_table(
    "PROF-11",
    *empty_credential_attacks(PROF11_CONTRACT, PROF11_EMPTY),
    Attack("an unknown token", f"{PROF11_CONTRACT}; RFC 6750 §3.1 invalid_token", named=True),
    Attack("the real token with a flipped signature byte", f"{PROF11_CONTRACT}; RFC 7515 §5.2; RFC 8725 §3.1"),
    Attack("an expired token", f"{PROF11_CONTRACT}; RFC 7519 §4.1.4; contract A Auth 2"),
    Attack("a token for another audience", f"{PROF11_CONTRACT}; RFC 8707 §2; RFC 8725 §3.9"),
)


def _credentials_cases(
    caller: ProfileCaller, account: LinkedAccount, issuer: HarnessIssuer | None, run: AttackRun
) -> dict[str, dict[str, str] | None]:
    """Each PROF-11 case as the headers it sends (None: no Authorization header); reuses the token families of
    suites/auth/test_tokens.py (forge helpers, the harness issuer)."""
    cases: dict[str, dict[str, str] | None] = {
        **{c.case: c.headers for c in PROF11_EMPTY},
        "an unknown token": {"Authorization": f"Bearer {INVALID_BEARER}"},
    }
    try:
        cases["the real token with a flipped signature byte"] = bearer(tamper_signature(fresh_token(account)))
    except ForgeError:
        run.inapplicable("the real token with a flipped signature byte", "the access token is opaque (not a JWT)")
    scopes = distinct([*account.scopes, *oauth_scopes(caller.tool)])
    control = None
    if issuer is not None:  # the issuer's own valid token first: else expired/audience cases would pass vacuously
        control = safe_call(
            caller.http, caller.url, caller.tool, token=issuer.valid(account.resource, scopes), arguments={}
        )
    trusted = isinstance(control, CallOutcome) and _accepted(control)
    for case in ("an expired token", "a token for another audience"):
        if issuer is None or not trusted:
            why = "no test issuer configured" if issuer is None else "a valid test-issuer token was refused"
            run.not_tried(case, f"needs harness-issued tokens the target trusts ({why}; {HARNESS_OPTION})")
    if issuer is not None and trusted:
        cases["an expired token"] = bearer(issuer.expired(account.resource, scopes))
        cases["a token for another audience"] = bearer(issuer.wrong_audience(account.resource, scopes))
    for headers in cases.values():
        if headers is not None and headers["Authorization"].startswith("Bearer "):
            caller.http.redactor.add_secret(headers["Authorization"].removeprefix("Bearer ").strip(), crafted=True)
    return cases


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _accepted(outcome: CallOutcome) -> bool:
    return not (outcome.refused_http or outcome.auth_error_result) and outcome.result is not None


@rule("PROF-11")
def test_no_placeholder_without_credentials(
    profile_caller: ProfileCaller,
    linked_account: LinkedAccount,
    host_http: HostHTTP,
    conformance_settings: Settings,
) -> None:
    run = AttackRun.of("PROF-11")
    try:
        issuer = load_issuer(conformance_settings, host_http)
    except NeedsUnmet as exc:
        issuer = None
        observe(f"no harness issuer: {exc}")
    cases = _credentials_cases(profile_caller, linked_account, issuer, run)

    def attack(case: str) -> str | None:
        http = profile_caller.http
        outcome = safe_call(http, profile_caller.url, profile_caller.tool, headers=cases[case], arguments={})
        if isinstance(outcome, Unreached):
            return outcome  # a transport failure: the case was not tried
        if isinstance(outcome, str):
            return f"{case}: the request failed ({outcome})"
        if outcome.status == 401 or outcome.auth_error_result:
            return None
        if outcome.returned_data:
            record = json_get(outcome.result, "structuredContent")
            return f"{case}: {profile_caller.name!r} returned a profile instead of an auth error ({record!r})"
        return f"{case}: {outcome.describe()}, not an auth error (401 or a result with a challenge)"

    run.each(cases, attack, limit=profile_caller.http.concurrency)
    run.conclude()
