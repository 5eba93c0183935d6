"""ACME's own tests of its tool server, run in the same conformance run (and report) as the built-in suites.

Copy this file beside your configuration and run ``pytest test_acme_tools.py`` with your conformance settings
(``CONFORMANCE_TARGET_URL`` and the test account, or conformance.toml): the harness links the test account once,
and these checks use the host's real MCP session with that account's token. The project's own tests run this very
file against the embedded reference stack (tests/pytest/test_vendor.py); see docs/vendor-tests.md.
"""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession

from conformance import expect, judges, observe, rule
from conformance.config import Target
from conformance.host.async_http import AsyncHostHTTP
from conformance.host.discovery import prm_urls
from conformance.pytest.vendor import register_rule

# Extension rules: X-<VENDOR>-<NN>, with a level and a text; they appear in report.json and report.html.
register_rule(
    "X-ACME-01",
    "MUST",
    "list_orders, called as the linked account, returns orders that validate against its outputSchema.",
)
register_rule("X-ACME-02", "SHOULD", "The protected resource metadata names the MCP endpoint as its resource.")


def wire(model: Any) -> dict[str, Any]:
    """An SDK model as it was on the wire (camelCase), for the offline validators."""
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


@rule("X-ACME-01")
async def test_orders_as_the_linked_account(host_mcp_session: ClientSession) -> None:
    listing = await host_mcp_session.list_tools()
    tools = {tool.name: tool for tool in listing.tools}
    expect("list_orders" in tools, f"no list_orders tool among {sorted(tools)}")
    result = await host_mcp_session.call_tool("list_orders", {})
    expect(not result.is_error, f"list_orders failed for the linked account: {wire(result)}")
    # The same validator the built-in AUTH-TOOL-05 check uses, offline, on what the session returned.
    verdicts = judges.tool_result({"tool": wire(tools["list_orders"]), "result": wire(result)})
    broken = [f"{v.rule}: {v.message}" for v in verdicts if v.status != "passed"]
    expect(not broken, "; ".join(broken))
    observe(f"{len((result.structured_content or {}).get('orders', []))} orders")


@rule("X-ACME-02")
async def test_metadata_names_the_endpoint(async_host_http: AsyncHostHTTP, tool_server_target: Target) -> None:
    response = await async_host_http.get(prm_urls(tool_server_target.base_url)[0])
    expect(response.status_code == 200, f"the metadata answered {response.status_code}")
    verdicts = {v.rule: v for v in judges.prm(response.json(), resource=tool_server_target.base_url)}
    expect(verdicts["AUTH-PRM-02"].status == "passed", verdicts["AUTH-PRM-02"].message)
