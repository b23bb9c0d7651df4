"""Accuracy over the romanized evaluation sets in tests/language/data (SPEC LG-1, LG-2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nerve.language import detect

DATA = Path(__file__).parent / "data"


def _rows(lang: str) -> list[tuple[str, list[str]]]:
    rows = []
    for line in (DATA / f"romanized_{lang}.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            text, languages = line.split("\t")
            rows.append((text, languages.split(",")))
    return rows


@pytest.mark.parametrize("lang", ["hi", "ta", "te", "kn", "ml", "bn"])
def test_the_primary_language_is_right_for_at_least_95_percent_of_a_set(lang: str) -> None:
    """LG-1: everyday romanized requests with English loanwords, 40+ per language."""
    rows = _rows(lang)
    assert len(rows) >= 40
    assert all(want[0] == lang for _, want in rows)
    misses = [text for text, want in rows if detect(text).languages[:1] != want[:1]]
    accuracy = 1 - len(misses) / len(rows)
    assert accuracy >= 0.95, misses


@pytest.mark.parametrize("lang", ["hi", "ta", "te", "kn", "ml", "bn"])
def test_code_switching_is_flagged_as_annotated_for_at_least_95_percent(lang: str) -> None:
    """LG-2: a sentence with English loanwords is code-switched, one without is not."""
    rows = _rows(lang)
    misses = [text for text, want in rows if detect(text).is_code_switched != (len(want) > 1)]
    assert 1 - len(misses) / len(rows) >= 0.95, misses
