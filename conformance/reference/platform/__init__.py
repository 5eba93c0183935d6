"""Reference platform sandbox: token counting, rate limits and advertising campaigns on SQLite.

``create_app(data_dir, settings=..., mutants=...)`` builds the Starlette app; ``python -m
conformance.reference.platform`` serves it (see ``__main__``); ``services(ctx)`` tells the stack how to
start it and which settings a conformance run needs.
"""

from __future__ import annotations

from conformance.reference._service import ServiceSpec, StackContext, service_argv
from conformance.reference.platform.app import create_app
from conformance.reference.platform.mutants import MUTANTS
from conformance.reference.platform.seeds import CONFLICT_AUDIENCE_ID
from conformance.reference.platform.settings import FAULT_KEY, MAIN_KEY, THROTTLE_KEY

__all__ = ["create_app", "run_settings", "services"]


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
