"""The lexicon files: one per language, a documented format, easy to extend (SPEC LG-3)."""

from __future__ import annotations

from importlib import resources

import pytest

from nerve.language import LANGS
from nerve.language.lexicon import LexiconError, load, parse


@pytest.mark.parametrize("lang", LANGS)
def test_every_language_has_a_lexicon_file_that_parses(lang: str) -> None:
    """LG-3: lexicons/<lang>.tsv exists for each language and follows the format."""
    text = (resources.files("nerve.language") / "lexicons" / f"{lang}.tsv").read_text("utf-8")
    lexicon = parse(text, lang, f"{lang}.tsv")
    assert len(lexicon.words) >= 300
    if lang != "en":
        keywords = {english for english in lexicon.words.values() if english}
        assert {"do", "send", "show", "change", "delete"} <= keywords


def test_the_seed_keywords_are_in_the_lexicons() -> None:
    """LG-3: the mappings the SPEC names."""
    by_lang = load().by_lang
    expected = {
        "ta": {"pannu": "do", "maathru": "change", "anuppu": "send"},
        "hi": {"karo": "do", "banao": "create", "bhejo": "send"},
        "te": {"cheyyi": "do", "pampu": "send", "chupinchu": "show"},
    }
    for lang, words in expected.items():
        for word, english in words.items():
            assert by_lang[lang].words[word] == english


def test_the_format_accepts_comments_glosses_and_suffixes() -> None:
    """LG-3: the documented format, by example."""
    text = "# a comment\n\nnaan\tword\tI\npannu\tkeyword\tdo\nthe\tfunction\n-nga\tsuffix\n"
    lexicon = parse(text, "ta")
    assert lexicon.words == {"naan": None, "pannu": "do", "the": None}
    assert lexicon.function == frozenset({"the"})
    assert lexicon.suffixes == ("nga",)


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ("pannu", "expected word<TAB>kind"),
        ("pannu\tverb\tdo", "kind must be one of"),
        ("pannu\tkeyword", "needs its English keyword"),
        ("nga\tsuffix", "leading '-'"),
        ("two words\tword", "one word per line"),
    ],
)
def test_a_malformed_line_is_reported_with_its_file_and_line(line: str, complaint: str) -> None:
    """LG-3: a broken entry stops loading with a message naming where it is."""
    with pytest.raises(LexiconError, match=complaint) as error:
        parse(f"# header\n{line}\n", "ta", "ta.tsv")
    assert "ta.tsv:2" in str(error.value)


def test_native_script_entries_are_stored_in_nfc() -> None:
    """LG-3: a nukta written decomposed or precomposed is the same word."""
    precomposed, decomposed = "\u0958", "\u0915\u093c"  # क़
    a = parse(f"{precomposed}ो\tkeyword\tdo\n", "hi").words
    b = parse(f"{decomposed}ो\tkeyword\tdo\n", "hi").words
    assert a == b
