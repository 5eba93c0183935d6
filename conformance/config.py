"""Settings: one typed object built from the command line, the environment and configuration files.

Precedence, highest first: command-line option > environment variable > ``conformance.toml`` (or the file named by
``--conformance-config``) > ``[tool.conformance]`` in ``pyproject.toml`` > pytest ini key ``conformance_<name>`` >
default. Secrets (API keys, passwords) have no command-line option: environment or configuration file only.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import ssl
import tempfile
import tomllib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from conformance.core._exceptions import ConfigError
from conformance.core.targets import SUITE_NAMES as SUITES
from conformance.core.targets import SUITES as SUITE_TABLE
from conformance.core.targets import TARGETS, TIMEOUTS
from conformance.host import shown_url
from conformance.host.fanout import AUTO, AUTO_CHECKS_AT_ONCE, DEFAULT_CONCURRENCY, MAX_CONCURRENCY

Kind = Literal["str", "bool", "int", "count", "float", "path", "list", "url"]
# A validator of a converted value: raises ValueError or ConfigError saying what is wrong with it.
Check = Callable[[Any], None]


@dataclass(frozen=True)
class OptionSpec:
    """One setting. ``flag`` is the command-line option (None for secrets); ``env`` its environment variable.
    ``check`` validates a set value before the first request (see the validators below)."""

    name: str
    help: str
    kind: Kind = "str"
    default: Any = None
    secret: bool = False
    flag: str | None = None
    env: str | None = None
    check: Check | None = None

    @property
    def cli_flag(self) -> str | None:
        if self.secret:
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def env_var(self) -> str:
        return self.env or "CONFORMANCE_" + self.name.upper()


# -- validators (declared beside the options they check; run by resolve() on every value that is set) ----------


def at_least(low: float, *, above: bool = False) -> Check:
    """A finite number >= ``low`` (> ``low`` with ``above``)."""

    def check(value: Any) -> None:
        if not math.isfinite(value) or value < low or (above and value == low):
            raise ValueError(f"{value!r} is not a number {'above' if above else 'of at least'} {low:g}")

    return check


positive = at_least(0, above=True)
non_negative = at_least(0)


def in_range(low: int, high: int) -> Check:
    def check(value: Any) -> None:
        if not low <= value <= high:
            raise ValueError(f"{value!r} is not between {low} and {high}")

    return check


def auto_or(check: Check) -> Check:
    """``auto``, or a value ``check`` accepts."""

    def checked(value: Any) -> None:
        if value != AUTO:
            check(value)

    return checked


def one_of(*choices: str) -> Check:
    def check(value: Any) -> None:
        if value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(choices)}")

    return check


def existing_file(value: Any) -> None:
    path = Path(value)
    if not path.exists():
        raise ValueError(f"{path} does not exist")
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None


def existing_dir(value: Any) -> None:
    path = Path(value)
    if not path.is_dir():
        raise ValueError(f"{path} is not a directory" if path.exists() else f"{path} does not exist")


def pem_certificates(value: Any) -> None:
    """A readable PEM file holding at least one certificate (what TLS verification will load)."""
    existing_file(value)
    try:
        # a bare context: the same parsing of the file, without loading the system trust store (the costly part)
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=str(value))
    except (ssl.SSLError, ValueError) as exc:
        raise ValueError(f"{value} is not a PEM file of CA certificates ({exc})") from None


def pem_private_key(value: Any) -> None:
    """A readable, unencrypted PEM private key."""
    existing_file(value)
    from cryptography.hazmat.primitives import serialization

    try:
        serialization.load_pem_private_key(Path(value).read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{value} is not an unencrypted PEM private key ({exc})") from None


REPORT_FORMATS = ("json", "html", "har", "sarif")  # report.json, report.html, report.har, report.sarif
DEFAULT_REPORT_FORMATS = ("json", "html", "har")  # SARIF is asked for (code scanning), not written by default


def report_formats(value: Any) -> None:
    unknown = [item for item in value if item not in REPORT_FORMATS]
    if unknown:
        raise ValueError(f"unknown report format {', '.join(unknown)} (known: {', '.join(REPORT_FORMATS)})")


def check_report_dir(directory: Path, origin: str = "default") -> None:
    """The report directory can be created and written (checked before the run, not after it)."""
    probe = directory
    while not probe.exists() and probe.parent != probe:  # the nearest existing ancestor decides
        probe = probe.parent
    if not probe.is_dir():
        where = "is a file" if probe == directory else f"is under {probe}, which is a file"
        raise ConfigError(f"report_dir from {origin}: {directory} {where}, reports cannot be written there")
    try:  # really try: os.access says yes to root on a read-only mount
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        problem = f"is not writable (cannot create a file in {probe}: {reason})"
        raise ConfigError(f"report_dir from {origin}: {directory} {problem}") from None


def target_options() -> list[OptionSpec]:
    """Each target kind's URL (and API key) setting, from the table in ``conformance.core.targets``."""
    options: list[OptionSpec] = []
    for kind in TARGETS.values():
        suites = [s.name for s in SUITE_TABLE if s.target is kind]
        which = f"suite{'s' if len(suites) > 1 else ''} {', '.join(suites)}"
        options.append(OptionSpec(kind.url_setting, f"{kind.url_help} ({which})", kind="url"))
        if kind.api_key_setting:
            options.append(OptionSpec(kind.api_key_setting, f"API key for {kind.label}", secret=True))
    return options


