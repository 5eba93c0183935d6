"""Offline judging of the tool server's documents: PRM, AS metadata, CIMD, challenges, tool declarations/results.

Each ``*_problems`` function is pure (a document in, messages out) and is what the live check calls too, so an
offline verdict and a live one say the same thing. Context a live run learns elsewhere (the URL the host connects
to, the issuer the PRM lists, the issuers the listed servers publish) is a keyword argument; without it the part
of the rule that needs it is ``skipped``, never passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from conformance.core.rules import Status
from conformance.host.asmeta import NAMED_AUTH_METHODS, AsMetadata, schema_problems
from conformance.host.challenge import Challenge, ChallengeParseError, bearer_challenges
from conformance.host.identity import HOST_AUTH_METHODS
from conformance.host.oauth import CallbackParams, issuer_identification_met, negotiate_auth_method, parse_callback
from conformance.judges._core import Verdict, judged, noted, skipped
from conformance.judges.declarations import DeclarationChecker, check_challenge_result, describe

# ---------------------------------------------------------------------------------------------------- PRM


def prm_resource_problems(
    document: Mapping[str, Any], resource: str | None = None, *, judge_scheme: bool = True
) -> list[str]:
    """AUTH-PRM-02 on the document: ``resource`` a non-empty string, HTTPS, and (given) the canonical URL.
    ``judge_scheme=False``: the caller judges HTTPS itself (a live run on loopback may not judge transport)."""
    value = document.get("resource")
    if not isinstance(value, str) or not value:
        return [f"`resource` is missing or not a string: {value!r}"]
    problems = []
    if resource is not None and value != resource:
        problems.append(
            f"`resource` {value!r} is not the URL the host connects to ({resource!r}); "
            "the host sends this exact value as `resource`"
        )
    if judge_scheme and urlsplit(value).scheme != "https":
        problems.append(f"`resource` {value!r} is not an HTTPS URL")
    return problems


def prm_servers_problems(document: Mapping[str, Any]) -> list[str]:
    """AUTH-PRM-03, the shape: ``authorization_servers`` a non-empty array of non-empty strings."""
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
        return [f"`authorization_servers` must be a non-empty array of strings, got {servers!r}"]
    return []


def prm_optional_field_problems(document: Mapping[str, Any]) -> list[str]:
    """AUTH-PRM-04: the optional fields' types."""
    problems = []
    scopes = document.get("scopes_supported")
    if scopes is not None and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
        problems.append(f"`scopes_supported` must be an array of strings, got {scopes!r}")
    for name in ("resource_documentation", "resource_policy_uri", "resource_tos_uri"):
        if name in document and not isinstance(document[name], str):
            problems.append(f"`{name}` must be a string, got {document[name]!r}")
    return problems


def _object(document: Any, what: str) -> list[str]:
    return [] if isinstance(document, Mapping) else [f"{what} must be a JSON object, got {type(document).__name__}"]


def prm(document: Any, *, resource: str | None = None, issuers: Mapping[str, str] | None = None) -> list[Verdict]:
    """Protected resource metadata. ``resource``: the URL the host connects to; ``issuers``: for each listed
    authorization server, the ``issuer`` its metadata publishes."""
    rules = ("AUTH-PRM-02", "AUTH-PRM-03", "AUTH-PRM-04")
    if bad := _object(document, "protected resource metadata"):
        return [judged(r, bad) for r in rules]
    servers = prm_servers_problems(document)
    if not servers and issuers is not None:
        for issuer in document["authorization_servers"]:
            published = issuers.get(issuer)
            if published != issuer:
                servers.append(f"{issuer!r} serves metadata whose issuer is {published!r}")
        if servers:
            servers[-1] += " (compared character for character)"
    return [
        judged("AUTH-PRM-02", prm_resource_problems(document, resource), unjudged=None if resource else "--resource"),
        judged("AUTH-PRM-03", servers, unjudged=None if issuers is not None else "the listed servers' issuers"),
        judged("AUTH-PRM-04", prm_optional_field_problems(document)),
    ]


# ------------------------------------------------------------------------------------------ AS metadata


def s256_problems(document: Mapping[str, Any]) -> list[str]:
    """AUTH-ASM-03."""
    methods = document.get("code_challenge_methods_supported")
    if methods is None:
        return ["code_challenge_methods_supported is missing: a host treats the server as unsupported"]
    if not (isinstance(methods, list) and all(isinstance(m, str) for m in methods) and "S256" in methods):
        return [f"code_challenge_methods_supported is {methods!r}, without S256"]
    return []


