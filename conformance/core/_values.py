"""Kinds of JSON values as a contract means them (a leaf: imports nothing of the package)."""

from __future__ import annotations

from typing import Any, TypeGuard


def is_int(value: Any) -> TypeGuard[int]:
    """A JSON integer: an ``int`` that is not a ``bool`` (``True`` is an ``int`` to Python, not to JSON)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number: an ``int`` or ``float`` that is not a ``bool``."""
    return isinstance(value, int | float) and not isinstance(value, bool)