CORE_OPTIONS: list[OptionSpec] = [
    *target_options(),
    OptionSpec("suite", "comma-separated suites to run (default: all)", kind="list"),
    OptionSpec(
        "report_dir", "directory for report.json, report.html, report.har and junit.xml", kind="path", default="reports"
    ),
    OptionSpec(
        "report_formats",
        "comma-separated reports to write: json (always written), html, har, sarif (default: json,html,har)",
        kind="list",
        default=list(DEFAULT_REPORT_FORMATS),
        check=report_formats,
    ),
    OptionSpec("expected_failures", "baseline file (TOML) of rules expected to fail", kind="path", check=existing_file),
    # pytest owns --strict; the plugin reads it as "SHOULD rules fail the run" too.
    OptionSpec("strict", "SHOULD rules fail the run", kind="bool", default=False, flag="--strict"),
    OptionSpec(
        "allow_insecure_loopback",
        "allow http:// and self-signed TLS on 127.0.0.1/::1/localhost only",
        kind="bool",
        default=False,
    ),
    OptionSpec(
        "allow_incomplete",
        "accept a run that did not reach every target it was given (no linked account, no API key): not INCOMPLETE",
        kind="bool",
        default=False,
    ),
    OptionSpec(
        "allow_private_network",
        "allow metadata-driven fetches and redirects to private or link-local addresses",
        kind="bool",
        default=False,
    ),
    OptionSpec("ca_bundle", "PEM file of extra CA certificates to trust", kind="path", check=pem_certificates),
    OptionSpec(
        "mcp_era",
        "which MCP era the host speaks to the tool server: auto (the modern 2026-07-28 protocol when its "
        "server/discover lists it, else the legacy initialize handshake), legacy, modern, or both (the tool "
        "server's checks once per era, each era a named target of its own)",
        default="auto",
        check=one_of("auto", "legacy", "modern", "both"),
    ),
    OptionSpec("connect_timeout", "seconds to connect", kind="float", default=TIMEOUTS.connect, check=positive),
    OptionSpec("read_timeout", "seconds to wait for a response", kind="float", default=TIMEOUTS.read, check=positive),
    OptionSpec(
        "total_timeout",
        "seconds for one request including retries",
        kind="float",
        default=TIMEOUTS.total,
        check=positive,
    ),
    OptionSpec(
        "max_check_time",
        "seconds one check may spend waiting on its targets, all its requests together; "
        "a check that would need more is blocked (target too slow). 0: no bound",
        kind="float",
        default=120.0,
        check=at_least(0),
    ),
    OptionSpec(
        "max_run_time",
        "seconds the whole run may take; once spent no further check starts and the run ends INCOMPLETE "
        "with what was decided (default: no bound)",
        kind="float",
        check=at_least(0, above=True),
    ),
    OptionSpec(
        "max_response_bytes",
        "largest response body read (decoded bytes, counted as they are decoded; reading stops there)",
        kind="int",
        default=16 * 1024 * 1024,
        check=at_least(1),
    ),
    OptionSpec(
        "max_throttle_wait",
        "seconds a run may spend in total waiting for targets' rate limits (window resets, Retry-After; checks "
        "waiting at once count that time once); a check that would need more is blocked",
        kind="float",
        default=600.0,
        check=at_least(0),
    ),
    OptionSpec(
        "concurrency",
        "how many independent checks, and cases of a check (attacks of a table, probes, documents), the host runs "
        f"at once; 1: one after another; auto: {DEFAULT_CONCURRENCY} cases of a check, and {DEFAULT_CONCURRENCY} to "
        f"{AUTO_CHECKS_AT_ONCE} checks, more while the exchanges take about the network's round trip (the host waits "
        "for the network, not for its CPU or the target's) and the machine has a core to spare. Reports and "
        "evidence read in the checks' and cases' order whatever the setting",
        kind="count",
        default=AUTO,
        check=auto_or(in_range(1, MAX_CONCURRENCY)),
    ),
    OptionSpec("run_id", "prefix for objects a run creates (default: random)"),
    OptionSpec(
        "targets_file",
        "fleet: a TOML file of named targets (URLs, settings, secrets' env prefix), certified in one run",
        kind="path",
        check=existing_file,
    ),
    OptionSpec("target_names", "fleet: comma-separated names of targets-file entries to certify", kind="list"),
]


