"""Fleets: several named targets certified in one run, read from a targets file.

A targets file (TOML, the ``targets_file`` setting) lists named targets, each possibly of the same kinds as the
others (three vendors' platform sandboxes, say)::

    [[target]]
    name = "acme"                                   # letters, digits, _ ; shown in test ids and report rows
    env_prefix = "ACME_"                            # secrets from ACME_PLATFORM_API_KEY ... (default: NAME_)
    platform_url = "https://sandbox.acme.example/v1"
    [target.settings]                               # any non-secret, per-target setting
    platform_model = "gpt-4o-mini"

Each named target gets its own :class:`~conformance.config.Settings`: the run's settings without any target URL or
secret, then its URLs, its settings and the secrets read from the environment under its prefix (the name of a
secret setting upper-cased: ``platform_api_key`` -> ``ACME_PLATFORM_API_KEY``). A secret never comes from the file.
Run-wide settings (the report, the baseline, strictness, the suites) cannot differ per target.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance._exceptions import ConfigError
from conformance.config import Settings, _load_toml, all_options, convert, validate
from conformance.targets import TARGETS

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
