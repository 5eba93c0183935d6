"""RFC 9110 §11.6.1 ``WWW-Authenticate`` parsing: several challenges, token68, quoted strings with escapes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN68 = r"[A-Za-z0-9\-._~+/]+=*"
_SCHEME_RE = re.compile(rf"\s*({_TOKEN})(?=\s|,|$)")
_PARAM_RE = re.compile(rf"\s*({_TOKEN})\s*=\s*")
_QUOTED_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass
class Challenge:
    scheme: str
    params: dict[str, str] = field(default_factory=dict)  # names lower-cased
    token68: str | None = None

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())


class ChallengeParseError(ValueError):
    pass


def parse_www_authenticate(value: str) -> list[Challenge]:
    """Every challenge in a header value (join repeated header lines with ", " first)."""
    challenges: list[Challenge] = []
    pos = 0
    n = len(value)
    while pos < n:
        while pos < n and value[pos] in " \t,":
            pos += 1
        if pos >= n:
            break
        match = _SCHEME_RE.match(value, pos)
        if not match:
            raise ChallengeParseError(f"expected an auth scheme at position {pos}: {value[pos : pos + 20]!r}")
        challenge = Challenge(scheme=match.group(1))
        pos = match.end()
        # token68 form: Scheme abc123==
        t68 = re.compile(rf"\s+({_TOKEN68})\s*(?:,|$)").match(value, pos)
        param_ahead = _PARAM_RE.match(value, pos)
        after_eq = value[param_ahead.end() :].lstrip(" \t")[:1] if param_ahead else ""
        if t68 and (not param_ahead or after_eq in ("", ",", "=")):
            challenge.token68 = t68.group(1)
            pos = t68.end()
            challenges.append(challenge)
            continue
        while pos < n:
            save = pos
            while pos < n and value[pos] in " \t,":
                pos += 1
            param = _PARAM_RE.match(value, pos)
            if not param:
                pos = save
                break
            # A token followed by "=" could also start the next challenge's token68; params win (as in practice).
            name = param.group(1).lower()
            pos = param.end()
            quoted = _QUOTED_RE.match(value, pos)
            if quoted:
                raw = quoted.group(1)
                param_value = re.sub(r"\\(.)", r"\1", raw)
                pos = quoted.end()
            else:
                token = re.compile(_TOKEN).match(value, pos)
                if not token:
                    raise ChallengeParseError(f"parameter {name!r} has no value at position {pos}")
                param_value = token.group(0)
                pos = token.end()
            if name in challenge.params:
                raise ChallengeParseError(f"parameter {name!r} repeated in one challenge")
            challenge.params[name] = param_value
            rest = value[pos:].lstrip(" \t")
            if rest and not rest.startswith(","):
                raise ChallengeParseError(f"unexpected text after parameter {name!r}: {rest[:20]!r}")
            # The next element is either another param or a new challenge's scheme.
            lookahead = rest.lstrip(" \t,")
            if lookahead and not _PARAM_RE.match(lookahead):
                pos = n - len(lookahead)
                break
        challenges.append(challenge)
    return challenges


def bearer_challenges(value: str) -> list[Challenge]:
    return [c for c in parse_www_authenticate(value) if c.scheme.lower() == "bearer"]


def first_bearer_challenge(values: list[str]) -> Challenge | None:
    """The first Bearer challenge of a response's WWW-Authenticate header values, or None if none parses."""
    if not values:
        return None
    try:
        found = bearer_challenges(", ".join(values))
    except ChallengeParseError:
        return None
    return found[0] if found else None
