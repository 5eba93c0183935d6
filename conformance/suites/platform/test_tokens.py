"""Token counting: ``POST /v1/responses/input_tokens`` (TOK-01..07)."""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from hypothesis import example, given
from hypothesis import strategies as st

from conformance import expect, fail, observe, rule
from conformance.core._values import is_int
from conformance.host import fanout
from conformance.judges.platform import count_answer_problems
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites.platform._keys import BAD_KEYS, NAMED_KEY_CASES, key_headers
from conformance.suites.platform.client import (
    PlatformApi,
    describe,
    error_object,
    json_body,
    run_property,
    target_settings,
)

# Text that any tokenizer splits into a few tokens; printable, no control characters.
TEXT = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), min_size=1, max_size=80)
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
        "additionalProperties": False,
    },
}


def succeeded(response: httpx.Response) -> bool:
    """A 2xx answer: the contract shows the count response, not its status (P Endpoints)."""
    return 200 <= response.status_code < 300


def count(api: PlatformApi, body: dict[str, Any], what: str) -> int:
    """The count for a body that must be accepted; fails the check with the answer otherwise."""
    response = api.count_raw(body)
    if not succeeded(response):
        fail(f"{what}: expected a count (2xx), got {describe(response)}")
    data = json_body(response)
    value = data.get("input_tokens") if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        fail(f"{what}: input_tokens is not a non-negative integer: {describe(response)}")
    return value


def counts(api: PlatformApi, bodies: list[tuple[dict[str, Any], str]]) -> list[int]:
    """:func:`count` of each (body, what), independent requests sent at once (``--concurrency``); the counts in the
    bodies' order, the first failure in that order raised once all have ended."""
    return fanout.each(bodies, lambda pair: count(api, *pair), limit=api.http.concurrency)


# Solid red (200, 30, 30) RGB PNGs, as Pillow encodes them: shipped, not encoded on every run (compressing the large
# one is costly); tests/suites/platform/test_images.py pins their pixels.
IMAGES = Path(__file__).with_name("images")


def png_data_url(width: int, height: int) -> str:
    png = (IMAGES / f"red-{width}x{height}.png").read_bytes()
    return "data:image/png;base64," + base64.b64encode(png).decode()


def image_message(url: str, detail: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in this picture?"},
                {"type": "input_image", "image_url": url, "detail": detail},
            ],
        }
    ]


@rule("TOK-01")
def test_string_input_is_counted(platform_api: PlatformApi) -> None:
    response = platform_api.count_raw(platform_api.body(input="Tell me a joke about conformance testing."))
    expect(succeeded(response), f"a model and a string input were not counted: {describe(response)}")
    problems = count_answer_problems(json_body(response))
    expect(not problems, "; ".join(problems) + f" ({describe(response)[:120]})")
    observe(f"counted with {response.status_code}: {json_body(response)}")


@rule("TOK-02")
def test_count_is_deterministic(platform_api: PlatformApi) -> None:
    bodies = {
        "string input": platform_api.body(input="The same request twice gives the same number."),
        "message items": platform_api.body(
            input=[
                {"role": "user", "content": "Hi there"},
                {"role": "assistant", "content": [{"type": "output_text", "text": "Hello! How can I help?"}]},
                {"role": "user", "content": [{"type": "input_text", "text": "Count these tokens."}]},
            ],
            instructions="Answer briefly.",
            tools=[WEATHER_TOOL],
        ),
    }
    found = counts(platform_api, [(body, what) for what, body in bodies.items() for _ in range(3)])
    for index, what in enumerate(bodies):
        three = found[3 * index : 3 * index + 3]
        expect(len(set(three)) == 1, f"{what}: the same request gave different counts {three}")
        observe(f"{what}: {three[0]} tokens, three times")


