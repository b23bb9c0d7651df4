"""A token estimate without a tokenizer: for count_tokens and message_start's input usage.

No BPE vocabulary can be loaded here (tiktoken downloads its files), so text is cut the way BPE
tokenizers pre-tokenize it (a word with its leading space, digit groups of up to three,
punctuation runs, whitespace runs) and each piece is priced: a word costs one token per six
letters of each camelCase hump, a punctuation run one per three characters, spaces one per two
(newer vocabularies take an indent in one token, GPT-2's takes a token a space: the middle errs
high, the safe side for compaction). Letters outside Latin script cost more, as they do in
vocabularies trained mostly on English: Greek and Cyrillic about 1/2 a token, Indic and other
Asian scripts about 3/4, CJK one, emoji two. Measured against GPT-2's BPE (tests/gateway/
test_tokens.py) it lands within 25% on English prose, Python code and JSON.

    estimate_tokens(text)        a string; 0 only for ""
    count_message_tokens(body)   an Anthropic Messages body (system, messages, tools); >= 1
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import orjson

__all__ = ["count_message_tokens", "estimate_tokens", "image_tokens"]

_PIECES = re.compile(
    r"'(?:[sdmtSDMT]|ll|ve|re)\b"  # contractions: 's 'll 've
    r"| ?[^\W\d_]+"  # a word in any script, with its leading space
    r"|\d{1,3}"  # numbers go three digits a token
    r"| ?(?:[^\s\w]|_)+"  # a punctuation run
    r"|\s*[\r\n]+"  # line breaks, with the spaces before them
    r"|\s+(?!\S)"  # spaces before spaces: an indent, less the one the next word takes
    r"|\s+"
)
_HUMPS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_LETTERS_PER_TOKEN = 6
_PUNCTUATION_PER_TOKEN = 3
_SPACES_PER_TOKEN = 2

IMAGE_TOKENS = 1500  # an image whose size is not known; Anthropic's cap is about 1,600
_MESSAGE_TOKENS = 4  # a turn's role and separators
_BLOCK_TOKENS = 3  # a tool_use's or tool_result's framing: id, name
_TOOLS_TOKENS = 300  # the system prompt Anthropic adds when tools are given (~313-346)


def estimate_tokens(text: str) -> int:
    """About how many tokens a BPE tokenizer makes of `text`; at least 1 unless it is empty."""
    if not text:
        return 0
    count = 0.0
    for piece in _PIECES.findall(text):
        core = piece.strip()
        if not core:
            count += 1 if "\n" in piece or "\r" in piece else _ceil(piece, _SPACES_PER_TOKEN)
        elif core.isascii() and not core[-1].isalpha():
            count += 1 if core[0].isdigit() else _ceil(core, _PUNCTUATION_PER_TOKEN)
        else:
            count += _word(core)
    return max(1, math.ceil(count))


def _ceil(piece: str, per_token: int) -> int:
    return -(-len(piece) // per_token)


def _word(word: str) -> float:
    if word.isascii():
        return sum(_ceil(hump, _LETTERS_PER_TOKEN) for hump in _HUMPS.findall(word)) or 1
    latin = "".join(c for c in word if c.isascii())
    cost = sum(_ceil(hump, _LETTERS_PER_TOKEN) for hump in _HUMPS.findall(latin))
    return max(1.0, cost + sum(_char_cost(c) for c in word if not c.isascii()))


def _char_cost(c: str) -> float:
    point = ord(c)
    if point < 0x370:  # Latin with diacritics, combining accents
        return 0.25
    if point < 0x900:  # Greek, Cyrillic, Armenian, Hebrew, Arabic
        return 0.5
    if point < 0x1100 or 0x1780 <= point < 0x1800:  # Indic, Thai, Lao, Tibetan, Myanmar, Khmer
        return 0.75
    if point >= 0x1F000:  # emoji
        return 2.0
    return 1.0  # CJK, kana, Hangul, and the rest


def count_message_tokens(body: dict[str, Any]) -> int:
    """An Anthropic Messages body's input: system, every block of every message, the tools."""
    total = _content(body.get("system"))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            total += _MESSAGE_TOKENS + _content(message.get("content"))
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        total += _TOOLS_TOKENS + sum(_json(tool) for tool in tools)
    return max(1, total)


def _content(content: Any) -> int:
    if isinstance(content, str):
        return estimate_tokens(content)
    if not isinstance(content, list):
        return 0
    return sum(_block(block) for block in content if isinstance(block, dict))


def _block(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return estimate_tokens(_str(block.get("text")))
    if kind == "thinking":  # the signature is checked, not read
        return estimate_tokens(_str(block.get("thinking")))
    if kind == "redacted_thinking":
        return 0  # opaque, and Anthropic drops earlier turns' thinking from the context
    if kind == "image":
        return image_tokens(block.get("source"))
    if kind == "tool_use":
        return _BLOCK_TOKENS + estimate_tokens(_str(block.get("name"))) + _json(block.get("input"))
    if kind == "tool_result":
        return _BLOCK_TOKENS + _content(block.get("content"))
    if kind == "document":
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "text":
            return estimate_tokens(_str(source.get("data")))
        if isinstance(source, dict) and source.get("type") == "content":
            return _content(source.get("content"))
        return IMAGE_TOKENS  # a PDF: a page costs about what an image does
    return _json(block)  # server tool blocks, search results, kinds added later


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _json(value: Any) -> int:
    return estimate_tokens(orjson.dumps(value).decode()) if value is not None else 0


def image_tokens(source: Any) -> int:
    """Anthropic's formula, width * height / 750 after it scales the image down to a long edge
    of 1,568 and 1.15 megapixels, where a base64 PNG, GIF or JPEG shows its size; else a flat
    estimate."""
    size = _image_size(source)
    if size is None:
        return IMAGE_TOKENS
    width, height = size
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return max(1, math.ceil(width * height * scale * scale / 750))


def _image_size(source: Any) -> tuple[int, int] | None:
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    data = source.get("data")
    if not isinstance(data, str):
        return None
    try:  # the header is enough: 64 KB of base64 holds any JPEG's frame header in practice
        head = base64.b64decode(data[:65536], validate=False)
    except (binascii.Error, ValueError):
        return None
    size: tuple[int, int] | None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        size = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    elif head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    elif head[:2] == b"\xff\xd8":
        size = _jpeg_size(head)
    else:
        return None
    return size if size is not None and size[0] > 0 and size[1] > 0 else None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """A JPEG's size, from its first start-of-frame marker (SOF0-SOF15 but DHT, JPG, DAC)."""
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            return int.from_bytes(data[i + 7 : i + 9], "big"), height
        i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None
