"""Tool declarations, anonymous access and in-call challenges: AUTH-TOOL-01 … 06, AUTH-CHAL-01 … 02 (AUTH-TOOL-07,
a tool declaring noauth and oauth2 presented with bad tokens, is with the token checks).

The declarations come from ``tools/list`` (every page) of an anonymous session, or of the linked account's session
when the server refuses anonymous ones. Each tool declared ``noauth`` or ``oauth2`` only, and each tool declared as
writing or as read-only that declares nothing, is called anonymously once (arguments made from its inputSchema);
those results feed AUTH-TOOL-03/04/05 and AUTH-CHAL-01/02.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance import Blocked, NeedsUnmet, TargetError, alone, early, expect, needs, observe, rule
from conformance.config import Settings, Target
from conformance.core._early import asks
from conformance.host import LimitReached, fanout
from conformance.host.discovery import discover_prm
from conformance.host.http import HostHTTP
from conformance.judges.declarations import (
    CHALLENGE_META_KEY,
    MARKER_ABSENT,
    check_challenge_result,
    linking_ui_summary,
    profile_marker,
    security_schemes_of,
)
from conformance.suites._cases import Attack, AttackRun, Unreached, attack_table
from conformance.suites._credentials import absent_credentials, empty_credential_attacks
from conformance.suites._era_cases import ROUTED_NAME, routing_attacks, try_routed_name
from conformance.suites._tool_access import (
    CallOutcome,
    Listing,
    auth_tool,
    call,
    declared_writing,
    fresh_token,
    hints,
    is_noauth_only,
    is_oauth_only,
    is_read_only,
    obtained_results,
    safe_call,
    scheme_kinds,
    vendor_of,
)
from conformance.suites.fixtures import value_or_need


@dataclass
class Anonymous:
    """Anonymous calls of the tools whose declaration says how they must answer one."""

    outcomes: dict[str, CallOutcome | str] = field(default_factory=dict)

    def results(self) -> dict[str, dict[str, Any]]:
        return {n: o.result for n, o in self.outcomes.items() if isinstance(o, CallOutcome) and o.result is not None}


def anonymous_candidates(listing: Listing) -> list[Mapping[str, Any]]:
    """noauth-only and oauth2-only tools (AUTH-TOOL-03), tools declared as writing that declare no
    securitySchemes (AUTH-TOOL-04), and read-only tools that declare none (AUTH-CHAL-02: does one demand
    authorization without declaring it?)."""
    return [
        t
        for t in listing.named()
        if is_noauth_only(t)
        or is_oauth_only(t)
        or (scheme_kinds(t) is None and (declared_writing(t) or is_read_only(t)))
    ]


@pytest.fixture(scope="session")
@early()
def anonymous(host_http: HostHTTP, tool_server_target: Target, listing: Listing) -> Anonymous:
    found = Anonymous()
    tools = anonymous_candidates(listing)
    calls = fanout.each(
        tools, lambda tool: safe_call(host_http, tool_server_target.base_url, tool), limit=host_http.concurrency
    )
    for tool, outcome in zip(tools, calls, strict=True):
        found.outcomes[str(tool["name"])] = outcome
    return found


# Every place an anonymous host's credentials could be absent or empty: an oauth2-only tool answers each
# with an auth error, never data. "no Authorization header" is the ``anonymous`` fixture's call.
A_AUTH_6 = "contract A Auth 6 (oauth2 only: an anonymous call gets an auth error)"
TOOL03 = attack_table(
    "AUTH-TOOL-03",
    *empty_credential_attacks(A_AUTH_6, absent_credentials(), also={"a Basic header": "RFC 7617"}),
    *routing_attacks(),
)
EMPTY_CREDENTIALS: dict[str, dict[str, Any]] = {c.case: c.send for c in absent_credentials() if c.send}


A_WRITES = "contract A What the service does (a tool with write actions must authenticate the user)"
TOOL04 = attack_table(
    "AUTH-TOOL-04",
    *(Attack(a.case, a.source.replace(A_AUTH_6, A_WRITES), named=a.named) for a in TOOL03 if a.case != ROUTED_NAME),
)


def _empty_credentials_targets(tool: Mapping[str, Any]) -> bool:
    """oauth2-only tools (TOOL-03) and tools declared as writing that do not declare noauth (TOOL-04)."""
    kinds = scheme_kinds(tool)
    return is_oauth_only(tool) or (declared_writing(tool) and not (kinds is not None and "noauth" in kinds))


@pytest.fixture(scope="session")
@early()
def empty_credentials(
    host_http: HostHTTP, tool_server_target: Target, listing: Listing
) -> dict[str, dict[str, CallOutcome | str]]:
    """case -> tool -> its call with that empty credential (the tables of TOOL-03/04 past their first case); the
    calls at once, their evidence in this order."""
    pairs = [(case, t) for case in EMPTY_CREDENTIALS for t in listing.named() if _empty_credentials_targets(t)]

    def call(pair: tuple[str, Mapping[str, Any]]) -> CallOutcome | str:
        case, tool = pair
        return safe_call(host_http, tool_server_target.base_url, tool, **EMPTY_CREDENTIALS[case])

    outcomes = fanout.each(pairs, call, limit=host_http.concurrency)
    found: dict[str, dict[str, CallOutcome | str]] = {case: {} for case in EMPTY_CREDENTIALS}
    for (case, tool), outcome in zip(pairs, outcomes, strict=True):
        found[case][str(tool["name"])] = outcome
    return found


@pytest.fixture(scope="session")
@asks("empty_credentials")
def empty_credentials_or_need(request: pytest.FixtureRequest) -> dict[str, dict[str, CallOutcome | str]] | NeedsUnmet:
    """The empty-credential calls, or what they need (with no tool to judge, a check skips for that instead)."""
    found: dict[str, dict[str, CallOutcome | str]] | NeedsUnmet = value_or_need(request, "empty_credentials")
    return found


def _judge_empty_credentials(
    run: AttackRun, empty_credentials: dict[str, dict[str, CallOutcome | str]], judged: dict[str, str]
) -> None:
    """Each empty-credential case over the tools ``judged`` (name -> what it is): data back is the case failing;
    a case every call of which failed in transport is not tried."""
    for case, all_outcomes in empty_credentials.items():
        outcomes = {n: o for n, o in all_outcomes.items() if n in judged}
        wrong, unreached = [], []
        for name, found in outcomes.items():
            if isinstance(found, Unreached):
                unreached.append(f"{name!r}: {found}")
            elif isinstance(found, str):
                wrong.append(f"{case}: calling {name!r} failed ({found})")
            elif found.returned_data:
                wrong.append(f"{case}: {name!r} is {judged[name]} but returned data ({found.describe()})")
        if not outcomes:
            run.inapplicable(case, "no tool to call")
        elif unreached and not wrong:
            run.unreached(case, "; ".join(unreached))
        else:
            run.tried_case(case, "; ".join(wrong) or None)


# -- declarations --------------------------------------------------------------------------------------------

TOOL_NAME = re.compile(r"(?:tool|result of) '([^']*)'")


def every_offender(problems: Sequence[object], limit: int = 20) -> str:
    """A verdict judged over every tool: names each offending tool, however many problems there are (the problem
    texts themselves are cut at ``limit`` with a count of the rest)."""
    texts = [str(p) for p in problems]
    tools = sorted({m.group(1) for text in texts if (m := TOOL_NAME.search(text))})
    head = f"{len(tools)} offending tool(s) {tools}: " if tools else ""
    return head + "; ".join(texts[:limit]) + (f"; … and {len(texts) - limit} more" if len(texts) > limit else "")


@rule("AUTH-TOOL-01")
def test_tool_declarations(listing: Listing) -> None:
    problems = [str(p) for p in listing.problems_of("AUTH-TOOL-01")] + listing.paging
    expect(not problems, every_offender(problems))
    undescribed = [str(t["name"]) for t in listing.named() if "description" not in t]
    if undescribed:
        observe(f"tools without a description (reported, not judged): {undescribed}")
    if not listing.tools:
        observe("tools/list returned no tools")
    observe(f"{len(listing.tools)} tool(s) declared" + (" (listed with the linked account)" * listing.authenticated))


@rule("AUTH-TOOL-02")
def test_security_schemes(listing: Listing) -> None:
    expect(not listing.problems_of("AUTH-TOOL-02"), every_offender(listing.problems_of("AUTH-TOOL-02")))
    undeclared = [str(t["name"]) for t in listing.named() if security_schemes_of(t) is None]
    if undeclared:
        observe(f"tools without securitySchemes (they inherit the server default): {undeclared}")
    if len(undeclared) == len(listing.named()):
        # No declaration to judge: not a pass (the rule judges securitySchemes where they are declared).
        needs("a tool declaring securitySchemes (every tool inherits the server default)")
    declared = [str(t["name"]) for t in listing.named() if security_schemes_of(t) is not None]
    observe(f"well-formed securitySchemes on {len(declared)} tool(s): {', '.join(declared)}")


@rule("AUTH-TOOL-06")
def test_profile_marker_is_boolean(listing: Listing, conformance_settings: Settings) -> None:
    expect(not listing.problems_of("AUTH-TOOL-06"), every_offender(listing.problems_of("AUTH-TOOL-06")))
    vendor = vendor_of(conformance_settings)
    marked = [str(t["name"]) for t in listing.named() if profile_marker(t, vendor) != MARKER_ABSENT]
    if not marked:
        needs(f'a tool carrying the profile marker _meta["{vendor}/profile"] (none does; a profile tool is optional)')
    observe(f'_meta["{vendor}/profile"] is a boolean on {", ".join(marked)}')


# -- anonymous access ----------------------------------------------------------------------------------------


@rule("AUTH-TOOL-03")
def test_anonymous_access_follows_declarations(
    listing: Listing,
    anonymous: Anonymous,
    empty_credentials: dict[str, dict[str, CallOutcome | str]],
    host_http: HostHTTP,
    tool_server_target: Target,
) -> None:
    problems = []
    checked = 0
    for tool in listing.named():
        name = str(tool["name"])
        outcome = anonymous.outcomes.get(name)
        if outcome is None or not (is_noauth_only(tool) or is_oauth_only(tool)):
            continue
        checked += 1
        if isinstance(outcome, str):
            problems.append(f"anonymous call of {name!r} failed: {outcome}")
        elif is_noauth_only(tool) and (outcome.refused_http or outcome.auth_error_result or outcome.result is None):
            problems.append(f"{name!r} is declared noauth but an anonymous call got {outcome.describe()}")
        elif is_oauth_only(tool) and outcome.returned_data:
            problems.append(f"{name!r} is declared oauth2 only but returned data anonymously ({outcome.describe()})")
    if not checked:
        needs("a tool declared noauth only or oauth2 only")
    run = AttackRun.of("AUTH-TOOL-03")
    run.tried_case("no Authorization header", "; ".join(problems) or None)
    oauth_only = {str(t["name"]): "declared oauth2 only" for t in listing.named() if is_oauth_only(t)}
    _judge_empty_credentials(run, empty_credentials, oauth_only)
    try_routed_name(run, host_http, tool_server_target.base_url, listing)
    observe(f"{checked} tool(s) called anonymously")
    run.conclude()


@rule("AUTH-TOOL-04")
def test_tools_that_write_are_not_anonymous(
    listing: Listing,
    anonymous: Anonymous,
    empty_credentials_or_need: dict[str, dict[str, CallOutcome | str]] | NeedsUnmet,
) -> None:
    problems = []
    writers = [t for t in listing.named() if declared_writing(t)]
    unhinted = [str(t["name"]) for t in listing.named() if "readOnlyHint" not in hints(t) and not declared_writing(t)]
    if unhinted:
        observe(f"tools without readOnlyHint (reported, not judged): {unhinted}")
    if not writers:
        needs("a tool declared as writing (readOnlyHint: false or destructiveHint: true): nothing to judge")
    called: dict[str, str] = {}  # the writers whose declaration leaves them to the runtime: judged by their calls
    for tool in writers:
        name, kinds = str(tool["name"]), scheme_kinds(tool)
        what = "destructive" if hints(tool).get("destructiveHint") is True else "declared readOnlyHint: false"
        if kinds is not None and "noauth" in kinds:
            problems.append(f"{name!r} is {what} but declares noauth (callable anonymously)")
        else:
            called[name] = what + (", declares no securitySchemes," if kinds is None else "")
    expect(not problems, "; ".join(problems))
    run = AttackRun.of("AUTH-TOOL-04")
    wrong, reached = [], 0
    for name, what in called.items():
        outcome = anonymous.outcomes.get(name)
        reached += isinstance(outcome, CallOutcome)
        if isinstance(outcome, CallOutcome) and outcome.returned_data:
            wrong.append(f"{name!r} is {what} and ran anonymously")
    if not called:
        run.inapplicable("no Authorization header", "every tool declared as writing declares noauth (judged above)")
    elif reached or wrong:
        run.tried_case("no Authorization header", "; ".join(wrong) or None)
    else:
        run.not_tried("no Authorization header", "no anonymous call of a tool declared as writing was answered")
    if isinstance(empty_credentials_or_need, NeedsUnmet):
        raise empty_credentials_or_need
    _judge_empty_credentials(run, empty_credentials_or_need, called)
    observe(f"{len(writers)} tool(s) declared as writing: {sorted(str(t['name']) for t in writers)}")
    run.conclude()


# -- results -------------------------------------------------------------------------------------------------


@alone("its body sets up a fixture only when it needs it (request.getfixturevalue)")
@rule("AUTH-TOOL-05")
def test_structured_content_matches_output_schema(
    host_http: HostHTTP,
    tool_server_target: Target,
    listing: Listing,
    anonymous: Anonymous,
    request: pytest.FixtureRequest,
) -> None:
    # Its own calls first (every read-only tool with the linked account; the anonymous calls are the fixture's),
    # then every result the run obtained through call(): profile calls, scope and token attacks, other checks.
    # The check runs after the others (suites/_order.py), so their results are in.
    try:
        token = fresh_token(request.getfixturevalue("linked_account"))
    except (Blocked, LimitReached) as exc:
        observe(f"no authenticated results of its own: {exc}")
        token = None
    if token is not None:
        readable = [tool for tool in listing.named() if is_read_only(tool) and not is_noauth_only(tool)]
        outcomes = fanout.each(
            readable,
            lambda tool: call(host_http, tool_server_target.base_url, tool, token=token),
            limit=host_http.concurrency,
        )
        for tool, outcome in zip(readable, outcomes, strict=True):
            if outcome.refused_http or outcome.auth_error_result:
                raise Blocked("AUTH-TOK-01", f"the linked account's token was refused on {tool['name']!r}")
    results = obtained_results(host_http)
    if not results:
        readable = [t for t in listing.named() if is_read_only(t) and not is_noauth_only(t)]
        why = (
            "no tool declares readOnlyHint: true, and only read-only tools are called with the linked account"
            if not readable and listing.named()
            else "no tool answered a call with a result"
        )
        needs(f"a tool result ({why})", "readOnlyHint: true on a tool that is safe to call" * (not readable))
    problems = [
        f"{p} ({found.describe()})" for found in results for p in listing.checker.check_result(found.tool, found.result)
    ]
    expect(not problems, every_offender(problems))
    judged: dict[str, int] = {}
    for found in results:
        key = f"{found.tool} ({'with a token' if found.with_token else 'anonymous'}, during {found.during})"
        judged[key] = judged.get(key, 0) + 1
    observe(f"{len(results)} result(s) validated: " + "; ".join(f"{k} x{n}" for k, n in judged.items()))


def in_call_failures(listing: Listing, anonymous: Anonymous) -> dict[str, dict[str, Any]]:
    """Results of anonymous calls to oauth2-only tools that came back as tool errors: in-call auth failures."""
    failures = {}
    for tool in listing.named():
        outcome = anonymous.outcomes.get(str(tool["name"]))
        if is_oauth_only(tool) and isinstance(outcome, CallOutcome) and outcome.is_error_result:
            assert outcome.result is not None
            failures[str(tool["name"])] = outcome.result
    return failures


def challenged_results(host_http: HostHTTP, anonymous: Anonymous) -> dict[str, dict[str, Any]]:
    """Every other result of the run that answers as an auth failure (it carries ``_meta["mcp/www_authenticate"]``):
    the token, scope and profile checks' calls included."""
    seen = [id(r) for r in anonymous.results().values()]
    found: dict[str, dict[str, Any]] = {}
    for obtained in obtained_results(host_http):
        meta = obtained.result.get("_meta")
        if id(obtained.result) not in seen and isinstance(meta, Mapping) and CHALLENGE_META_KEY in meta:
            found.setdefault(obtained.describe(), obtained.result)
    return found


