"""Token counting: ``POST /v1/responses/input_tokens`` (TOK-01..07)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from conformance import expect, fail, observe, rule
from conformance.suites._cases import Attack, AttackRun, attack_table
from conformance.suites.platform._keys import BAD_KEYS, KEY_SOURCE, NAMED_KEY_CASES, key_headers
from conformance.suites.platform.client import (
    CLIENT_ERROR,
    PlatformApi,
    describe,
    error_object,
    expect_json_error,
    json_body,
    run_property,
    target_settings,
)
from conformance.validate.platform import count_answer_problems

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


def count(api: PlatformApi, body: dict[str, Any], what: str) -> int:
    """The count for a body that must be accepted; fails the check with the answer otherwise."""
    response = api.count_raw(body)
    if response.status_code != 200:
        fail(f"{what}: expected 200, got {describe(response)}")
    data = json_body(response)
    value = data.get("input_tokens") if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        fail(f"{what}: input_tokens is not a non-negative integer: {describe(response)}")
    return value


# Solid red (200, 30, 30) RGB PNGs, as Pillow encodes them: shipped, not encoded on every run (the large one costs
# ~25 ms of CPU to compress); tests/suites/platform/test_images.py pins their pixels.
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
    expect(response.status_code == 200, f"a model and a string input were not counted: {describe(response)}")
    problems = count_answer_problems(json_body(response))
    expect(not problems, "; ".join(problems) + f" ({describe(response)[:120]})")


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
    for what, body in bodies.items():
        counts = [count(platform_api, body, what) for _ in range(3)]
        expect(len(set(counts)) == 1, f"{what}: the same request gave different counts {counts}")


@rule("TOK-03")
def test_message_items_cost_at_least_the_text(platform_api: PlatformApi) -> None:
    text = "Which planets have rings?"
    bare = count(platform_api, platform_api.body(input=text), "string input")
    as_message = count(platform_api, platform_api.body(input=[{"role": "user", "content": text}]), "message item")
    as_parts = count(
        platform_api,
        platform_api.body(input=[{"role": "user", "content": [{"type": "input_text", "text": text}]}]),
        "input_text part",
    )
    expect(as_message >= bare, f"a message item ({as_message}) costs less than its bare text ({bare})")
    expect(as_parts >= bare, f"an input_text part ({as_parts}) costs less than its bare text ({bare})")
    # Two messages carry one more set of role and boundary tokens than their text joined into one string.
    first, second = "Which planets have rings?", "Saturn, Jupiter, Uranus and Neptune."
    joined = count(platform_api, platform_api.body(input=f"{first}\n{second}"), "joined text")
    two = count(
        platform_api,
        platform_api.body(input=[{"role": "user", "content": first}, {"role": "assistant", "content": second}]),
        "two message items",
    )
    expect(two > joined, f"two messages ({two}) cost no more than their text in one string ({joined}): no role tokens")

    @target_settings()
    @given(first=TEXT, second=TEXT, role=st.sampled_from(["user", "assistant", "developer"]))
    def prop(first: str, second: str, role: str) -> None:
        bare = count(platform_api, platform_api.body(input=first), "string input")
        alone = count(platform_api, platform_api.body(input=[{"role": role, "content": first}]), f"a {role} item")
        expect(alone >= bare, f"a {role} message ({alone}) costs less than its bare text {first!r} ({bare})")
        parts = [{"role": "user", "content": [{"type": "input_text", "text": first}]}]
        expect(
            count(platform_api, platform_api.body(input=parts), "input_text part") >= bare,
            f"an input_text part costs less than its bare text {first!r}",
        )
        pair = [{"role": "user", "content": first}, {"role": role, "content": second}]
        both = count(platform_api, platform_api.body(input=pair), "two message items")
        joined = count(platform_api, platform_api.body(input=f"{first}\n{second}"), "joined text")
        expect(both > joined, f"a second {role} message added no role or boundary tokens ({both} ≤ {joined})")

    run_property(prop)


@rule("TOK-04")
def test_instructions_and_tools_add(platform_api: PlatformApi) -> None:
    @target_settings()
    @given(text=TEXT, instructions=TEXT, description=TEXT)
    def prop(text: str, instructions: str, description: str) -> None:
        base = count(platform_api, platform_api.body(input=text), "input")
        with_instructions = count(
            platform_api, platform_api.body(input=text, instructions=instructions), "input + instructions"
        )
        expect(
            with_instructions > base,
            f"instructions {instructions!r} added nothing ({base} → {with_instructions})",
        )
        tool = {**WEATHER_TOOL, "description": description}
        with_tool = count(platform_api, platform_api.body(input=text, tools=[tool]), "input + tool")
        expect(with_tool > base, f"a function tool added nothing ({base} → {with_tool})")
        second = {**WEATHER_TOOL, "name": "get_forecast"}
        with_two = count(platform_api, platform_api.body(input=text, tools=[tool, second]), "input + two tools")
        expect(with_two > with_tool, f"a second function tool added nothing ({with_tool} → {with_two})")

    run_property(prop)


@rule("TOK-05")
def test_appending_never_lowers_the_count(platform_api: PlatformApi) -> None:
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
        shorter = count(platform_api, platform_api.body(input=text), "input")
        # Appended as a new line: byte-pair encoding may legitimately merge text glued onto a word into fewer
        # tokens ("ab" can cost 2 and "abc" 1), but a line break keeps the earlier words' tokens intact.
        longer = count(platform_api, platform_api.body(input=f"{text}\n{suffix}"), "input with a line appended")
        expect(longer >= shorter, f"appending the line {suffix!r} lowered the count ({shorter} → {longer})")
        items = [{"role": "user", "content": part} for part in head]
        before = count(platform_api, platform_api.body(input=items), "message items")
        after = count(
            platform_api, platform_api.body(input=[*items, {"role": role, "content": suffix}]), "an item appended"
        )
        expect(after >= before, f"appending a {role} message lowered the count ({before} → {after})")

    run_property(prop)


@rule("TOK-06")
def test_images_are_counted(platform_api: PlatformApi) -> None:
    text_only = count(
        platform_api,
        platform_api.body(
            input=[{"role": "user", "content": [{"type": "input_text", "text": "What is in this picture?"}]}]
        ),
        "text only",
    )
    small, large = png_data_url(64, 32), png_data_url(2048, 1024)
    counts: dict[tuple[str, str], int] = {}
    for size, url in (("64x32", small), ("2048x1024", large)):
        for detail in ("low", "high"):
            counts[(size, detail)] = count(
                platform_api, platform_api.body(input=image_message(url, detail)), f"{size} image, detail={detail}"
            )
    expect(counts[("64x32", "low")] > text_only, f"an image added nothing ({text_only} → {counts[('64x32', 'low')]})")
    expect(
        counts[("2048x1024", "high")] >= counts[("64x32", "high")],
        f"a larger image costs fewer tokens ({counts[('2048x1024', 'high')]} < {counts[('64x32', 'high')]})",
    )
    expect(
        counts[("2048x1024", "high")] >= counts[("2048x1024", "low")],
        f"detail=high costs fewer tokens than low ({counts[('2048x1024', 'high')]} < {counts[('2048x1024', 'low')]})",
    )
    # A remote URL needs the target to fetch it; not every target can from here, so only observe.
    remote = platform_api.count_raw(platform_api.body(input=image_message("https://example.com/cat.png", "low")))
    observe(f"an image by remote URL: {remote.status_code}")


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
TOK07 = attack_table(
    "TOK-07",
    *(Attack(case, source, named=case in NAMED) for case, (source, _) in BAD_BODIES.items()),
    *(Attack(case, "TOK-07 (a bad body); contract platform (a JSON object body)") for case in RAW_BODIES),
    *(Attack(case, f"TOK-07 ({KEY_SOURCE})", named=case in NAMED) for case in BAD_KEYS),
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


@rule("TOK-07")
def test_bad_bodies_get_4xx_json(platform_api: PlatformApi) -> None:
    run = AttackRun.of("TOK-07")
    for case, (_, fields) in BAD_BODIES.items():
        with run.attempt(case):
            expect_json_error(platform_api.count_raw(platform_api.body(**fields)), CLIENT_ERROR, case)
    for case, raw in RAW_BODIES.items():
        with run.attempt(case):
            expect_json_error(platform_api.post_content("/v1/responses/input_tokens", raw), CLIENT_ERROR, case)
    body = platform_api.body(input="hi")
    for case in BAD_KEYS:
        headers = key_headers(case, platform_api.target.api_key, platform_api.http.redactor.add_secret)
        if headers is None:
            run.not_tried(case, "no platform API key configured to alter")
            continue
        with run.attempt(case):
            expect_json_error(platform_api.count_raw(body, headers=headers), (401,), case)

    @target_settings()
    @given(part=st.dictionaries(st.sampled_from(["type", "text", "image_url", "detail"]), JSON_VALUES, max_size=3))
    def prop(part: dict[str, Any]) -> None:
        response = platform_api.count_raw(platform_api.body(input=[{"role": "user", "content": [part]}]))
        expect(response.status_code < 500, f"a malformed content part {part!r} caused {describe(response)}")
        if response.status_code >= 400:
            expect(error_object(response) is not None, f"the error for part {part!r} is not JSON: {describe(response)}")

    run_property(prop)
    run.conclude()
