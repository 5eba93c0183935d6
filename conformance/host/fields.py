"""Reading fields of target JSON: a missing or mistyped field is the target's verdict, never a ``KeyError``.

Every check reads what a target answered through :func:`json_field`::

    campaign_id = json_field(response, "id", type=str, what="the created campaign")
    first = json_field(body, "data", 0, "id", type=str)

A field that is absent, ``null`` where a value is wanted, or of the wrong JSON type raises
:class:`~conformance.core._exceptions.InvalidResponse` carrying the exchange (the rule being judged failed) or, with
``blocked_by``, the same naming a prerequisite rule (the field belongs to it, so this rule cannot be decided).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, NoReturn, TypeVar, overload

import httpx

from conformance.core._exceptions import InvalidResponse
from conformance.core._values import is_int, is_number
from conformance.host import _json as target_json
from conformance.host.exchange import exchange_of

T = TypeVar("T")
Step = str | int
_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    dict: "an object",
    list: "an array",
}


@overload
def json_field(
    doc: Any, *path: Step, type: type[T], what: str | None = None, blocked_by: str | None = None, empty: bool = True
) -> T: ...
@overload
def json_field(
    doc: Any, *path: Step, type: None = None, what: str | None = None, blocked_by: str | None = None, empty: bool = True
) -> Any: ...
def json_field(
    doc: Any,
    *path: Step,
    type: type[Any] | None = None,
    what: str | None = None,
    blocked_by: str | None = None,
    empty: bool = True,
) -> Any:
    """The value at ``path`` (object keys and array indexes) in ``doc``, checked to be of JSON ``type``.

    ``doc`` is parsed JSON or an ``httpx.Response`` (its body is parsed; a body that is not JSON is a failure too).
    ``empty=False`` also refuses an empty string, array or object. ``what`` names the document in the message.
    """
    exchange = exchange_of(doc) if isinstance(doc, httpx.Response) else None  # the evidence of a refusal
    if isinstance(doc, httpx.Response):
        what = what or _describe(doc)
        try:
            doc = target_json.loads(doc.content)
        except (ValueError, UnicodeDecodeError):
            _refuse(f"{what}: the body is not JSON", blocked_by, exchange)
    what = what or "the target's answer"
    value = doc
    walked = ""
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list):
                _refuse(f"{what}: {_name(walked)} is {_shown(value)}, expected an array", blocked_by, exchange)
            if not -len(value) <= step < len(value):
                _refuse(f"{what}: {_name(walked)} has no item {step} (length {len(value)})", blocked_by, exchange)
            value = value[step]
            walked += f"[{step}]"
        else:
            if not isinstance(value, Mapping):
                _refuse(f"{what}: {_name(walked)} is {_shown(value)}, expected an object", blocked_by, exchange)
            walked += ("." if walked else "") + step
            if step not in value:
                _refuse(f"{what}: '{walked}' is missing", blocked_by, exchange)
            value = value[step]
    if type is not None and not _is(value, type):
        _refuse(
            f"{what}: {_name(walked)} is {_shown(value)}, expected {_NAMES.get(type, type.__name__)}",
            blocked_by,
            exchange,
        )
    if not empty and isinstance(value, str | list | dict) and not value:
        _refuse(f"{what}: {_name(walked)} is empty", blocked_by, exchange)
    return value


def _name(walked: str) -> str:
    return f"'{walked}'" if walked else "the body"


def _is(value: Any, wanted: type) -> bool:
    if wanted is float:
        return is_number(value)
    if wanted is int:
        return is_int(value)
    return isinstance(value, wanted)


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(response: httpx.Response) -> str:
    try:
        request = response.request
    except RuntimeError:  # a response built by hand has no request
        return f"the {response.status_code} answer"
    return f"{request.method} {request.url.path} → {response.status_code}"


def _refuse(message: str, blocked_by: str | None, exchange: dict[str, Any] | None) -> NoReturn:
    raise InvalidResponse(message, blocked_by=blocked_by, exchange=exchange)


def json_get(doc: Any, *path: Step, type: type[Any] | None = None, default: Any = None) -> Any:
    """The value at ``path`` when it is there with JSON ``type``, else ``default``: for reads whose absence the
    check itself judges (a comparison that then fails with its own message), never a ``KeyError``."""
    try:
        return json_field(doc, *path, type=type)
    except InvalidResponse:
        return default


# -- typed members of a parsed document that the host keeps (metadata, a token response) ---------------------------


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_strings(value: Any) -> list[str] | None:
    """An array of strings (a copy), else None."""
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def as_int(value: Any) -> int | None:
    """A JSON number (not true/false), truncated to an integer, else None."""
    return int(value) if _is(value, float) else None


class JsonMember(Generic[T]):
    """A read-only attribute that is one member of a JSON object the instance holds, read with ``read``:
    ``token_type = JsonMember(as_str, source="body")`` gives ``result.body["token_type"]`` when it is a string, else
    None (absent, of another type, or no object at all). The member's name is the attribute's unless given."""

    def __init__(self, read: Callable[[Any], T | None], member: str = "", *, source: str) -> None:
        self.read, self.member, self.source = read, member, source

    def __set_name__(self, owner: type, name: str) -> None:
        self.member = self.member or name

    @overload
    def __get__(self, instance: None, owner: type) -> JsonMember[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T | None: ...
    def __get__(self, instance: object, owner: type | None = None) -> JsonMember[T] | T | None:
        if instance is None:
            return self
        document = getattr(instance, self.source)
        return self.read(document.get(self.member)) if isinstance(document, Mapping) else None

    def __set__(self, instance: object, value: Any) -> None:
        raise AttributeError(f"{self.member} is read from {self.source}")