def suite_options() -> list[OptionSpec]:
    """Options declared by the suites in ``conformance/suites/<suite>/options.py``."""
    found: list[OptionSpec] = []
    for suite in SUITES:
        try:
            module = importlib.import_module(f"conformance.suites.{suite}.options")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("conformance.suites"):
                continue
            raise
        found.extend(getattr(module, "OPTIONS", []))
    return found


def all_options() -> list[OptionSpec]:
    """Core and suite options. Suites may share an option (declared identically); conflicting twins are an error."""
    options: dict[str, OptionSpec] = {}
    conflicts: set[str] = set()
    for spec in CORE_OPTIONS + suite_options():
        known = options.setdefault(spec.name, spec)
        if known != spec:
            conflicts.add(spec.name)
    if conflicts:
        raise ConfigError(f"options declared twice with different definitions: {sorted(conflicts)}")
    return list(options.values())


def url_problem(text: str) -> str | None:
    """Why ``text`` is not a URL the host can connect to (None when it is): an absolute http(s) URL with a host
    name, no whitespace or control character, and a port (when given) from 1 to 65535."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return "expected an absolute https:// URL without spaces or control characters"
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return "expected an absolute https:// URL (scheme http or https, with a host)"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        return f"port {parts.netloc.rsplit(':', 1)[-1]!r} is outside 1-65535"
    return None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def convert(spec: OptionSpec, value: Any, origin: str) -> Any:
    """Coerce a raw value (string from env/CLI, or a TOML value) to the option's kind; clear error otherwise."""
    if value is None:
        return None
    try:
        if spec.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError(f"expected true/false, got {value!r}")
        if spec.kind == "int":
            return int(value)
        if spec.kind == "count":  # a number, or auto
            return AUTO if str(value).strip().lower() == AUTO else int(value)
        if spec.kind == "float":
            return float(value)
        if spec.kind == "path":
            return Path(str(value)).expanduser()
        if spec.kind == "list":
            items = value if isinstance(value, list) else str(value).split(",")
            return [str(item).strip() for item in items if str(item).strip()]
        if spec.kind == "url":
            text = str(value).strip()
            problem = url_problem(text)
            if problem:
                raise ValueError(problem)
            return text
        return str(value)
    except (TypeError, ValueError) as exc:
        shown = "<hidden>" if spec.secret else repr(shown_url(str(value)) if spec.kind == "url" else value)
        raise ConfigError(f"{spec.name} from {origin}: cannot read {shown} as {spec.kind} ({exc})") from None


