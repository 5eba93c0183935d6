"""The targets a run certifies and the suites that certify them: one declarative table, read by everything else.

A *target kind* is a service under test (the MCP tool server, the platform API sandbox, the image compression
sandbox): the setting that names its URL (hence its command-line option, environment variable, the CLI's
``--*-url`` flags, the GitHub workflow ``conformance init`` writes and the plugin's ``<name>_target`` fixture), its
API key if it has one, the cheap request the preflight probes it with, and the reference service that plays it in the
embedded stack. A *suite* certifies one target kind; the order of :data:`SUITES` is the contract's order (reports
list suites in it). :data:`REFERENCE_SERVICES` are the embedded stack's service packages, those that play a target
and those they need, in the order the stack starts them. The request timeouts every target gets by default are here
too.

Imports nothing of the package (the layering test keeps it so): the catalog, the configuration, the plugin, the
CLI, the preflight and the reference stack all read it; ``tests/core/test_targets.py`` adds a row and follows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


def env_var(setting: str) -> str:
    """The environment variable of a setting (``target_url`` → ``CONFORMANCE_TARGET_URL``)."""
    return "CONFORMANCE_" + setting.upper()


def cli_flag(setting: str) -> str:
    """The command-line option of a setting (``target_url`` → ``--target-url``)."""
    return "--" + setting.replace("_", "-")


@dataclass(frozen=True)
class Timeouts:
    """Seconds a request may take: to connect, to wait for each read, in total including retries."""

    connect: float = 5.0
    read: float = 20.0
    total: float = 60.0


TIMEOUTS = Timeouts()  # the defaults of the connect_timeout, read_timeout and total_timeout settings


@dataclass(frozen=True)
class TargetKind:
    """A kind of service under test."""

    name: str  # tool_server, platform, compression
    label: str  # "the MCP tool server": how option help and messages name it
    url_setting: str  # the setting holding its URL
    url_help: str
    service: str  # the reference service package that plays it (conformance.reference.<service>)
    example_url: str  # what ``conformance init`` writes as the commented-out example of its URL
    api_key_setting: str | None = None  # the secret setting holding its API key, if it takes one
    key_scheme: str = "bearer"  # how the API key is presented: bearer, or basic (user "api")
    # The preflight's cheap request with the API key ("METHOD /path?query", sent with an empty body): answered
    # neither 401/403 nor 429/5xx, the key is accepted. None: the tool server's own probes (MCP, discovery, login).
    probe: str | None = None

    @property
    def flag(self) -> str:
        return cli_flag(self.url_setting)

    @property
    def env(self) -> str:
        return env_var(self.url_setting)

    @property
    def api_key_env(self) -> str | None:
        return env_var(self.api_key_setting) if self.api_key_setting else None

    @property
    def input(self) -> str:
        """The GitHub action's input (and ``conformance init``'s workflow key) that carries its URL."""
        return self.flag.removeprefix("--")

    @property
    def fixture(self) -> str:
        """The name of the plugin's fixture that gives checks this target (``platform_target``)."""
        return f"{self.name}_target"

    @property
    def need(self) -> str:
        """What a run without it lacks, as a skipped check says it."""
        return f"a {self.name.replace('_', ' ')} to certify"


@dataclass(frozen=True)
class ReferenceService:
    """A service package of the embedded stack (``conformance/reference/<name>/``) and those it cannot run without."""

    name: str
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Suite:
    """A suite of checks (``conformance/suites/<name>/``) and the target kind it certifies."""

    name: str
    target: TargetKind
    services: tuple[str, ...]  # reference service packages the embedded stack starts for it


TOOL_SERVER = TargetKind(
    "tool_server",
    label="the MCP tool server",
    url_setting="target_url",
    url_help="URL of the MCP tool server to certify",
    service="toolserver",
    example_url="https://mcp.example.com/mcp",
)
PLATFORM = TargetKind(
    "platform",
    label="the platform sandbox",
    url_setting="platform_url",
    url_help="base URL of the platform API sandbox",
    service="platform",
    example_url="https://sandbox.example.com",
    api_key_setting="platform_api_key",
    probe="GET /v1/campaigns?limit=1",
)
COMPRESSION = TargetKind(
    "compression",
    label="the compression sandbox",
    url_setting="compression_url",
    url_help="base URL of the image compression sandbox",
    service="compression",
    example_url="https://images.example.com",
    api_key_setting="compression_api_key",
    key_scheme="basic",
    probe="POST /shrink",  # no image: a sandbox refuses it with 400
)

TARGETS: Mapping[str, TargetKind] = MappingProxyType({t.name: t for t in (TOOL_SERVER, PLATFORM, COMPRESSION)})

# In the contract's order.
SUITES: tuple[Suite, ...] = (
    Suite("auth", TOOL_SERVER, services=("toolserver",)),
    Suite("profile", TOOL_SERVER, services=("toolserver",)),
    Suite("platform", PLATFORM, services=("platform",)),
    Suite("campaigns", PLATFORM, services=("platform",)),
    Suite("compression", COMPRESSION, services=("compression",)),
)

# The embedded stack's services, in the order it starts them: those that play a target, the authorization server
# (idp) the tool server needs, and the rewriting proxy in front of it (started only for a proxy mutant).
REFERENCE_SERVICES: tuple[ReferenceService, ...] = (
    ReferenceService("platform"),
    ReferenceService("compression"),
    ReferenceService("toolserver", requires=("idp",)),
    ReferenceService("idp"),
    ReferenceService("proxy", requires=("idp",)),
)

# -- views of the table, for the places that ask one question ------------------------------------------------------

SUITE_NAMES: tuple[str, ...] = tuple(s.name for s in SUITES)
SUITE_TARGET: Mapping[str, str] = MappingProxyType({s.name: s.target.name for s in SUITES})
SUITE_SERVICES: Mapping[str, tuple[str, ...]] = MappingProxyType({s.name: s.services for s in SUITES})
# (command-line option, environment variable) that supply a target kind's URL; the variable of its API key.
TARGET_OPTION: Mapping[str, tuple[str, str]] = MappingProxyType({t.name: (t.flag, t.env) for t in TARGETS.values()})
API_KEY_OPTION: Mapping[str, str] = MappingProxyType(
    {t.name: t.api_key_env for t in TARGETS.values() if t.api_key_env is not None}
)
SERVICE_PACKAGES: tuple[str, ...] = tuple(s.name for s in REFERENCE_SERVICES)
SERVICE_REQUIRES: Mapping[str, tuple[str, ...]] = MappingProxyType({s.name: s.requires for s in REFERENCE_SERVICES})


def suites_of(target: str) -> frozenset[str]:
    """The suites that certify a target kind."""
    return frozenset(s.name for s in SUITES if s.target.name == target)


def suite_rank(name: str) -> int:
    """A suite's place in the contract's order (unknown suites last), for sorting."""
    return SUITE_NAMES.index(name) if name in SUITE_NAMES else len(SUITE_NAMES)
