"""The bearer-key attack family of the platform API (TOK-07, CAMP-15): every missing, malformed or nearly-right
``Authorization`` header, each derived from the real key where the case needs it, and cited."""

from __future__ import annotations

from collections.abc import Callable

KEY_SOURCE = "missing or bad bearer key → 401; RFC 6750 §2.1, §3.1"
NAMED_KEY_CASES = frozenset({"no Authorization header", "a wrong key"})


def _changed_last(key: str) -> str:
    return f"Bearer {key[:-1]}{'0' if key[-1:] != '0' else '1'}"


# case -> the Authorization header made from the real key; None: no header at all.
BAD_KEYS: dict[str, Callable[[str], str] | None] = {
    "no Authorization header": None,
    "a wrong key": lambda key: "Bearer sk-not-a-key-0000",
    "'Bearer' without a key": lambda key: "Bearer",
    "the real key under the Basic scheme": lambda key: f"Basic {key}",
    "the real key without a scheme": lambda key: key,
    "the real key with its last character changed": _changed_last,
    "the real key with characters appended": lambda key: f"Bearer {key}0",
    "the real key truncated by one character": lambda key: f"Bearer {key[:-1]}",
}


def key_headers(case: str, key: str | None, secret: Callable[..., None]) -> dict[str, str] | None:
    """The headers of one case (None: the case needs the real key and none is configured). A header made from the
    real key is nearly the secret: ``secret`` (``Redactor.add_secret``) registers it so that no report ever shows it,
    marked crafted when it is not the key itself (a replay cannot send it again from the key)."""
    make = BAD_KEYS[case]
    if make is None:
        return {}
    if not key:
        return None
    header = make(key)
    _, space, rest = header.partition(" ")
    value = rest if space else header  # "Bearer" alone carries no value
    if space or value == key:
        secret(value, crafted=value != key)
    return {"Authorization": header}
