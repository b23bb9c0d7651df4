"""Bad input never raises and big input stays cheap (SPEC LG-2)."""

from __future__ import annotations

import random
import time

import orjson
import pytest

from nerve.language import detect, normalize


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\x00",
        "file\x00 bhejo\x00",
        "\ud800",
        "report \udfff banao \ud83d",
        "\ufeff\u200b\u200c\u200d",
        "्ािीु",  # combining marks with no base letter
        "a'b'c''d ' '",
        "x" * 10_000,
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ],
)
def test_odd_input_never_raises_and_always_encodes_as_json(text: str) -> None:
    """LG-2: NUL, lone surrogates, stray marks and joiners give a record that serializes."""
    result = detect(text)
    encoded = orjson.dumps(result.to_dict())
    assert orjson.loads(encoded)["languages"] == result.languages
    assert "\ud800" not in result.original_text
    assert isinstance(normalize(text), str)


def test_binary_looking_text_never_raises() -> None:
    """LG-2: random bytes read as Latin-1 or UTF-8 with replacement."""
    rng = random.Random(7)
    for _ in range(50):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        for text in (blob.decode("latin-1"), blob.decode("utf-8", "replace")):
            result = detect(text)
            assert 0.0 <= result.confidence <= 1.0


def test_a_megabyte_of_text_is_handled_within_a_second() -> None:
    """LG-2: only the first words are examined; the whole text is still normalized."""
    text = ("mere saare emails check karo aur report manager ko bhejo. " * 20_000)[: 1 << 20]
    detect("warm up the lexicons")
    start = time.perf_counter()
    result = detect(text)
    elapsed = time.perf_counter() - start
    assert result.languages == ["hi", "en"]
    assert len(result.normalized_text) > len(text) // 2
    assert result.normalized_text.count(" send. ") > 10_000
    assert elapsed < 1.0


def test_a_megabyte_without_words_is_handled_within_a_second() -> None:
    """LG-2: no tokens at all is no slower."""
    text = "1234567890 .,;!? " * 62_000
    start = time.perf_counter()
    assert detect(text).languages == []
    assert time.perf_counter() - start < 1.0