@rule("TOK-03")
def test_message_items_cost_at_least_the_text(platform_api: PlatformApi) -> None:
    text = "Which planets have rings?"
    # Two messages carry one more set of role and boundary tokens than their text joined into one string.
    first, second = "Which planets have rings?", "Saturn, Jupiter, Uranus and Neptune."
    bare, as_message, as_parts, joined, two = counts(
        platform_api,
        [
            (platform_api.body(input=text), "string input"),
            (platform_api.body(input=[{"role": "user", "content": text}]), "message item"),
            (
                platform_api.body(input=[{"role": "user", "content": [{"type": "input_text", "text": text}]}]),
                "input_text part",
            ),
            (platform_api.body(input=f"{first}\n{second}"), "joined text"),
            (
                platform_api.body(input=[{"role": "user", "content": first}, {"role": "assistant", "content": second}]),
                "two message items",
            ),
        ],
    )
    expect(as_message >= bare, f"a message item ({as_message}) costs less than its bare text ({bare})")
    expect(as_parts >= bare, f"an input_text part ({as_parts}) costs less than its bare text ({bare})")
    expect(two > joined, f"two messages ({two}) cost no more than their text in one string ({joined}): no role tokens")
    observe(
        f"bare text {bare}, a message item {as_message}, an input_text part {as_parts}; joined {joined} < two {two}"
    )

    @target_settings()
    @given(first=TEXT, second=TEXT, role=st.sampled_from(["user", "assistant", "developer"]))
    def prop(first: str, second: str, role: str) -> None:
        parts = [{"role": "user", "content": [{"type": "input_text", "text": first}]}]
        pair = [{"role": "user", "content": first}, {"role": role, "content": second}]
        bare, alone, as_parts, both, joined = counts(
            platform_api,
            [
                (platform_api.body(input=first), "string input"),
                (platform_api.body(input=[{"role": role, "content": first}]), f"a {role} item"),
                (platform_api.body(input=parts), "input_text part"),
                (platform_api.body(input=pair), "two message items"),
                (platform_api.body(input=f"{first}\n{second}"), "joined text"),
            ],
        )
        expect(alone >= bare, f"a {role} message ({alone}) costs less than its bare text {first!r} ({bare})")
        expect(as_parts >= bare, f"an input_text part costs less than its bare text {first!r}")
        expect(both > joined, f"a second {role} message added no role or boundary tokens ({both} ≤ {joined})")

    run_property(prop)


@rule("TOK-04")
def test_instructions_and_tools_add(platform_api: PlatformApi) -> None:
    @target_settings()
    @given(text=TEXT, instructions=TEXT, description=TEXT)
    def prop(text: str, instructions: str, description: str) -> None:
        tool = {**WEATHER_TOOL, "description": description}
        second = {**WEATHER_TOOL, "name": "get_forecast"}
        base, with_instructions, with_tool, with_two = counts(
            platform_api,
            [
                (platform_api.body(input=text), "input"),
                (platform_api.body(input=text, instructions=instructions), "input + instructions"),
                (platform_api.body(input=text, tools=[tool]), "input + tool"),
                (platform_api.body(input=text, tools=[tool, second]), "input + two tools"),
            ],
        )
        expect(
            with_instructions > base,
            f"instructions {instructions!r} added nothing ({base} → {with_instructions})",
        )
        expect(with_tool > base, f"a function tool added nothing ({base} → {with_tool})")
        expect(with_two > with_tool, f"a second function tool added nothing ({with_tool} → {with_two})")

    run_property(prop)


MERGE_SLACK = 1  # tokens a byte-pair merge across the appended boundary may save (TOK-05 reports it)


def not_lowered(before: int, after: int, what: str, merges: list[str]) -> None:
    """TOK-05 on one pair: the count did not drop, or dropped by at most a BPE merge (kept in ``merges``)."""
    if after >= before:
        return
    expect(before - after <= MERGE_SLACK, f"{what} lowered the count by {before - after} tokens ({before} → {after})")
    merges.append(f"{what}: {before} → {after}")


@rule("TOK-05")
def test_appending_never_lowers_the_count(platform_api: PlatformApi) -> None:
    merges: list[str] = []

    @target_settings()
    @given(
        head=st.lists(TEXT, min_size=1, max_size=3),
        role=st.sampled_from(["user", "assistant"]),
        suffix=TEXT,
    )
    # Always tried: a short line after a long one (a count that drops or replaces earlier items shows here).
    @example(head=["Here is a long first message with quite a few words in it."], role="assistant", suffix="ok")
    def prop(head: list[str], role: str, suffix: str) -> None:
        text = " ".join(head)
        items = [{"role": "user", "content": part} for part in head]
        # Appended as a new line: byte-pair encoding may legitimately merge text glued onto a word into fewer
        # tokens ("ab" can cost 2 and "abc" 1), but a line break keeps the earlier words' tokens intact.
        shorter, longer, before, after = counts(
            platform_api,
            [
                (platform_api.body(input=text), "input"),
                (platform_api.body(input=f"{text}\n{suffix}"), "input with a line appended"),
                (platform_api.body(input=items), "message items"),
                (platform_api.body(input=[*items, {"role": role, "content": suffix}]), "an item appended"),
            ],
        )
        not_lowered(shorter, longer, f"appending the line {suffix!r}", merges)
        not_lowered(before, after, f"appending a {role} message {suffix!r}", merges)

    run_property(prop)
    if merges:
        observe(f"reported: an append lowered the count by one token (a BPE merge) {len(merges)}×: {merges[:3]}")
    else:
        observe("no append lowered the count")


