"""Attack cases only the modern MCP era has, for the checks whose rules they fall under.

In the modern era (2026-07-28) a request's routing headers repeat its body (``Mcp-Method`` the method, ``Mcp-Name``
the tool's name) so that intermediaries can route without parsing it, and a server refuses a request whose headers
and body disagree (HEADER_MISMATCH, -32020). A server (or its gateway) that decides access by a header it never
checks against the body lets an anonymous caller name an open tool in the header and call a closed one in the body.
The legacy era has no routing headers: there the cases do not apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.host import mcp_era
from conformance.host.http import HostHTTP
from conformance.suites._cases import Attack, AttackRun, Unreached
from conformance.suites._tool_access import Listing, is_noauth_only, is_oauth_only, safe_call

ROUTED_NAME = "an anonymous call whose Mcp-Name header names a noauth tool"
ROUTING_SOURCE = (
    "MCP 2026-07-28, Streamable HTTP (Mcp-Name repeats the body's tool name; a mismatch is refused); contract A Auth 6"
)


def routing_attacks() -> tuple[Attack, ...]:
    return (Attack(ROUTED_NAME, ROUTING_SOURCE),)


def try_routed_name(run: AttackRun, http: HostHTTP, url: str, listing: Listing) -> None:
    """Each oauth2-only tool called anonymously with ``Mcp-Name`` naming a noauth-only tool: data back is the case
    failing (a refusal: HTTP 400 HEADER_MISMATCH, 401, an auth error result, is met)."""
    era = mcp_era.known(http, url)
    if era is None:
        run.not_tried(ROUTED_NAME, "the MCP era of the tool server was never settled")
        return
    if not era.modern:
        run.inapplicable(ROUTED_NAME, f"the {era.name} MCP era has no routing headers")
        return
    tools: list[Mapping[str, Any]] = listing.named()
    open_tools = [str(t["name"]) for t in tools if is_noauth_only(t)]
    closed = [t for t in tools if is_oauth_only(t)]
    if not open_tools or not closed:
        run.inapplicable(ROUTED_NAME, "needs a tool declared noauth only and one declared oauth2 only")
        return
    decoy = open_tools[0]
    problems: list[str] = []
    unreached: list[str] = []
    for tool in closed:
        name = str(tool["name"])
        found = safe_call(http, url, tool, headers={mcp_era.NAME_HEADER: decoy})
        if isinstance(found, Unreached):
            unreached.append(f"{name!r}: {found}")
        elif isinstance(found, str):
            problems.append(f"{ROUTED_NAME}: calling {name!r} failed ({found})")
        elif found.returned_data:
            problems.append(f"{ROUTED_NAME} ({decoy!r}): {name!r} is declared oauth2 only but returned data")
    if unreached and len(unreached) == len(closed):
        run.unreached(ROUTED_NAME, "; ".join(unreached))
    else:
        run.tried_case(ROUTED_NAME, "; ".join(problems) or None)
