"""Input token counting with a real OpenAI tokenizer that works offline (``bpe-openai``).

The count follows the chat formatting of OpenAI models (documented constants below):

- every message costs ``MESSAGE_OVERHEAD`` boundary tokens (start, separator, end) plus its role's tokens plus
  its content; a string ``input`` is one ``user`` message; ``instructions`` is one ``developer`` message;
- every request pays ``REPLY_PRIMING`` tokens (the assistant turn the model starts);
- tools: ``TOOLS_OVERHEAD`` once when any tool is given, then per tool ``TOOL_OVERHEAD`` plus the tokens of
  the tool definition serialized deterministically (JSON, sorted keys, no spaces, UTF-8 kept);
- ``input_image``: ``detail=low`` costs 85; ``high``/``auto`` scale the image to fit 2048×2048, then its short
  side to 768, and cost ``85 + 170 × tiles`` (512-pixel tiles). The size comes from the decoded data URL; a
  remote URL is not fetched (the sandbox is offline) and is counted as a 1024×1024 image;
- ``function_call`` and ``function_call_output`` items count like messages over their text;
- file inputs and Files-API ids are refused with a 400 (the sandbox has no Files API and no PDF reader).

Encodings are chosen per model: ``o200k_base`` for the GPT-4o/4.1/4.5/5 and o-series families,
``cl100k_base`` for GPT-4 and GPT-3.5. Any other model is refused with ``400 model_not_found``.
"""

from __future__ import annotations

import base64
import binascii
import importlib.util
import io
import json
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image, UnidentifiedImageError

from conformance.core._shortcuts import bpe_tokenizer
from conformance.reference.platform.errors import ApiError, invalid, unknown_parameter, wrong_type

if TYPE_CHECKING:
    import bpe_openai

# The tokenizer is loaded on the first count (a costly import), not by every process that imports the sandbox (the
# stack, the test collection); whether it is installed is still known here, as an import of it would tell. The
# count is the Rust tokenizer's alone (shortcut ``tokenizer-backend``): the package's ``__init__`` builds every
# encoding's rank table in Python, which only its decoding reads; the package itself refuses what is too long.
if importlib.util.find_spec("bpe_openai") is None:
    raise ModuleNotFoundError("No module named 'bpe_openai'", name="bpe_openai")

MESSAGE_OVERHEAD = 3
REPLY_PRIMING = 3
TOOLS_OVERHEAD = 4
TOOL_OVERHEAD = 3
IMAGE_BASE = 85
IMAGE_TILE = 170
REMOTE_IMAGE_SIZE = (1024, 1024)
MAX_TEXT_CHARS = 900_000  # the tokenizer refuses a single text of 1,000,000 characters or more
CHUNK_LIMIT = 200_000  # bpe-openai's limit on the tokens of one text of these encodings (TokenLimitError above)

_O200K_PREFIXES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35")
DEFAULT_MODEL = "gpt-4o"

ROLES = ("user", "assistant", "system", "developer")
# Top-level fields the real endpoint takes that do not change the count here.
_FIELDS = {"model", "input", "instructions", "tools", "conversation", "previous_response_id"}
_IGNORED_FIELDS = {
    "reasoning",
    "text",
    "tool_choice",
    "parallel_tool_calls",
    "truncation",
    "max_output_tokens",
    "max_tokens",
    "metadata",
    "store",
    "temperature",
    "top_p",
}
_TOOL_TYPES = {
    "function",
    "mcp",
    "custom",
    "web_search",
    "web_search_preview",
    "file_search",
    "code_interpreter",
    "image_generation",
}


