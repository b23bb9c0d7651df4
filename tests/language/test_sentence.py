"""The sentence model: which Indic language a whole sentence's n-grams lean to (SPEC LG-1, LG-2).

The sentences here are written for these tests, not taken from Dakshina's held-out rows.
"""

from __future__ import annotations

import gzip
import importlib
import logging
from collections.abc import Iterator
from importlib import resources

import pytest

from nerve.language import detect, sentence
from nerve.language.tokens import INDIC


@pytest.fixture
def fresh_model() -> Iterator[None]:
    sentence.model.cache_clear()
    yield
    sentence.model.cache_clear()


def test_the_packaged_sentence_model_loads_and_ranks_whole_sentences() -> None:
    """LG-1: the model ships in the package, and the models together stay under 3 MB."""
    folder = resources.files("nerve.language") / "model"
    size = len((folder / sentence.MODEL).read_bytes())
    assert size < 1_000_000
    assert size + len((folder / "romanized.json.gz").read_bytes()) < 3_000_000
    model = sentence.model()
    assert model.loaded
    for lang, words in [
        ("te", ["ee", "graamamlo", "praathamika", "paatasaala", "undi"]),
        ("kn", ["ee", "graamadalli", "praathamika", "shaale", "ide"]),
        ("ml", ["ee", "graamathile", "pradhaana", "thozhil", "krishiyaanu"]),
        ("ta", ["indha", "kovil", "pathinaangaam", "noortraandil", "kattappattathu"]),
        ("bn", ["ei", "graame", "ekti", "prathomik", "bidyaloy", "ache"]),
        ("hi", ["is", "gaon", "mein", "ek", "prathmik", "vidyalay", "hai"]),
    ]:
        scores = model.score(words)
        assert max(scores) == 0.0
        assert scores.index(0.0) == INDIC.index(lang), (lang, scores)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # Each word alone leans Kannada, Malayalam or Hindi; the sentence is Telugu / Bengali.
        ("praathamika paatasaala", "te"),
        ("samudra teeraana undi", "te"),
        ("pattanam samudra teeraana", "te"),
        ("jelar pradhan", "bn"),
    ],
)
def test_the_sentence_model_settles_which_indic_language_a_short_sentence_is(
    text: str, lang: str
) -> None:
    """LG-1: without the sentence model the word votes pick the wrong Indic language here."""
    assert detect(text).languages[:1] == [lang]


def test_the_sentence_model_does_not_move_a_lone_word_or_english(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LG-1, LG-2: one word is the word model's to judge, and Indic-vs-English and code-switching
    stay with the word votes: the same results with the sentence model switched off."""
    texts = ["paatasaala", "teeraana", "please check my emails and send the report",
             "mera order cancel kar do", "kal meeting hai boss ke saath"]  # fmt: skip
    with_model = [detect(t).languages for t in texts]
    monkeypatch.setattr(importlib.import_module("nerve.language.detect"), "_SENTENCE", 0.0)
    assert [detect(t).languages for t in texts] == with_model
    assert with_model[2] == ["en"]
    assert set(with_model[3]) == {"hi", "en"}


def test_a_corrupt_sentence_model_is_an_error_naming_the_file() -> None:
    """LG-2: bytes that are not a model, or a model of other languages, are refused by name."""
    with pytest.raises(sentence.ModelError, match=r"broken\.gz"):
        sentence.parse(b"not gzip", "broken.gz")
    wrong = gzip.compress(b'{"langs": ["fr"], "grams": "", "weights": {}}')
    with pytest.raises(sentence.ModelError, match="expected languages"):
        sentence.parse(wrong, "wrong.gz")
    weights = ", ".join(f'"{lang}": [0]' for lang in INDIC)  # one weight, two n-grams
    langs = ", ".join(f'"{lang}"' for lang in INDIC)
    blob = f'{{"langs": [{langs}], "grams": "a b", "weights": {{{weights}}}}}'
    short = gzip.compress(blob.encode())
    with pytest.raises(sentence.ModelError, match=r"short\.gz"):
        sentence.parse(short, "short.gz")


def test_an_unreadable_sentence_model_falls_back_to_the_word_votes(
    fresh_model: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """LG-2: detection is on the request path: a broken file costs the model, not the call."""

    def broken(blob: bytes, source: str = "") -> sentence.SentenceModel:
        raise sentence.ModelError(f"{source}: not a nerve sentence model")

    monkeypatch.setattr(sentence, "parse", broken)
    with caplog.at_level(logging.WARNING, logger="nerve.language.sentence"):
        assert not sentence.model().loaded
        assert detect("ee graamamlo praathamika paatasaala undi").languages == ["te"]
    assert "word votes only" in caplog.text