def auth_method_problems(document: Mapping[str, Any]) -> list[str]:
    """AUTH-ASM-06: an array of strings; with CIMD advertised, a method in common with the host's. Values beyond
    the contract's named ones are allowed (RFC 7591 §2 lets a server define others): ``auth_method_notes``."""
    listed = document.get("token_endpoint_auth_methods_supported")
    if listed is not None and not (isinstance(listed, list) and all(isinstance(m, str) for m in listed)):
        return [f"token_endpoint_auth_methods_supported must be an array of strings, got {listed!r}"]
    if document.get("client_id_metadata_document_supported") is True:
        decision = negotiate_auth_method(listed)
        if not decision.intersection:
            return [f"CIMD is advertised but {decision.reason} (the host supports {list(HOST_AUTH_METHODS)} for CIMD)"]
    return []


def auth_method_notes(document: Mapping[str, Any]) -> list[str]:
    """AUTH-ASM-06, reported: the listed values the contract does not name."""
    listed = document.get("token_endpoint_auth_methods_supported")
    if not isinstance(listed, list):
        return []
    beyond = [m for m in listed if isinstance(m, str) and m not in NAMED_AUTH_METHODS]
    if not beyond:
        return []
    return [f"token_endpoint_auth_methods_supported also lists {beyond}, beyond the named {list(NAMED_AUTH_METHODS)}"]


def endpoint_https_problems(document: Mapping[str, Any], judged: Callable[[str], bool] | None = None) -> list[str]:
    """AUTH-ASM-04: the endpoints the contract wants as absolute HTTPS URLs that are not. ``judged(url)`` False
    leaves the scheme of that URL unjudged (a loopback run); presence and absoluteness are always judged."""
    problems = []
    for name in ("authorization_endpoint", "token_endpoint"):
        value = document.get(name)
        if not isinstance(value, str):
            problems.append(f"{name}: missing")
        else:
            absolute = bool(urlsplit(value).netloc) and urlsplit(value).scheme in ("https", "http")
            unjudged = judged is not None and not judged(value)
            if not absolute or not (value.startswith("https://") or unjudged):
                problems.append(f"{name}: {value!r} is not an absolute https URL")
    return problems


def identification_problems(document: Mapping[str, Any], *, client_id: str | None = None) -> list[str]:
    """AUTH-ASM-05: CIMD, DCR or a predefined client."""
    if document.get("client_id_metadata_document_supported") is True:
        return []
    if isinstance(document.get("registration_endpoint"), str) or client_id:
        return []
    return ["no way for the host to identify itself: no CIMD, no registration_endpoint, no predefined client"]


def iss_parameter_problems(meta: AsMetadata, *, why: str = "the issuer differs") -> list[str]:
    """AUTH-ASM-08: advertised as JSON true, and issuer identification met (the identical issuer); ``why`` says
    what the host does instead (the live check passes its redirect choice)."""
    value = meta.document.get("authorization_response_iss_parameter_supported")
    if value is not True:
        return [f"authorization_response_iss_parameter_supported is {value!r}, not true"]
    if not issuer_identification_met(meta):
        return [f"issuer identification is not met although the parameter is advertised: {why}"]
    return []


def as_metadata(document: Any, *, issuer: str | None = None, client_id: str | None = None) -> list[Verdict]:
    """Authorization server metadata. ``issuer``: the URL the PRM lists in ``authorization_servers``."""
    rules = ("AUTH-ASM-02", "AUTH-ASM-03", "AUTH-ASM-04", "AUTH-ASM-05", "AUTH-ASM-06", "AUTH-ASM-08")
    if bad := _object(document, "authorization server metadata"):
        return [judged(r, bad) for r in rules]
    published = document.get("issuer")
    expected = issuer if issuer is not None else published if isinstance(published, str) else ""
    meta = AsMetadata(expected_issuer=expected, url="the document", via="offline", document=dict(document))
    issuer_problems = meta.issuer_problems()
    needs_issuer = None if issuer is not None else "the issuer listed in authorization_servers (--issuer)"
    verdicts = [
        judged("AUTH-ASM-02", issuer_problems, unjudged=needs_issuer),
        judged("AUTH-ASM-03", s256_problems(document)),
        judged("AUTH-ASM-04", endpoint_https_problems(document)),
        judged("AUTH-ASM-05", identification_problems(document, client_id=client_id)),
        judged("AUTH-ASM-06", auth_method_problems(document)),
        judged("AUTH-ASM-08", iss_parameter_problems(meta)),
    ]
    if notes := auth_method_notes(document):
        verdicts[4] = noted(verdicts[4], "reported: " + "; ".join(notes))
    if issuer is None and verdicts[-1].status is Status.PASSED:
        verdicts[-1] = skipped("AUTH-ASM-08", f"needs {needs_issuer} (issuer identification)")
    return verdicts


