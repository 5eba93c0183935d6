"""Login steps (the steps file), test credentials, and the errors of a login."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from conformance.core._exceptions import ConfigError, TargetError

Decision = Literal["approve", "deny"]
DriverKind = Literal["form", "browser", "manual"]
DEFAULT_USER_ENV = "CONFORMANCE_TEST_USER"
DEFAULT_PASSWORD_ENV = "CONFORMANCE_TEST_PASSWORD"
MAX_PAGES = 25
MAX_STEP_REPEATS = 3


class LoginError(TargetError):
    """The login could not reach the redirect URI: the page had no applicable step, a step repeated, the flow left
    the authorization server, or the wait ran out. The message says where it stopped."""


class MissingCredentials(ConfigError):
    """A test credential's environment variable is not set."""

    def __init__(self, variable: str) -> None:
        super().__init__(f"the test account credential variable {variable} is not set")
        self.variable = variable


class BrowserUnavailable(ConfigError):
    """Playwright or Chromium is not installed."""


# -- steps -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str

    @classmethod
    def from_env(cls, user_env: str = DEFAULT_USER_ENV, password_env: str = DEFAULT_PASSWORD_ENV) -> Credentials:
        values = []
        for name in (user_env, password_env):
            value = os.environ.get(name)
            if not value:
                raise MissingCredentials(name)
            values.append(value)
        return cls(values[0], values[1])


@dataclass(frozen=True)
class LoginStep:
    name: str
    match: str = ".*"  # regex searched in the page URL
    form: str | None = None  # selector of the form to use (default: the form holding the fill fields / click)
    fill: dict[str, str] = field(default_factory=dict)  # field (name, id or selector) → value template
    click: str | None = None  # a submit button or input in the form, or a link, to activate
    submit: bool = True  # without click: submit the form (its first submit button counts as clicked)
    requires: str | None = None  # a selector that must match on the page
    contains: str | None = None  # text that must be in the page
    decision: Decision | None = None  # only when approving / only when denying; None = always

    @classmethod
    def from_dict(cls, data: dict[str, Any], index: int) -> LoginStep:
        if not isinstance(data, dict):
            raise ConfigError(f"login step {index + 1}: expected a [[steps]] table, got {data!r:.40}")
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"login step {index + 1}: unknown keys {sorted(unknown)}")
        if data.get("decision") not in (None, "approve", "deny"):
            raise ConfigError(f"login step {index + 1}: decision must be approve or deny")
        wrong = [k for k in ("name", "match", "form", "click", "requires", "contains") if k in data]
        wrong = [k for k in wrong if not isinstance(data[k], str)]
        if wrong or not isinstance(data.get("submit", True), bool):
            raise ConfigError(f"login step {index + 1}: {', '.join(wrong) or 'submit'} has the wrong type")
        fill = data.get("fill", {})
        if not isinstance(fill, dict) or not all(isinstance(v, str) for v in fill.values()):
            raise ConfigError(f"login step {index + 1}: fill must be a table of strings")
        try:
            re.compile(str(data.get("match", ".*")))
        except re.error as exc:
            raise ConfigError(f"login step {index + 1}: bad match regex ({exc})") from None
        return cls(**{**data, "name": str(data.get("name") or f"step {index + 1}"), "fill": dict(fill)})


@dataclass(frozen=True)
class LoginSteps:
    steps: tuple[LoginStep, ...]
    user_env: str = DEFAULT_USER_ENV
    password_env: str = DEFAULT_PASSWORD_ENV

    @classmethod
    def parse(cls, data: dict[str, Any], origin: str = "login steps") -> LoginSteps:
        raw = data.get("steps")
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"{origin}: needs a non-empty [[steps]] array")
        for key in ("user_env", "password_env"):
            if key in data and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(data[key])):
                raise ConfigError(f"{origin}: {key} must name an environment variable")
        return cls(
            steps=tuple(LoginStep.from_dict(s, i) for i, s in enumerate(raw)),
            user_env=str(data.get("user_env", DEFAULT_USER_ENV)),
            password_env=str(data.get("password_env", DEFAULT_PASSWORD_ENV)),
        )

    @classmethod
    def load(cls, path: Path | str) -> LoginSteps:
        try:
            data = tomllib.loads(Path(path).read_text("utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read login steps {path}: {exc}") from None
        return cls.parse(data, str(path))

    @classmethod
    def default(cls) -> LoginSteps:
        """The bundled steps for the reference IdP (``conformance/suites/auth/login_steps.toml``)."""
        text = resources.files("conformance").joinpath("suites", "auth", "login_steps.toml").read_text("utf-8")
        return cls.parse(tomllib.loads(text), "bundled login_steps.toml")

    def credentials(self) -> Credentials:
        return Credentials.from_env(self.user_env, self.password_env)


def resolve_value(template: str, credentials: Credentials | None) -> str:
    if template in ("{user}", "{password}"):
        if credentials is None:
            raise MissingCredentials(DEFAULT_USER_ENV if template == "{user}" else DEFAULT_PASSWORD_ENV)
        return credentials.user if template == "{user}" else credentials.password
    if template.startswith("env:"):
        name = template[4:]
        value = os.environ.get(name)
        if value is None:
            raise MissingCredentials(name)
        return value
    return template
