"""Reference platform sandbox: token counting, rate limits and advertising campaigns on SQLite.

``create_app(data_dir, settings=..., mutants=...)`` builds the Starlette app; ``python -m
conformance.reference.platform`` serves it (see ``__main__``); ``services(ctx)`` tells the stack how to
start it and which settings a conformance run needs.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from conformance.reference._service import ServiceSpec, StackContext, service_argv
from conformance.reference.platform.mutants import MUTANTS
from conformance.reference.platform.seeds import CONFLICT_AUDIENCE_ID
from conformance.reference.platform.settings import FAULT_KEY, MAIN_KEY, THROTTLE_KEY

if TYPE_CHECKING:
    from conformance.reference.platform.app import create_app

__all__ = ["create_app", "run_settings", "services"]

# What the sandbox's process imports. The stack, which imports this package for its specs, starts the sandbox
# without importing them (its process would only wait on them); a missing one still fails here, as its import would.
REQUIRES = ("starlette", "uvicorn", "PIL", "bpe_openai")
for _name in REQUIRES:
    if importlib.util.find_spec(_name) is None:
        raise ModuleNotFoundError(f"No module named '{_name}'", name=_name)


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from conformance.reference.platform.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_settings(base_url: str) -> dict[str, str]:
    """The NAME=VALUE settings (environment variables) a conformance run against this sandbox needs."""
    return {
        "CONFORMANCE_PLATFORM_URL": base_url,
        "CONFORMANCE_PLATFORM_API_KEY": MAIN_KEY,
        "CONFORMANCE_PLATFORM_THROTTLE_API_KEY": THROTTLE_KEY,
        "CONFORMANCE_PLATFORM_FAULT_API_KEY": FAULT_KEY,
        "CONFORMANCE_PLATFORM_PROJECT_TOKEN_LIMIT_KEYS": "main",  # settings.DEFAULT_KEYS: only the main key
        "CONFORMANCE_CAMPAIGNS_CONFLICT_AUDIENCE_ID": CONFLICT_AUDIENCE_ID,
        "CONFORMANCE_CAMPAIGNS_CONVERSION_EVENT_SETTING_IDS": "ces_purchase,ces_signup",
        "CONFORMANCE_CAMPAIGNS_LOCATION_ID": "loc_us_ca",
    }


def services(ctx: StackContext) -> list[ServiceSpec]:
    port = ctx.port()
    base_url = f"https://{ctx.host}:{port}"
    argv = [
        *service_argv("conformance.reference.platform", ctx, port, data_dir=ctx.data_dir / "platform"),
    ]
    if ctx.request_limit is not None:
        argv += ["--request-limit", str(ctx.request_limit[0]), "--window", str(ctx.request_limit[1])]
    argv += ctx.mutant_args(MUTANTS)
    return [
        ServiceSpec(
            name="platform",
            argv=argv,
            health_url=f"{base_url}/healthz",
            settings=run_settings(base_url),
        )
    ]