# ------------------------------------------------------------------------------------------------- CIMD


def cimd_problems(document: Any, *, url: str | None = None) -> list[str]:
    """A client ID metadata document as a host publishes it (the bundled schema), whose ``client_id`` is the URL
    it is served at: what an authorization server must accept without registration (AUTH-CIMD-01)."""
    problems = schema_problems(document, "cimd")
    if isinstance(document, Mapping) and url is not None and document.get("client_id") != url:
        problems.append(f"client_id {document.get('client_id')!r} is not the document's URL {url!r}")
    return problems


def cimd_jwks_problems(document: Any) -> list[str]:
    """AUTH-CIMD-02: a document offering private_key_jwt says where its keys are, at ``{url}/oauth/jwks.json``."""
    if not isinstance(document, Mapping):
        return []
    methods = document.get("token_endpoint_auth_methods_supported")
    if not (isinstance(methods, list) and "private_key_jwt" in methods):
        return []
    jwks_uri = document.get("jwks_uri")
    if not isinstance(jwks_uri, str) and not isinstance(document.get("jwks"), Mapping):
        return ["private_key_jwt is offered but the document has neither jwks_uri nor jwks"]
    client_id = document.get("client_id")
    if isinstance(jwks_uri, str) and isinstance(client_id, str):
        base = client_id.rsplit("/oauth/", 1)[0] if "/oauth/" in client_id else client_id.rsplit("/", 1)[0]
        if jwks_uri != f"{base}/oauth/jwks.json":
            return [f"jwks_uri {jwks_uri!r} is not {base}/oauth/jwks.json"]
    return []


def cimd(document: Any, *, url: str | None = None) -> list[Verdict]:
    return [
        judged(
            "AUTH-CIMD-01", cimd_problems(document, url=url), unjudged=None if url else "the document's URL (--url)"
        ),
        judged("AUTH-CIMD-02", cimd_jwks_problems(document)),
    ]


def jwks_problems(document: Any) -> list[str]:
    """A JWKS the host publishes for private_key_jwt: public signing keys only, each with ``kid`` and ``kty``."""
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list) or not document["keys"]:
        return ["a JWKS must be an object with a non-empty `keys` array"]
    problems = []
    for i, key in enumerate(document["keys"]):
        if not isinstance(key, Mapping) or not isinstance(key.get("kty"), str) or not isinstance(key.get("kid"), str):
            problems.append(f"keys[{i}] needs string kty and kid")
        elif any(k in key for k in ("d", "p", "q", "dp", "dq", "qi", "k")):
            problems.append(f"keys[{i}] ({key['kid']}) publishes private key material")
    return problems


def jwks(document: Any) -> list[Verdict]:
    return [judged("AUTH-CIMD-02", jwks_problems(document))]


# -------------------------------------------------------------------------------------------- challenges


def scope_problems(challenge: Challenge | None) -> list[str]:
    """AUTH-PRM-06 on a 401's Bearer challenge: it names scopes (whether they are published is reported:
    ``unlisted_scopes``)."""
    if challenge is None:
        return ["no Bearer challenge on a 401 (unauthenticated or invalid token), so no `scope` to read"]
    if not challenge.get("scope"):
        return ['the 401 challenge carries no scope="..." parameter']
    return []


def unlisted_scopes(challenge: Challenge | None, scopes_supported: Any) -> str | None:
    """What AUTH-PRM-06 reports without judging: challenge scopes missing from a published ``scopes_supported``."""
    scope = challenge.get("scope") if challenge is not None else None
    if not scope or not isinstance(scopes_supported, list):
        return None
    unknown = [s for s in scope.split() if s not in scopes_supported]
    return f"challenge scopes {unknown} are not in scopes_supported {scopes_supported} (reported)" if unknown else None


def challenge_problems(value: str) -> tuple[list[str], list[str]]:
    """A 401's ``WWW-Authenticate`` value: AUTH-PRM-05 (a parseable Bearer challenge with resource_metadata) and
    AUTH-PRM-06 (it names scopes) problems."""
    try:
        found = bearer_challenges(value)
    except ChallengeParseError as exc:
        found, why = [], f" ({exc})"
    else:
        why = ""
    if not found:
        # Say which: a Bearer challenge the header holds but that does not parse is not "no Bearer challenge".
        said = f"the Bearer challenge does not parse{why}" if why else "no Bearer challenge"
        return [f"no parseable Bearer challenge{why} (WWW-Authenticate: {value[:120]!r})"], [said]
    first = found[0]
    prm05 = [] if first.get("resource_metadata") else ["the Bearer challenge has no resource_metadata parameter"]
    return prm05, scope_problems(first)