@rule("TOK-06")
def test_images_are_counted(platform_api: PlatformApi) -> None:
    small, large = png_data_url(64, 32), png_data_url(2048, 1024)
    images = [
        (size, url, detail) for size, url in (("64x32", small), ("2048x1024", large)) for detail in ("low", "high")
    ]
    text_only, *with_images = counts(
        platform_api,
        [
            (
                platform_api.body(
                    input=[{"role": "user", "content": [{"type": "input_text", "text": "What is in this picture?"}]}]
                ),
                "text only",
            ),
            *(
                (platform_api.body(input=image_message(url, detail)), f"{size} image, detail={detail}")
                for size, url, detail in images
            ),
        ],
    )
    counted = {(size, detail): n for (size, _, detail), n in zip(images, with_images, strict=True)}
    added = [f"{size} detail={detail}: {n}" for (size, detail), n in counted.items() if n <= text_only]
    expect(not added, f"an image added nothing to the text's {text_only} tokens: {'; '.join(added)}")
    observe(f"text only {text_only}; with a base64 data URL image: {counted}")
    # Reported, not judged: a larger image or a higher detail costing fewer tokens.
    odd = []
    if counted[("2048x1024", "high")] < counted[("64x32", "high")]:
        odd.append(
            f"a larger image costs fewer tokens ({counted[('2048x1024', 'high')]} < {counted[('64x32', 'high')]})"
        )
    for size in ("64x32", "2048x1024"):
        if counted[(size, "high")] < counted[(size, "low")]:
            odd.append(
                f"{size}: detail=high costs fewer than low ({counted[(size, 'high')]} < {counted[(size, 'low')]})"
            )
    if odd:
        observe("reported: " + "; ".join(odd))
    # A remote URL needs the target to fetch it; not every target can from here: counted, it must add to the count.
    remote = platform_api.count_raw(platform_api.body(input=image_message("https://example.com/cat.png", "low")))
    value = json_body(remote).get("input_tokens") if succeeded(remote) and isinstance(json_body(remote), dict) else None
    if is_int(value):
        expect(value > text_only, f"an image by URL added nothing ({text_only} → {value})")
        observe(f"an image by URL: counted {value}")
    else:
        observe(f"an image by URL was not counted (the target may not reach it): {describe(remote)[:120]}")