@rule("AUTH-CHAL-01")
def test_in_call_auth_errors_carry_challenges(host_http: HostHTTP, listing: Listing, anonymous: Anonymous) -> None:
    """The anonymous calls of oauth2-only tools that failed inside the call, and every result of the run carrying a
    challenge (this check runs after the others, suites/_order.py)."""
    failures = {repr(name): result for name, result in in_call_failures(listing, anonymous).items()}
    failures.update(challenged_results(host_http, anonymous))
    if not failures:
        needs("an auth failure inside a tool call (no tool call of the run was answered with an auth error result)")
    problems = [f"{name}: {p}" for name, result in failures.items() for p in check_challenge_result(result).problems]
    shown = "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
    expect(not problems, shown)
    observe(f"checked {len(failures)} auth error result(s): " + "; ".join(list(failures)[:10]))


A_AUTH_7 = (
    "contract A Auth 7 (the linking UI appears only when the tool declares securitySchemes and the runtime error"
    " result carries error and error_description)"
)
NEEDS_DECLARED = "every tool declared oauth2 only"
NEEDS_UNDECLARED = "every tool declaring no securitySchemes whose anonymous call demands authorization"
CHAL02 = attack_table(
    "AUTH-CHAL-02",
    Attack(NEEDS_DECLARED, A_AUTH_7, named=True, expected="the linking UI can appear"),
    Attack(
        NEEDS_UNDECLARED,
        f"{A_AUTH_7}; contract A Auth 6 (an omitted array inherits the server default)",
        expected="the linking UI can appear",
    ),
)