def challenge(value: Any, *, scopes_supported: Sequence[str] | None = None) -> list[Verdict]:
    if not isinstance(value, str):
        return [judged("AUTH-PRM-05", [f"a challenge is header text, got {type(value).__name__}"])]
    prm05, prm06 = challenge_problems(value.strip())
    verdict = judged("AUTH-PRM-06", prm06)
    if not prm06 and scopes_supported is not None:
        note = unlisted_scopes(bearer_challenges(value.strip())[0], list(scopes_supported))
        verdict = Verdict(verdict.rule, verdict.status, note) if note else verdict
    return [judged("AUTH-PRM-05", prm05), verdict]


# ------------------------------------------------------------------------------------------------- tools


def _tools_of(document: Any) -> Any:
    """A tools/list result (``{"tools": [...]}``) or the bare array."""
    return document.get("tools") if isinstance(document, Mapping) else document


def tools_list(document: Any, *, vendor: str = "openai") -> list[Verdict]:
    """A tools/list result: AUTH-TOOL-01, 02, 06 (the declaration rules; 03/04/05 need calls) and the profile
    tool's declaration rules PROF-01 … 05."""
    from conformance.judges.profile import declaration

    checker = DeclarationChecker(vendor=vendor)
    problems = checker.check_tools(_tools_of(document))
    verdicts = [
        judged(rule, [describe(p for p in problems if p.rule == rule)] if any(p.rule == rule for p in problems) else [])
        for rule in ("AUTH-TOOL-01", "AUTH-TOOL-02", "AUTH-TOOL-06")
    ]
    tools = _tools_of(document)
    listed = tools if isinstance(tools, list) else []
    undescribed = [str(t.get("name")) for t in listed if isinstance(t, Mapping) and "description" not in t]
    if undescribed:
        verdicts[0] = noted(verdicts[0], f"tools without a description (reported): {undescribed}")
    return verdicts + declaration(listed, vendor=vendor)


def tool_result(document: Any, *, tool: Mapping[str, Any] | None = None, vendor: str = "openai") -> list[Verdict]:
    """A tools/call result. An error result (``isError: true``) is judged as an in-call auth failure
    (AUTH-CHAL-01); any other against its tool's outputSchema (AUTH-TOOL-05, ``tool`` = its declaration)."""
    result = document.get("result", document) if isinstance(document, Mapping) and "tool" in document else document
    if tool is None and isinstance(document, Mapping) and isinstance(document.get("tool"), Mapping):
        tool = document["tool"]
    if isinstance(result, Mapping) and result.get("isError") is True:
        return [judged("AUTH-CHAL-01", [describe(check_challenge_result(result).problems)])]
    checker = DeclarationChecker(vendor=vendor)
    name = "tool"
    if tool is not None:
        checker.check_tools([tool])
        name = str(tool.get("name"))
    problems = checker.check_result(name, result)
    unjudged = None if tool is not None or problems else "the tool's declaration (its outputSchema)"
    return [judged("AUTH-TOOL-05", [describe(problems)] if problems else [], unjudged=unjudged)]


# ------------------------------------------------------------------------------------ authorization responses


def response_iss_problems(callback: CallbackParams, issuer: str, what: str) -> list[str]:
    """AUTH-ISS-01 (success) / ISS-02 (error): with iss advertised, the response carries ``iss`` = the issuer."""
    if callback.iss is None:
        return [f"{what} has no iss although the metadata advertises it"]
    if callback.iss != issuer:
        return [f"{what}'s iss {callback.iss!r} is not the issuer {issuer!r}"]
    return []


def authorization_response(document: Any, *, issuer: str | None = None, iss_advertised: bool = True) -> list[Verdict]:
    """A redirect to the host's callback (the URL the authorization server sent the browser to). ``issuer``: the
    issuer the request went to; ``iss_advertised``: whether its metadata says
    ``authorization_response_iss_parameter_supported: true``."""
    if not isinstance(document, str) or ("?" not in document and "#" not in document):
        return [judged("AUTH-ISS-01", ["an authorization response is the redirect URL with its query"])]
    callback = parse_callback(document.strip())
    rule = "AUTH-ISS-02" if callback.is_error else "AUTH-ISS-01"
    if not callback.is_error and not callback.code:
        return [judged("AUTH-ISS-01", ["the response carries neither code nor error"])]
    if not iss_advertised:
        return [skipped(rule, "needs authorization_response_iss_parameter_supported: true (AUTH-ASM-08)")]
    if issuer is None:
        return [skipped(rule, "needs the issuer the request went to (--issuer)")]
    what = f"the error response ({callback.error})" if callback.is_error else "the authorization response"
    return [judged(rule, response_iss_problems(callback, issuer, what))]