class Encoding:
    """One encoding's count of a text, as ``len(bpe_openai.get_encoding(name).encode_ordinary(text))``: bpe-openai's
    Rust tokenizer when the package hands it out alone; the package's ``Encoding`` for what it refuses (a text too
    long, too many tokens) and when the Rust tokenizer is not to be had alone."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tokenizer = bpe_tokenizer(name)
        self.whole: bpe_openai.Encoding | None = None

    def count(self, text: str) -> int:
        """The number of tokens; raises ``ValueError`` or ``bpe_openai.TokenizerError`` as the package does."""
        if self.tokenizer is not None:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates, replaced as the package's Encoding does
                text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            if not text:
                return 0
            if len(text) < 1_000_000:
                tokens = len(self.tokenizer.encode(text))
                if tokens <= CHUNK_LIMIT:
                    return tokens
        return len(self.package_encoding().encode_ordinary(text))

    def package_encoding(self) -> bpe_openai.Encoding:
        with _lock:
            if self.whole is None:
                import bpe_openai

                self.whole = bpe_openai.get_encoding(self.name)
            return self.whole


_lock = threading.Lock()
_encodings: dict[str, Encoding] = {}


def encoding_name_for(model: str) -> str:
    if model.startswith(_O200K_PREFIXES):
        return "o200k_base"
    if model.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    raise ApiError(
        404,
        "model_not_found",
        f"the model '{model}' does not exist",
        param="model",
        type_="invalid_request_error",
    )


def loaded() -> bool:
    """Whether a count has loaded the tokenizer (the next counts are cheap)."""
    return bool(_encodings)


def get_encoding(name: str) -> Encoding:
    with _lock:
        if name not in _encodings:
            _encodings[name] = Encoding(name)
        return _encodings[name]


def image_tokens(width: int, height: int, detail: str) -> int:
    if detail == "low":
        return IMAGE_BASE
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return IMAGE_BASE + IMAGE_TILE * tiles


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Counter:
    """Counts one request; ``mutants`` switch documented defects (see ``mutants.toml``)."""

    mutants: frozenset[str] = frozenset()
    encoding: Any = None
    _texts: list[str] = field(default_factory=list)

    def text(self, value: str, param: str) -> int:
        if len(value) > MAX_TEXT_CHARS:
            raise invalid(param, f"'{param}' is longer than {MAX_TEXT_CHARS} characters", "string_above_max_length")
        try:
            return int(self.encoding.count(value))
        except ValueError as exc:
            raise invalid(param, f"'{param}' cannot be tokenized: {exc}") from None
        except Exception as exc:
            import bpe_openai  # its own errors (an error path: the cost of its import does not matter)

            if not isinstance(exc, bpe_openai.TokenizerError):
                raise
            raise invalid(param, f"'{param}' cannot be tokenized: {exc}") from None

    def message(self, role: str, content_tokens: int) -> int:
        return MESSAGE_OVERHEAD + self.text(role, "role") + content_tokens

    def count(self, body: Any) -> int:
        if not isinstance(body, dict):
            raise wrong_type("body", "a JSON object")
        for name in body:
            if name not in _FIELDS and name not in _IGNORED_FIELDS:
                raise unknown_parameter(name)
        model = body.get("model", DEFAULT_MODEL)
        if not isinstance(model, str):
            raise wrong_type("model", "a string")
        self.encoding = get_encoding(encoding_name_for(model))
        for ref in ("conversation", "previous_response_id"):
            if body.get(ref) is not None:
                # The sandbox stores no conversations or responses: any reference is unknown.
                raise ApiError(404, "not_found", f"'{ref}' refers to nothing the sandbox has stored", param=ref)

        total = REPLY_PRIMING
        instructions = body.get("instructions")
        if instructions is not None:
            if not isinstance(instructions, str):
                raise wrong_type("instructions", "a string")
            if "instructions-not-counted" not in self.mutants:
                total += self.message("developer", self.text(instructions, "instructions"))
        tools = body.get("tools")
        if tools is not None:
            total += self.tools(tools)
        if "input" in body:
            total += self.input(body["input"])
        return total

    def tools(self, tools: Any) -> int:
        if not isinstance(tools, list):
            raise wrong_type("tools", "an array")
        total = TOOLS_OVERHEAD if tools else 0
        for i, tool in enumerate(tools):
            param = f"tools[{i}]"
            if not isinstance(tool, dict):
                raise wrong_type(param, "an object")
            kind = tool.get("type")
            if not isinstance(kind, str):
                raise wrong_type(f"{param}.type", "a string")
            if kind not in _TOOL_TYPES:
                raise invalid(f"{param}.type", f"unknown tool type '{kind}'")
            if kind == "function":
                if not isinstance(tool.get("name"), str) or not tool["name"]:
                    raise wrong_type(f"{param}.name", "a non-empty string")
                if tool.get("description") is not None and not isinstance(tool["description"], str):
                    raise wrong_type(f"{param}.description", "a string")
                if tool.get("parameters") is not None and not isinstance(tool["parameters"], dict):
                    raise wrong_type(f"{param}.parameters", "a JSON Schema object")
                if tool.get("strict") is not None and not isinstance(tool["strict"], bool):
                    raise wrong_type(f"{param}.strict", "a boolean")
            try:
                serialized = canonical_json(tool)
            except ValueError as exc:  # e.g. NaN is not JSON
                raise invalid(param, f"'{param}' cannot be serialized: {exc}") from None
            total += TOOL_OVERHEAD + self.text(serialized, param)
        return 0 if "tools-not-counted" in self.mutants else total

    def input(self, value: Any) -> int:
        if isinstance(value, str):
            return self.message("user", self.text(value, "input"))
        if not isinstance(value, list):
            raise wrong_type("input", "a string or an array of input items")
        costs = [self.item(item, f"input[{i}]") for i, item in enumerate(value)]
        if "count-only-last-item" in self.mutants and costs:
            return costs[-1]
        return sum(costs)

    def item(self, item: Any, param: str) -> int:
        if not isinstance(item, dict):
            raise wrong_type(param, "an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if not isinstance(role, str):
                raise wrong_type(f"{param}.role", "a string")
            if role not in ROLES:
                raise invalid(f"{param}.role", f"unknown role '{role}'")
            content = self.content(item.get("content"), f"{param}.content")
            if "message-items-without-boundaries" in self.mutants:
                return content  # the defect: roles and message boundaries cost nothing
            return self.message(role, content)
        if kind == "function_call":
            for name in ("call_id", "name", "arguments"):
                if not isinstance(item.get(name), str):
                    raise wrong_type(f"{param}.{name}", "a string")
            return self.message("assistant", self.text(item["name"], param) + self.text(item["arguments"], param))
        if kind == "function_call_output":
            if not isinstance(item.get("call_id"), str):
                raise wrong_type(f"{param}.call_id", "a string")
            if not isinstance(item.get("output"), str):
                raise wrong_type(f"{param}.output", "a string")
            return self.message("tool", self.text(item["output"], f"{param}.output"))
        if not isinstance(kind, str):
            raise wrong_type(f"{param}.type", "a string")
        raise invalid(f"{param}.type", f"unknown input item type '{kind}'")

    def content(self, content: Any, param: str) -> int:
        if isinstance(content, str):
            return self.text(content, param)
        if not isinstance(content, list):
            raise wrong_type(param, "a string or an array of content parts")
        return sum(self.part(part, f"{param}[{i}]") for i, part in enumerate(content))

    def part(self, part: Any, param: str) -> int:
        if not isinstance(part, dict):
            raise wrong_type(param, "an object")
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            if "text-number-coerced" in self.mutants and isinstance(part.get("text"), int | float):
                part = {**part, "text": str(part["text"])}  # a lenient parser: 12345 is counted as "12345"
            if not isinstance(part.get("text"), str):
                raise wrong_type(f"{param}.text", "a string")
            return self.text(part["text"], f"{param}.text")
        if kind == "input_image":
            return self.image(part, param)
        if kind == "input_file":
            raise invalid(
                param,
                "file inputs are not supported by the sandbox (no Files API, no PDF reader)",
                "unsupported_content_type",
            )
        if "unknown-part-ignored" in self.mutants:
            return 0  # a lenient parser: a part it does not know costs nothing and the request is counted
        if not isinstance(kind, str):
            raise wrong_type(f"{param}.type", "a string")
        raise invalid(f"{param}.type", f"unknown content part type '{kind}'")

    def image(self, part: dict[str, Any], param: str) -> int:
        detail = part.get("detail", "auto")
        if detail not in ("low", "high", "auto"):
            raise invalid(f"{param}.detail", "'detail' must be one of low, high, auto")
        url = part.get("image_url")
        if part.get("file_id") is not None:
            raise invalid(f"{param}.file_id", "the sandbox has no Files API; send image_url", "file_not_found")
        if not isinstance(url, str):
            raise wrong_type(f"{param}.image_url", "a string (URL or base64 data URL)")
        if url.startswith("data:"):
            width, height = _data_url_size(url, f"{param}.image_url")
        elif url.startswith(("https://", "http://")):
            width, height = REMOTE_IMAGE_SIZE
        else:
            raise invalid(f"{param}.image_url", "'image_url' must be an http(s) URL or a data URL")
        if "images-not-counted" in self.mutants:
            return 0
        return image_tokens(width, height, detail)


def _data_url_size(url: str, param: str) -> tuple[int, int]:
    header, sep, data = url.partition(",")
    if not sep or not header.endswith(";base64") or not header[5:].startswith("image/"):
        raise invalid(param, "expected a data URL of the form data:image/<type>;base64,<data>", "invalid_image_url")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(param, "the data URL is not valid base64", "invalid_image_url") from None
    try:
        # Only the header is parsed: the size is known without decoding the pixels (no decompression bomb).
        with Image.open(io.BytesIO(raw)) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        raise invalid(param, "the data URL does not contain a readable image", "invalid_image") from None
    if width <= 0 or height <= 0:
        raise invalid(param, "the image has no pixels", "invalid_image")
    return width, height


def count_input_tokens(body: Any, mutants: frozenset[str] = frozenset()) -> int:
    return Counter(mutants).count(body)
