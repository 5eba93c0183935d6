"""Token counting of the platform sandbox: exact counts, per-model encodings, images, and 4xx for bad input."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from starlette.testclient import TestClient

from conformance.reference.platform.errors import ApiError
from conformance.reference.platform.tokens import (
    Encoding,
    count_input_tokens,
    encoding_name_for,
    get_encoding,
    image_tokens,
)
from tests.reference.platform.conftest import AUTH

TOKENS = "/v1/responses/input_tokens"


def png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_string_input_is_one_user_message_plus_reply_priming() -> None:
    text_tokens = get_encoding("o200k_base").count("hello world")
    role_tokens = get_encoding("o200k_base").count("user")
    # 3 boundary tokens for the message, its role, its text, 3 tokens priming the reply.
    assert count_input_tokens({"model": "gpt-4o", "input": "hello world"}) == 3 + role_tokens + text_tokens + 3
    assert count_input_tokens({"model": "gpt-4o", "input": [{"role": "user", "content": "hello world"}]}) == (
        count_input_tokens({"model": "gpt-4o", "input": "hello world"})
    )


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("shortcut", ["on", "off"])
def test_a_count_is_the_packages_own(name: str, shortcut: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The count is bpe-openai's Encoding.encode_ordinary's length, with the Rust tokenizer loaded alone or not;
    # what the package refuses (a text too long) is refused with the package's error.
    import bpe_openai

    if shortcut == "off":
        monkeypatch.setenv("CONFORMANCE_NO_SHORTCUTS", "tokenizer-backend")
    ours, package = Encoding(name), bpe_openai.get_encoding(name)
    assert (ours.tokenizer is None) == (shortcut == "off")
    for text in ["hello world", "", "  \n\n  a", "héllo wörld 😀 中文", "lone \ud800 surrogate", "word " * 5000]:
        assert ours.count(text) == len(package.encode_ordinary(text)), text
    with pytest.raises(ValueError, match="too long"):
        ours.count("a" * 1_000_000)


def test_encoding_follows_the_model() -> None:
    assert encoding_name_for("gpt-4o-mini") == "o200k_base"
    assert encoding_name_for("gpt-5") == "o200k_base"
    assert encoding_name_for("o3-mini") == "o200k_base"
    assert encoding_name_for("gpt-4-turbo") == "cl100k_base"
    assert encoding_name_for("gpt-3.5-turbo") == "cl100k_base"
    # The two encodings split this text differently, so the count depends on the model.
    text = "Ünïcödé naïveté, 東京, 1234567"
    assert count_input_tokens({"model": "gpt-4", "input": text}) != count_input_tokens(
        {"model": "gpt-4o", "input": text}
    )
    with pytest.raises(ApiError) as raised:
        encoding_name_for("llama-3")
    assert raised.value.status == 404 and raised.value.code == "model_not_found"


@pytest.mark.parametrize(
    ("size", "detail", "expected"),
    [
        ((1024, 1024), "low", 85),
        ((1024, 1024), "high", 85 + 170 * 4),  # short side to 768: 768x768, 2x2 tiles
        ((512, 512), "high", 85 + 170 * 1),
        ((4096, 2048), "high", 85 + 170 * 6),  # fit 2048x1024, short side to 768: 1536x768, 3x2 tiles
        ((64, 32), "auto", 85 + 170 * 1),
    ],
)
def test_image_tile_formula(size: tuple[int, int], detail: str, expected: int) -> None:
    assert image_tokens(*size, detail) == expected


def test_tools_are_serialized_deterministically() -> None:
    tool = {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {"a": {}, "b": {}}}}
    reordered = {"parameters": {"properties": {"b": {}, "a": {}}, "type": "object"}, "name": "f", "type": "function"}
    base = count_input_tokens({"model": "gpt-4o", "input": "x"})
    with_tool = count_input_tokens({"model": "gpt-4o", "input": "x", "tools": [tool]})
    assert with_tool > base
    assert count_input_tokens({"model": "gpt-4o", "input": "x", "tools": [reordered]}) == with_tool


def test_images_by_data_url_and_remote_url(client: TestClient) -> None:
    def count(url: str, detail: str) -> Any:
        part = {"type": "input_image", "image_url": url, "detail": detail}
        return client.post(
            TOKENS, json={"model": "gpt-4o", "input": [{"role": "user", "content": [part]}]}, headers=AUTH
        )

    small, large = count(png(64, 64), "high"), count(png(1600, 1600), "high")
    assert small.status_code == large.status_code == 200
    assert large.json()["input_tokens"] - small.json()["input_tokens"] == 170 * 3
    remote = count("https://example.com/cat.png", "low")
    assert remote.status_code == 200  # not fetched: counted as a 1024x1024 image


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": 5}, "input"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file_1"}]}]},
            "input[0].content[0]",
        ),
        ({"input": [{"role": "robot", "content": "hi"}]}, "input[0].role"),
        (
            {
                "input": [
                    {"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}
                ]
            },
            "input[0].content[0].image_url",
        ),
        ({"input": "hi", "tools": [{"type": "function"}]}, "tools[0].name"),
        ({"input": "hi", "temperature_of_sun": 1}, "temperature_of_sun"),
        ({"input": "x" * 900_001}, "input"),
    ],
)
def test_bad_bodies_are_400_with_param(client: TestClient, body: dict[str, Any], param: str) -> None:
    response = client.post(TOKENS, json={"model": "gpt-4o", **body}, headers=AUTH)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


def test_references_to_stored_objects_are_404(client: TestClient) -> None:
    response = client.post(TOKENS, json={"model": "gpt-4o", "input": "hi", "conversation": "conv_1"}, headers=AUTH)
    assert response.status_code == 404 and response.json()["error"]["param"] == "conversation"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
FIELDS = st.sampled_from(["model", "input", "instructions", "tools", "type", "role", "content", "text", "image_url"])


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.one_of(
        JSON,
        st.dictionaries(FIELDS, JSON, max_size=4),
        st.builds(
            lambda parts: {"model": "gpt-4o", "input": [{"role": "user", "content": parts}]},
            st.lists(
                st.dictionaries(
                    FIELDS, JSON | st.sampled_from(["input_text", "input_image", "input_file"]), max_size=3
                ),
                max_size=3,
            ),
        ),
    )
)
def test_arbitrary_bodies_never_cause_a_5xx(client: TestClient, body: Any) -> None:
    response = client.post(TOKENS, json=body, headers=AUTH)
    assert response.status_code < 500
    if response.status_code >= 400:
        assert set(response.json()["error"]) == {"type", "code", "message", "param"}
