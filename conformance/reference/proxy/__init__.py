"""Rewriting HTTPS proxy in front of the reference IdP; started only when a proxy mutant is asked for."""

from __future__ import annotations

from typing import Any

from conformance.reference._service import ServiceSpec, StackContext, service_argv
from conformance.reference.idp.layout import auth_layout

__all__ = ["create_app", "services"]


def __getattr__(name: str) -> Any:
    # Keep the stack's import of this package light: the app is only needed in the proxy process.
    if name == "create_app":
        from conformance.reference.proxy.app import create_app

        return create_app
    raise AttributeError(name)


def services(ctx: StackContext) -> list[ServiceSpec]:
    from conformance.reference.proxy.mutants import MUTANTS

    active = [m.name for m in MUTANTS if m.name in ctx.mutants]
    if not active:
        return []
    layout = auth_layout(ctx)
    assert layout.proxy_port is not None  # allocated whenever a proxy mutant is asked for
    argv = [
        *service_argv("conformance.reference.proxy", ctx, layout.proxy_port, data_dir=ctx.data_dir),
        "--ca-file",
        str(ctx.ca_file),
        "--upstream",
        layout.idp_url,
    ]
    for name in active:
        argv += ["--mutant", name]
    # /healthz is forwarded to the IdP: healthy means the whole path works.
    return [ServiceSpec(name="proxy", argv=argv, health_url=f"{layout.proxy_url}/healthz")]