REQUEST = "contract platform, Input token count request"
PARTS = "contract platform, Content parts"
ITEM = "contract platform, Message item"
TOOL = "contract platform, Function tool"
# case -> (source, the fields of an otherwise valid body); the rule's own cases are named.
BAD_BODIES: dict[str, tuple[str, dict[str, Any]]] = {
    "input is a number": (f"{REQUEST} (input: string or array)", {"input": 42}),
    "input is an object": (f"{REQUEST} (input: string or array)", {"input": {"text": "hi"}}),
    "input is true": (f"{REQUEST} (input: string or array)", {"input": True}),
    "an input item that is a number": (f"{REQUEST} (an array of message items)", {"input": [7]}),
    "model is a number": (f"{REQUEST} (model: string)", {"model": 4, "input": "hi"}),
    "unknown content part type": (
        f"TOK-07; {PARTS}",
        {"input": [{"role": "user", "content": [{"type": "input_hologram", "x": 1}]}]},
    ),
    "part without type": (PARTS, {"input": [{"role": "user", "content": [{"text": "hi"}]}]}),
    "part type is a number": (PARTS, {"input": [{"role": "user", "content": [{"type": 3, "text": "hi"}]}]}),
    "role is a number": (f"{ITEM} (role: string)", {"input": [{"role": 7, "content": "hi"}]}),
    "content is a number": (f"{ITEM} (content: string or array)", {"input": [{"role": "user", "content": 3.5}]}),
    "input_text without text": (PARTS, {"input": [{"role": "user", "content": [{"type": "input_text"}]}]}),
    "input_text text is a number": (
        f"{PARTS} (text: string)",
        {"input": [{"role": "user", "content": [{"type": "input_text", "text": 12345}]}]},
    ),
    "image_url is a number": (
        f"{PARTS} (image_url: string)",
        {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": 5}]}]},
    ),
    "input_image without image_url or file_id": (
        PARTS,
        {"input": [{"role": "user", "content": [{"type": "input_image"}]}]},
    ),
    "image data URL not base64": (
        f"{PARTS} (a base64 data URL)",
        {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,@@@"}]}]},
    ),
    "tools is a string": (f"{REQUEST} (tools: array)", {"input": "hi", "tools": "get_weather"}),
    "tool parameters not an object": (
        f"{TOOL} (parameters: JSON Schema object)",
        {"input": "hi", "tools": [{"type": "function", "name": "f", "parameters": []}]},
    ),
    "tool name is a number": (
        f"{TOOL} (name: string)",
        {"input": "hi", "tools": [{"type": "function", "name": 9, "parameters": {"type": "object"}}]},
    ),
    "instructions is a list": (f"{REQUEST} (instructions: string)", {"input": "hi", "instructions": ["be brief"]}),
}
RAW_BODIES = {"not JSON": "{", "a JSON array": "[1, 2]", "a JSON string": '"hi"'}
NAMED = {"unknown content part type", "input is a number", *NAMED_KEY_CASES}
KEYS = "TOK-07 (a missing or bad key); contract platform, Authentication 1; RFC 6750 §2.1, §3.1"
TOK07 = attack_table(
    "TOK-07",
    *(Attack(case, source, named=case in NAMED) for case, (source, _) in BAD_BODIES.items()),
    *(Attack(case, "TOK-07 (a bad body); contract platform (a JSON object body)") for case in RAW_BODIES),
    *(Attack(case, KEYS, named=case in NAMED) for case in BAD_KEYS),
)
SERVER_ERROR = "RFC 9110 §15.6: a 5xx says the server failed a request it should have refused"

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


@dataclass
class Refusals:
    """TOK-07's reported part: the status of each refusal (the contract shows none), 5xx answers to requests the
    server should refuse (a warning in the report's notes), and refusals whose body is not a JSON error."""

    statuses: dict[int, list[str]] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    not_json: list[str] = field(default_factory=list)

    def refused(self, case: str, response: httpx.Response) -> None:
        """Fails the case when it was counted (a 2xx); otherwise notes the refusal's form."""
        expect(not succeeded(response), f"{case}: counted instead of refused ({describe(response)[:160]})")
        self.note(case, response)

    def note(self, case: str, response: httpx.Response) -> None:
        self.statuses.setdefault(response.status_code, []).append(case)
        if response.status_code >= 500:
            self.server_errors.append(f"{case} ({response.status_code})")
        if error_object(response) is None:
            self.not_json.append(case)

    def report(self) -> None:
        spread = "; ".join(f"{status}: {len(cases)}" for status, cases in sorted(self.statuses.items()))
        observe(f"refused with statuses (reported) {spread}")
        if self.server_errors:
            observe(f"warning ({SERVER_ERROR}): {'; '.join(self.server_errors[:8])}")
        if self.not_json:
            observe(f"refusals without a JSON error body (reported): {'; '.join(self.not_json[:8])}")


@rule("TOK-07")
def test_bad_bodies_and_keys_get_no_count(platform_api: PlatformApi) -> None:
    run = AttackRun.of("TOK-07")
    refusals = Refusals()
    body = platform_api.body(input="hi")
    sends: dict[str, Callable[[], httpx.Response]] = {}  # case -> its one request
    for case, (_, fields) in BAD_BODIES.items():
        sends[case] = functools.partial(platform_api.count_raw, platform_api.body(**fields))
    for case, raw in RAW_BODIES.items():
        sends[case] = functools.partial(platform_api.post_content, "/v1/responses/input_tokens", raw)
    for case in BAD_KEYS:
        headers = key_headers(case, platform_api.target.api_key, platform_api.http.redactor.add_secret)
        if headers is None:
            run.not_tried(case, "no platform API key configured to alter")
            continue
        sends[case] = functools.partial(platform_api.count_raw, body, headers=headers)
    answers: dict[str, httpx.Response] = {}

    def send(case: str) -> str | None:
        answers[case] = response = sends[case]()
        return None if not succeeded(response) else f"{case}: counted instead of refused ({describe(response)[:160]})"

    run.each(sends, send, limit=platform_api.http.concurrency)
    for case in sends:  # the refusals' forms in the cases' order
        if case in answers and not succeeded(answers[case]):
            refusals.note(case, answers[case])
    fuzzed: list[str] = []

    @target_settings()
    @given(part=st.dictionaries(st.sampled_from(["type", "text", "image_url", "detail"]), JSON_VALUES, max_size=3))
    def prop(part: dict[str, Any]) -> None:
        # Generated parts may be valid: only a 5xx is worth a note here (never a verdict).
        response = platform_api.count_raw(platform_api.body(input=[{"role": "user", "content": [part]}]))
        if response.status_code >= 500 and len(fuzzed) < 5:
            fuzzed.append(f"{part!r} ({response.status_code})")

    run_property(prop)
    refusals.report()
    if fuzzed:
        observe(f"warning ({SERVER_ERROR}): generated content parts answered with a 5xx: {'; '.join(fuzzed)}")
    run.conclude()
