"""The packaged Dakshina-derived word model and what it adds to detection (SPEC LG-1, LG-2)."""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from nerve.language import detect, wordmodel
from nerve.language.tokens import INDIC


@pytest.fixture
def fresh_model() -> Iterator[None]:
    wordmodel.model.cache_clear()
    yield
    wordmodel.model.cache_clear()


def test_the_packaged_model_loads_with_every_indic_language_and_english() -> None:
    """LG-1: the model ships inside the package, small, and attests each language's words."""
    path = resources.files("nerve.language") / "model" / wordmodel.MODEL
    assert len(path.read_bytes()) < 3_000_000
    model = wordmodel.model()
    assert model.loaded
    assert (*INDIC, "en") == wordmodel.ORDER
    for lang, word in [("hi", "itihas"), ("bn", "ebong"), ("ta", "irukkirathu"),
                       ("te", "chesaru"), ("kn", "maadidaru"), ("ml", "aanu")]:  # fmt: skip
        k = INDIC.index(lang)
        assert word in model.common[k] or word in model.rare[k], (lang, word)
    assert len(model.loglik("ebong")) == len(wordmodel.ORDER)


def test_a_corrupt_model_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    """LG-2: bytes that are not a gzipped model, or a model of other languages, are refused."""
    with pytest.raises(wordmodel.ModelError, match=r"broken\.gz"):
        wordmodel.parse(b"not gzip at all", "broken.gz")
    wrong = gzip.compress(b'{"langs": ["fr"], "common": {}}')
    with pytest.raises(wordmodel.ModelError, match="expected languages"):
        wordmodel.parse(wrong, "wrong.gz")
    with pytest.raises(wordmodel.ModelError, match="missing"):
        wordmodel.read(tmp_path / "absent.json.gz")  # type: ignore[arg-type]


def test_an_unreadable_model_falls_back_to_the_lexicons_with_a_warning(
    fresh_model: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """LG-2: detection is on the request path: it never fails for want of the model file."""

    def broken(path: object) -> wordmodel.WordModel:
        raise wordmodel.ModelError(f"{path}: missing")

    monkeypatch.setattr(wordmodel, "read", broken)
    with caplog.at_level(logging.WARNING, logger="nerve.language.wordmodel"):
        assert not wordmodel.model().loaded
    assert "curated lexicons only" in caplog.text
    assert detect("anna indha file ah csv convert pannu").languages == ["ta", "en"]


def test_stretched_letters_are_scored_as_the_attested_spelling() -> None:
    """LG-1: `bossuuuu`, `pwoliiii`: runs of three or more are cut to two, or one."""
    model = wordmodel.model()
    assert model.form("pwoliiiii") in ("pwolii", "pwoli")
    assert model.form("ebonggg") == "ebong"
    assert model.form("plain") == "plain"


def test_the_longest_listed_ending_names_the_language_and_ties_go_to_langs_order() -> None:
    """LG-1: `ending_lang` looks the word's own endings up, longest first (a speed-up that
    must keep the old rule: longest ending wins; of equal ones, the first language in LANGS)."""
    from nerve.language.ngram import NgramModel

    suffixes = {"ta": ["kkiraan", "aan"], "te": ["tunnaadu", "raan"], "ml": ["raan"]}
    model = NgramModel({}, suffixes)
    assert model.ending_lang("cheppatunnaadu") == "te"
    assert model.ending_lang("seikkiraan") == "ta"  # -kkiraan beats the shorter -raan
    assert model.ending_lang("varraan") == "te"  # te and ml list -raan: te comes first
    assert model.ending_lang("raan") is None  # the word must be longer than its ending
    assert model.ending_lang("paan") is None  # -aan is shorter than four letters


def test_unigram_totals_are_the_sum_of_the_one_letter_grams() -> None:
    """LG-1: the char model's unigram total per language, computed at load from the 1-grams."""
    model = wordmodel.model()
    for k, table in enumerate(model._grams):
        assert model._unigrams[k] == sum(c for g, c in table.items() if len(g) == 1)


def test_words_frequent_in_real_sentences_weigh_more_than_rare_spellings() -> None:
    """LG-1: the model counts words in Dakshina's tune sentences (pure Indic ones): a word
    people write often in a language weighs more there than a spelling attested once."""
    model = wordmodel.model()
    hi = wordmodel.ORDER.index("hi")
    assert model.freq[hi]["hai"] > 100
    rare = next(w for w in sorted(model.rare[hi]) if w not in model.freq[hi] and len(w) == 3)
    assert model.loglik("hai")[hi] > model.loglik(rare)[hi] + 3


def test_english_words_that_are_frequent_indic_words_are_settled_by_the_sentence() -> None:
    """LG-2: `in`, `or` (Hindi `these`, `and`), `a` (Bengali) are English spellings too: in a
    pure Hindi or Bengali sentence they are not English, so the sentence is not code-switched;
    real Hinglish, with English words, still is."""
    model = wordmodel.model()
    assert {"hi"} <= model.indic_usage("in", True) and "bn" in model.indic_usage("a", True)
    assert not model.indic_usage("for", True)
    for text, want in [
        ("in logon ne or bhi kaam kiya", ["hi"]),
        ("ve log in baton ko nahi mante or chup rehte hain", ["hi"]),
        ("ami a kotha boli ni", ["bn"]),
        ("kal subah 6 am ka alarm set karo", ["hi", "en"]),
        ("mujhe kal ki meeting ke liye remind karna", ["hi", "en"]),
        ("in songs ko play karo", ["hi", "en"]),
        ("I am going to the office", ["en"]),
    ]:
        assert detect(text).languages == want, text


def test_a_model_without_a_frequency_table_still_loads() -> None:
    """LG-2: `freq` is optional: an older model file scores by attestation alone."""
    model = wordmodel.empty()
    assert model.freq[0] == {} and not model.indic_usage("in", True)