def validate(spec: OptionSpec, value: Any, origin: str) -> None:
    """Run the option's validator on a converted value: a clear one-line error naming option and origin."""
    if spec.check is None or value is None:
        return
    try:
        spec.check(value)
    except (ValueError, TypeError, ConfigError) as exc:
        reason = " ".join(str(exc).split()) if not spec.secret else "invalid value"
        raise ConfigError(f"{spec.name} from {origin}: {reason}") from None


def read_config_files(rootdir: Path, explicit: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Configuration tables in precedence order: explicit file or conformance.toml, then [tool.conformance]."""
    tables: list[tuple[str, dict[str, Any]]] = []
    candidate = explicit or rootdir / "conformance.toml"
    if explicit is not None and not explicit.is_file():
        raise ConfigError(f"configuration file {explicit} does not exist")
    if candidate.is_file():
        tables.append((str(candidate), _load_toml(candidate)))
    pyproject = rootdir / "pyproject.toml"
    if pyproject.is_file():
        table = _load_toml(pyproject).get("tool", {}).get("conformance")
        if isinstance(table, dict):
            tables.append((f"{pyproject} [tool.conformance]", table))
    return tables


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


@dataclass
class Target:
    """One configured service under test."""

    name: str  # tool_server, platform, compression
    base_url: str
    api_key: str | None = None
    scheme: str = "bearer"  # how api_key is presented: bearer, basic (user "api")

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    @property
    def auth(self) -> dict[str, str]:
        if not self.api_key:
            return {}
        if self.scheme == "basic":
            import base64

            token = base64.b64encode(f"api:{self.api_key}".encode()).decode()
            return {"Authorization": f"Basic {token}"}
        return {"Authorization": f"Bearer {self.api_key}"}


@dataclass
class Settings:
    """Resolved settings of one run. ``origins`` says where each value came from (for the report header)."""

    values: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)
    # A fleet run (targets_file): each named target's own settings ("fleets", below), in the file's order.
    fleet: dict[str, Settings] = field(default_factory=dict)
    env_prefix: str = "CONFORMANCE_"  # where this target's secrets are read from

    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name)
        return default if value is None else value

    def __getattr__(self, name: str) -> Any:
        # Attribute access for declared options: settings.target_url, settings.strict ...
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    @property
    def selected_suites(self) -> list[str]:
        chosen = self.values.get("suite") or list(SUITES)
        unknown = [s for s in chosen if s not in SUITES]
        if unknown:
            raise ConfigError(f"unknown suite(s) {unknown}; known: {', '.join(SUITES)}")
        return list(chosen)

    def target(self, name: str) -> Target | None:
        kind = TARGETS.get(name)
        if kind is None:
            raise ConfigError(f"unknown target {name!r}")
        url = self.values.get(kind.url_setting)
        if not url:
            return None
        key = self.values.get(kind.api_key_setting) if kind.api_key_setting else None
        return Target(name, url, key, scheme=kind.key_scheme)

    def targets(self) -> dict[str, Target]:
        """The configured targets by kind; in a fleet run, every named target's as ``name/kind``."""
        if self.fleet:
            return {f"{n}/{k}": t for n, member in self.fleet.items() for k, t in member.targets().items()}
        found = {}
        for name in sorted(TARGETS):
            target = self.target(name)
            if target is not None:
                found[name] = target
        return found

    def secrets(self) -> list[str]:
        """Secret values, for value-based redaction everywhere."""
        specs = {o.name: o for o in all_options()}
        own = [str(v) for k, v in self.values.items() if v and k in specs and specs[k].secret]
        return own + [secret for member in self.fleet.values() for secret in member.secrets()]

    def public(self) -> dict[str, Any]:
        """Values safe to show in a report (secrets replaced by whether they are set)."""
        specs = {o.name: o for o in all_options()}
        shown: dict[str, Any] = {}
        for key, value in self.values.items():
            spec = specs.get(key)
            if spec is not None and spec.secret:
                shown[key] = "<set>" if value else None
            else:
                shown[key] = str(value) if isinstance(value, Path) else value
        return shown


def resolve(
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    files: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ini: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge the sources by precedence into :class:`Settings`."""
    cli = cli or {}
    env = os.environ if env is None else env
    ini = ini or {}
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    options = all_options()
    known = {o.name for o in options}
    for origin, table in files:
        unknown = sorted(set(table) - known)
        if unknown:
            raise ConfigError(f"{origin}: unknown setting(s) {unknown}")
    for spec in options:
        candidates: list[tuple[str, Any]] = []
        if not spec.secret:
            candidates.append((spec.cli_flag or spec.name, cli.get(spec.name)))
        candidates.append((spec.env_var, env.get(spec.env_var)))
        candidates.extend((origin, table.get(spec.name)) for origin, table in files)
        candidates.append((f"ini conformance_{spec.name}", ini.get(spec.name)))
        chosen = next(((o, v) for o, v in candidates if v not in (None, "", [])), None)
        if chosen is None:
            values[spec.name] = convert(spec, spec.default, "default")
            origins[spec.name] = "default"
        else:
            values[spec.name] = convert(spec, chosen[1], chosen[0])
            origins[spec.name] = chosen[0]
        validate(spec, values[spec.name], origins[spec.name])
    if not values.get("run_id"):
        values["run_id"] = "cf" + uuid.uuid4().hex[:8]
        origins["run_id"] = "generated"
    settings = Settings(values, origins)
    if values.get("targets_file"):
        settings.fleet = load_fleet(values["targets_file"], settings, env)
        both = [name for name, member in settings.fleet.items() if member.values.get("mcp_era") == "both"]
        if both:
            raise ConfigError(
                f"mcp_era both with a targets file ({values['targets_file']}: {', '.join(both)}): "
                'give each target the era it is certified in (mcp_era = "legacy" or "modern" in its settings)'
            )
    elif values.get("mcp_era") == "both" and values.get("target_url"):
        settings.fleet = era_fleet(settings)
    elif values.get("target_names"):
        raise ConfigError(f"target_names from {origins['target_names']}: names targets of a targets file, none given")
    return settings


# -- fleets ------------------------------------------------------------------------------------------------------
#
# Fleets: several named targets certified in one run, read from a targets file.
#
# A targets file (TOML, the ``targets_file`` setting) lists named targets, each possibly of the same kinds as the
# others (three vendors' platform sandboxes, say)::
#
#     [[target]]
#     name = "acme"                                   # letters, digits, _ ; shown in test ids and report rows
#     env_prefix = "ACME_"                            # secrets from ACME_PLATFORM_API_KEY ... (default: NAME_)
#     platform_url = "https://sandbox.acme.example/v1"
#     [target.settings]                               # any non-secret, per-target setting
#     platform_model = "gpt-4o-mini"
#
# Each named target gets its own :class:`~conformance.config.Settings`: the run's settings without any target URL or
# secret, then its URLs, its settings and the secrets read from the environment under its prefix (the name of a
# secret setting upper-cased: ``platform_api_key`` -> ``ACME_PLATFORM_API_KEY``). A secret never comes from the file.
# Run-wide settings (the report, the baseline, strictness, the suites) cannot differ per target.

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
URL_SETTINGS = frozenset(kind.url_setting for kind in TARGETS.values())
# One value for the whole run: they shape the run or its report, not how one target is spoken to.
RUN_WIDE = frozenset(
    {
        *("suite", "report_dir", "expected_failures", "strict", "run_id", "targets_file", "target_names"),
        *("max_throttle_wait", "allow_insecure_loopback", "allow_incomplete", "report_formats"),
    }
)
_KEYS = frozenset({"name", "env_prefix", "settings", *URL_SETTINGS})


def secret_env(prefix: str, setting: str) -> str:
    """A named target's secret's variable (``ACME_``, ``platform_api_key`` -> ``ACME_PLATFORM_API_KEY``)."""
    return prefix + setting.upper()


def load_fleet(path: Path, base: Settings, env: Mapping[str, str]) -> dict[str, Settings]:
    """The named targets of a targets file, each with its settings (in the file's order); ConfigError, one line,
    naming the file and the target, on anything wrong."""
    data = _load_toml(path)
    unknown = sorted(set(data) - {"target"})
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {unknown}; a targets file holds [[target]] entries")
    entries = data.get("target")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: no [[target]] entries")
    given_urls = sorted(s for s in URL_SETTINGS if base.values.get(s))
    if given_urls:
        where = ", ".join(f"{s} (from {base.origins.get(s, '?')})" for s in given_urls)
        raise ConfigError(f"{path}: a targets file and {where}: give every URL in the targets file")
    fleet: dict[str, Settings] = {}
    for number, entry in enumerate(entries, 1):
        name = entry.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise ConfigError(f"{path}: target #{number}: name {name!r} is not letters, digits and _ (a letter first)")
        if name in fleet:
            raise ConfigError(f"{path}: target {name!r} is listed twice")
        fleet[name] = _member(path, name, entry, base, env)
    chosen = base.values.get("target_names") or []
    missing = [n for n in chosen if n not in fleet]
    if missing:
        raise ConfigError(f"target_names: {missing} not in {path} (it names {', '.join(fleet)})")
    return {n: s for n, s in fleet.items() if not chosen or n in chosen}


def _member(path: Path, name: str, entry: Mapping[str, Any], base: Settings, env: Mapping[str, str]) -> Settings:
    origin = f"{path} [target {name}]"
    prefix = entry.get("env_prefix", name.upper() + "_")
    if not isinstance(prefix, str) or not PREFIX.match(prefix):
        raise ConfigError(f"{origin}: env_prefix {prefix!r} is not an environment-variable prefix")
    specs = {spec.name: spec for spec in all_options()}
    unknown = sorted(set(entry) - _KEYS)
    secrets = [key for key in unknown if key in specs and specs[key].secret]
    if secrets:  # a secret never comes from the file, wherever in it: say where it does come from
        key = secrets[0]
        raise ConfigError(f"{origin}: {key} is a secret: set {secret_env(prefix, key)} in the environment instead")
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) {unknown}; other settings go in [target.settings]")
    table = entry.get("settings", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: settings is not a table")
    values = dict(base.values)
    origins = dict(base.origins)
    for spec in specs.values():  # no target, no secret inherited from the run: each comes from this entry
        if spec.secret or spec.name in URL_SETTINGS:
            values[spec.name], origins[spec.name] = None, "default"
    for key, raw in [*((k, entry[k]) for k in sorted(URL_SETTINGS & set(entry))), *table.items()]:
        found = specs.get(key)
        if found is None:
            raise ConfigError(f"{origin}: unknown setting {key!r}")
        if found.secret:
            raise ConfigError(f"{origin}: {key} is a secret: set {secret_env(prefix, key)} in the environment instead")
        if key in RUN_WIDE:
            raise ConfigError(f"{origin}: {key} is one setting for the whole run, not per target")
        values[key] = convert(found, raw, origin)
        origins[key] = origin
        validate(found, values[key], origin)
    for spec in specs.values():
        if spec.secret and env.get(secret_env(prefix, spec.name)):
            variable = secret_env(prefix, spec.name)
            values[spec.name], origins[spec.name] = convert(spec, env[variable], variable), variable
            validate(spec, values[spec.name], variable)
    if not any(values.get(s) for s in URL_SETTINGS):
        raise ConfigError(f"{origin}: no URL ({', '.join(sorted(URL_SETTINGS))})")
    return Settings(values, origins, env_prefix=prefix)


def era_fleet(base: Settings) -> dict[str, Settings]:
    """``--mcp-era both``: the tool server as two named targets, ``legacy`` and ``modern``, each certified in that
    MCP era (a rule failing in either fails the run). The other targets (platform, compression) are ``modern``'s
    only, so that their suites, which no MCP era touches, run once."""
    fleet: dict[str, Settings] = {}
    for era in ("legacy", "modern"):
        values, origins = dict(base.values), dict(base.origins)
        values["mcp_era"], origins["mcp_era"] = era, f"{base.origins.get('mcp_era', 'default')} (both)"
        if era == "legacy":
            for setting in URL_SETTINGS - {"target_url"}:
                values[setting], origins[setting] = None, "default"
        fleet[era] = Settings(values, origins, env_prefix=base.env_prefix)
    return fleet