def demands_authorization(outcome: CallOutcome | str | None) -> bool:
    """An anonymous call answered with 401 or with an auth error result: the tool needs a linked account."""
    return isinstance(outcome, CallOutcome) and (outcome.refused_http or outcome.auth_error_result)


@pytest.fixture(scope="session")
@early()
def metadata_published(host_http: HostHTTP, tool_server_target: Target) -> bool | LimitReached:
    """Whether the protected resource metadata is discovered (the linking UI needs it), fetched as the run starts:
    AUTH-CHAL-02, which reads it, is judged after every other check."""
    try:
        discover_prm(host_http, tool_server_target.base_url)
    except LimitReached as exc:
        return exc
    except TargetError:  # InvalidResponse included
        return False
    return True


@alone("judged over the tool results the checks before it obtained")
@rule("AUTH-CHAL-02")
def test_linking_ui_can_appear(
    metadata_published: bool | LimitReached,
    conformance_settings: Settings,
    host_http: HostHTTP,
    listing: Listing,
    anonymous: Anonymous,
) -> None:
    """Each tool that needs a linked account, judged on its own: one declared oauth2 only, and one that declares
    nothing but whose anonymous call demands authorization. Its challenge is the auth error result of its own
    anonymous call, or (an HTTP 401 being no runtime error result) another in-call auth error of the run."""
    if isinstance(metadata_published, LimitReached):
        raise metadata_published
    published = metadata_published
    declared = [t for t in listing.named() if is_oauth_only(t)]
    undeclared = [
        t
        for t in listing.named()
        if security_schemes_of(t) is None and demands_authorization(anonymous.outcomes.get(str(t["name"])))
    ]
    if not declared and not undeclared:
        needs(
            "a tool that needs a linked account (declared oauth2 only, or declaring nothing while its anonymous "
            "call demands authorization)"
        )
    failures = in_call_failures(listing, anonymous)
    failures.update(
        {
            str(t["name"]): outcome.result
            for t in undeclared
            if isinstance(outcome := anonymous.outcomes.get(str(t["name"])), CallOutcome)
            and outcome.auth_error_result
            and outcome.result is not None
        }
    )
    others = challenged_results(host_http, anonymous)
    if not failures and not others:
        first = auth_tool(listing, vendor_of(conformance_settings)) or (declared + undeclared)[0]
        outcome = anonymous.outcomes.get(str(first["name"]))
        if isinstance(outcome, CallOutcome) and outcome.returned_data:
            raise Blocked("AUTH-TOOL-03", f"{first['name']!r} (oauth2 only) returned data to an anonymous call")
        what = outcome if isinstance(outcome, str) else outcome.describe() if outcome else "no call"
        # The summary is never more decided than AUTH-CHAL-01, which it summarises: without a runtime error result
        # (an HTTP 401 challenge is not one) neither can be judged.
        needs(
            f"an auth error result inside a tool call, as AUTH-CHAL-01 needs (the anonymous call of {first['name']!r} "
            f"got {what}; no call of the run was answered with an auth error result)"
        )
    fallback = next(iter(failures.items()), None) or next(iter(others.items()))
    run = AttackRun.of("AUTH-CHAL-02")
    judged: list[str] = []
    for case, tools in ((NEEDS_DECLARED, declared), (NEEDS_UNDECLARED, undeclared)):
        problems = []
        for tool in tools:
            name = str(tool["name"])
            outcome = anonymous.outcomes.get(name)
            if isinstance(outcome, CallOutcome) and outcome.returned_data:
                observe(f"{name!r} (oauth2 only) returned data to an anonymous call: AUTH-TOOL-03 judges it")
                continue
            source, result = (repr(name), failures[name]) if name in failures else fallback
            summary = linking_ui_summary(
                metadata_published=published, tool=tool, challenge=check_challenge_result(result)
            )
            judged.append(f"{name!r} (challenge of {source})")
            if not summary.ok:
                problems.append(f"the linking UI would not appear for {name!r}: " + "; ".join(summary.missing))
        if not tools:
            run.inapplicable(case, "no such tool")
        else:
            run.tried_case(case, "; ".join(problems) or None)
    observe(
        "metadata published; each tool declares securitySchemes and its auth error result has both: "
        + ", ".join(judged)
    )
    run.conclude()
