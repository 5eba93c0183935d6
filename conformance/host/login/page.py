"""The HTML model of a login page, css-ish selectors, and the plan of one step on one page."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from conformance.core._exceptions import ConfigError
from conformance.host.login.steps import Decision, LoginStep


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    form: int | None  # index of the owning form
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)


@dataclass
class Page:
    url: str
    title: str = ""
    forms: list[Element] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)  # inputs, buttons, selects, textareas, links
    text: str = ""

    def summary(self, limit: int = 200) -> str:
        text = re.sub(r"\s+", " ", self.text).strip()
        return (f"{self.title}: " if self.title else "") + text[:limit]


_FIELD_TAGS = {"input", "button", "select", "textarea", "option"}
_NO_ELEMENT = {"html", "head", "body", "meta", "link", "br", "title", "script", "style"}


class _PageParser(HTMLParser):
    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page(url=url)
        self._form: int | None = None
        self._open: list[Element] = []  # elements collecting text (button, a, textarea, option)
        self._select: Element | None = None
        self._in_title = False
        self._skip = 0  # inside script/style
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v if v is not None else "") for k, v in attrs}
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "form":
            self.page.forms.append(Element("form", values, None))
            self._form = len(self.page.forms) - 1
        elif tag not in _NO_ELEMENT:
            owner = self._form
            if "form" in values and tag != "a":  # HTML5 form="id" association
                owner = next((i for i, f in enumerate(self.page.forms) if f.get("id") == values["form"]), owner)
            element = Element(tag, values, owner)
            if tag == "option" and self._select is not None:
                element.attrs.setdefault("data-select", self._select.get("name") or "")
            self.page.elements.append(element)
            if tag == "select":
                self._select = element
            if tag in ("button", "a", "textarea", "option"):
                self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif self._open and self._open[-1].tag == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.page.title += data.strip()
            return
        self._text.append(data)
        for element in self._open:
            element.text += data

    def close(self) -> None:
        super().close()
        self.page.text = " ".join(self._text)


def parse_page(url: str, html: str) -> Page:
    parser = _PageParser(url)
    parser.feed(html)
    parser.close()
    return parser.page


_SIMPLE = re.compile(r"^(?P<tag>[a-zA-Z][a-zA-Z0-9-]*)?(?P<rest>(?:#[\w.:-]+|\.[\w-]+|\[[^\]]+\])*)$")
_PART = re.compile(r"#([\w.:-]+)|\.([\w-]+)|\[\s*([\w-]+)\s*(?:([~^$*|]?=)\s*(\"[^\"]*\"|'[^']*'|[^\]]*?))?\s*\]")


# An attribute condition's operator: (the element's value, the selector's) -> whether it holds.
_COMPARE: dict[str, Callable[[str, str], bool]] = {
    "=": str.__eq__,
    "~=": lambda actual, value: value in actual.split(),
    "^=": str.startswith,
    "$=": str.endswith,
    "*=": lambda actual, value: value in actual,
    "|=": lambda actual, value: actual == value or actual.startswith(value + "-"),
}


@dataclass(frozen=True)
class Selector:
    """A compound CSS selector: ``tag#id.class[attr][attr=value][attr^=v][attr$=v][attr*=v]``, optionally
    preceded by a form selector and a space (``#consent button[value=approve]``)."""

    tag: str | None
    conditions: tuple[tuple[str, str | None, str | None], ...]  # (attribute, operator, value)
    scope: Selector | None = None

    @classmethod
    def parse(cls, text: str) -> Selector:
        parts = text.strip().split()
        if not parts or len(parts) > 2:
            raise ConfigError(f"selector {text!r}: use one compound selector, optionally after a form selector")
        scope = cls.parse(parts[0]) if len(parts) == 2 else None
        match = _SIMPLE.match(parts[-1])
        if not match:
            raise ConfigError(f"selector {text!r} is not supported (tag#id.class[attr=value] only)")
        conditions: list[tuple[str, str | None, str | None]] = []
        for part in _PART.finditer(match.group("rest") or ""):
            ident, klass, attr, op, value = part.groups()
            if ident is not None:
                conditions.append(("id", "=", ident))
            elif klass is not None:
                conditions.append(("class", "~=", klass))
            else:
                conditions.append((attr.lower(), op, value.strip("\"'") if value is not None else None))
        return cls(tag=(match.group("tag") or "").lower() or None, conditions=tuple(conditions), scope=scope)

    def matches(self, element: Element) -> bool:
        if self.tag and element.tag != self.tag:
            return False
        for attr, op, value in self.conditions:
            actual = element.get(attr)
            if actual is None:
                return False
            if op is None or value is None:
                continue
            if not _COMPARE[op](actual, value):
                return False
        return True

    def select(self, page: Page) -> Iterator[Element]:
        allowed: set[int] | None = None
        if self.scope is not None:
            allowed = {i for i, f in enumerate(page.forms) if self.scope.matches(f)}
        for element in [*page.forms, *page.elements]:
            if allowed is not None and (element.form not in allowed or element.tag == "form"):
                continue
            if self.matches(element):
                yield element

    def css(self) -> str:
        """The same selector for a browser."""
        own = self.tag or ""
        for attr, op, value in self.conditions:
            if attr == "id" and op == "=":
                own += f"#{value}"
            elif attr == "class":
                own += f".{value}"
            else:
                own += f"[{attr}]" if op is None else f'[{attr}{op}"{value}"]'
        return f"{self.scope.css()} {own or '*'}" if self.scope else own or "*"


def field_selector(key: str) -> list[Selector]:
    """A fill key: a bare word is a field name, else an id; anything else is a selector."""
    return list(_field_selectors(key))


@functools.lru_cache(maxsize=256)  # a run's steps name a few selectors, applied to every page of every login
def _field_selectors(key: str) -> tuple[Selector, ...]:
    if re.fullmatch(r"[A-Za-z_][\w.-]*", key):
        return (Selector(None, (("name", "=", key),)), Selector(None, (("id", "=", key),)))
    return (_selector(key),)


@functools.lru_cache(maxsize=256)
def _selector(text: str) -> Selector:
    """:meth:`Selector.parse`, once per selector text (a selector is immutable)."""
    return Selector.parse(text)


def _first(page: Page, selectors: Iterable[Selector], form: int | None = None) -> Element | None:
    for selector in selectors:
        for element in selector.select(page):
            if element.tag != "form" and (form is None or element.form == form):
                return element
    return None


def _is_submit(element: Element) -> bool:
    kind = (element.get("type") or "").lower()
    return (element.tag == "button" and kind in ("", "submit")) or (
        element.tag == "input" and kind in ("submit", "image")
    )


# -- the plan of one step on one page ---------------------------------------------------------------------------


@dataclass
class _Plan:
    step: LoginStep
    form: int | None
    fields: dict[str, str]  # field name → value
    clicked: Element | None


def _plan(step: LoginStep, page: Page, decision: Decision) -> _Plan | None:
    """How ``step`` applies to ``page``, or None when it does not."""
    if step.decision is not None and step.decision != decision:
        return None
    if not re.search(step.match, page.url):
        return None
    if step.contains is not None and step.contains not in page.text and step.contains not in page.title:
        return None
    if step.requires is not None and not any(True for _ in _selector(step.requires).select(page)):
        return None
    form: int | None = None
    if step.form is not None:
        selector = _selector(step.form)
        indices = [i for i, f in enumerate(page.forms) if selector.matches(f)]
        if not indices:
            return None
        form = indices[0]
    fields: dict[str, str] = {}
    for key in step.fill:
        element = _first(page, _field_selectors(key), form)
        if element is None or element.form is None:
            return None
        form = element.form if form is None else form
        fields[element.get("name") or key] = step.fill[key]
    clicked: Element | None = None
    if step.click is not None:
        clicked = _first(page, (_selector(step.click),), form)
        if clicked is None:
            return None
        if clicked.tag != "a":
            form = clicked.form
    elif step.submit:
        if form is None:
            if len(page.forms) != 1:
                return None
            form = 0
        clicked = next((e for e in page.elements if e.form == form and _is_submit(e)), None)
    if clicked is not None and clicked.tag != "a" and form is None:
        return None
    return _Plan(step, form, fields, clicked)


def form_submission(page: Page, plan: _Plan, values: dict[str, str]) -> tuple[str, str, dict[str, str] | None]:
    """``(method, url, data)`` for submitting the planned form with ``values`` filled (HTML form data set)."""
    clicked = plan.clicked
    if clicked is not None and clicked.tag == "a":
        return "GET", urljoin(page.url, clicked.get("href") or ""), None
    assert plan.form is not None
    form = page.forms[plan.form]
    data: list[tuple[str, str]] = []
    selects: dict[str, str] = {}
    for element in page.elements:
        if element.form != plan.form:
            continue
        name = element.get("name")
        kind = (element.get("type") or "text").lower()
        if element.tag == "option":
            owner = element.get("data-select") or ""
            if owner and (owner not in selects or "selected" in element.attrs):
                option_value = element.get("value")
                selects[owner] = option_value if option_value is not None else element.text.strip()
            continue
        if element.tag not in _FIELD_TAGS or not name or "disabled" in element.attrs:
            continue
        if element.tag == "input" and kind in ("submit", "image", "button", "reset", "file"):
            if element is clicked and kind == "submit":
                data.append((name, element.get("value") or ""))
            continue
        if element.tag == "button":
            if element is clicked:
                data.append((name, element.get("value") or ""))
            continue
        if element.tag == "input" and kind in ("checkbox", "radio") and "checked" not in element.attrs:
            continue
        if element.tag == "select":
            continue
        value = element.text if element.tag == "textarea" else (element.get("value") or "")
        data.append((name, value))
    data += list(selects.items())
    filled = dict(data)
    filled.update(values)
    method = (form.get("method") or "get").upper()
    action = urljoin(page.url, form.get("action") or page.url)
    if method == "GET":
        parts = urlsplit(action)
        return "GET", urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(filled), "")), None
    return "POST", action, filled
