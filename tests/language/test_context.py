"""Neighbours, loanwords and names in a sentence's decision (SPEC LG-1, LG-2)."""

from __future__ import annotations

import importlib

import pytest

from nerve.language import detect, wordmodel
from nerve.language.context import smooth
from nerve.language.votes import votes_of

detect_module = importlib.import_module("nerve.language.detect")


def test_a_lone_english_looking_word_among_indic_words_is_tempered_by_its_neighbours() -> None:
    """LG-2: `lounge` alone looks English; between Bengali words its English odds fall."""
    votes = votes_of("tini lounge e chilen")
    lounge = votes[1]
    assert lounge.kind == "unlisted" and lounge.alone > 0.7
    smooth(votes)
    assert lounge.p_en < 0.1
    assert lounge.alone > 0.7  # what the word said alone is kept
    assert lounge.posterior is not None
    assert sum(lounge.posterior.values()) == pytest.approx(1.0)


def test_two_english_looking_words_side_by_side_keep_their_own_odds() -> None:
    """LG-2: a phrase (`dew point`) backs itself: neither word is pulled to the Indic side."""
    votes = votes_of("ami dew point dekhi")
    before = [v.p_en for v in votes]
    smooth(votes)
    assert [v.p_en for v in votes] == before


def test_a_one_word_text_is_not_smoothed() -> None:
    """LG-2: with no neighbour there is no context: the word's own odds stand."""
    votes = votes_of("lounge")
    before = votes[0].p_en
    smooth(votes)
    assert votes[0].p_en == before


def test_english_words_an_indic_language_uses_in_its_own_text_are_its_loanwords() -> None:
    """LG-2: Bengali Wikipedia writes `run` and `test` (cricket) as its own: one of them in a
    Bengali sentence is a loanword, not code-switching; `movie` is Hindi's, not Bengali's."""
    model = wordmodel.model()
    assert "bn" in model.loaned("run") and "bn" in model.loaned("test")
    assert "hi" in model.loaned("movie") and "bn" not in model.loaned("movie")
    result = detect("tini matro 12 run koren")
    assert result.languages == ["bn"] and not result.is_code_switched
    # A phrase is still English spoken, and so is an English word no Indic text uses.
    assert detect("tini ekti test match khelechilen").languages == ["bn", "en"]
    assert detect("tini kal ekta notun reminder set korben").languages == ["bn", "en"]


def test_a_long_sentence_with_an_english_word_no_indic_text_uses_is_code_switched() -> None:
    """LG-2: one English word in a long sentence is usually a loan, but `message`, which no
    Indic sentence of Dakshina uses, is English spoken up to a longer sentence."""
    model = wordmodel.model()
    assert not model.used("message")
    text = "seema ko message karo ki mujhe aaj ghar jaane ke liye thodi der hogi"
    assert len(text.split()) > detect_module._SHORT
    assert detect(text).languages == ["hi", "en"]


def test_a_names_spelling_leans_the_sentence_to_its_language() -> None:
    """LG-1: names do not vote for a language, but their spelling counts in the Indic lean
    (`Ramalingaiah` is a Telugu name, attested only in Telugu)."""
    votes = votes_of("avaru Ramalingaiah garu")
    name = votes[1]
    assert name.kind == "name" and name.ll is not None
    with_name = detect_module._indic_lean(votes, [])
    name.ll = None
    without = detect_module._indic_lean(votes, [])
    assert with_name["te"] / sum(with_name.values()) > without["te"] / sum(without.values())
    assert sum(with_name.values()) == pytest.approx(sum(without.values()))  # names do not speak
