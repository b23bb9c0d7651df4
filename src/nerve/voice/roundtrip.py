"""The English round-trip set and word error rate: speak a sentence, transcribe it, compare.

Used by tests/voice (assertions on the chosen engines) and bench/voice.py (the WER table). The
sentences are everyday requests an assistant hears, without digits or contractions, so that a
spelling choice ("2" / "two", "let's" / "let us") is never counted as a recognition error.
Each carries the content words that must survive the trip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SENTENCES", "word_error_rate", "word_errors", "words"]

SENTENCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("The weather is nice today.", ("weather", "today")),
    ("Please send the report to my manager.", ("send", "report", "manager")),
    ("I would like a cup of coffee.", ("cup", "coffee")),
    ("Open the door and turn on the light.", ("open", "door", "light")),
    ("Schedule a meeting for tomorrow morning.", ("meeting", "tomorrow", "morning")),
    ("The quick brown fox jumps over the lazy dog.", ("quick", "brown", "lazy")),
    ("How many people live in this city?", ("people", "live", "city")),
    ("Remind me to call my mother tonight.", ("call", "mother", "tonight")),
    ("The train leaves the station at noon.", ("train", "station", "noon")),
    ("Delete the old files from the folder.", ("delete", "files", "folder")),
    ("Can you book a table for four people?", ("book", "table", "people")),
    ("My phone battery is almost empty.", ("phone", "battery", "empty")),
    ("We need to buy milk and bread.", ("buy", "milk", "bread")),
    ("The children are playing in the garden.", ("children", "playing", "garden")),
    ("Turn the music down a little.", ("music", "down")),
    ("What time does the shop close?", ("time", "shop", "close")),
    ("She finished the project before the deadline.", ("finished", "project", "deadline")),
    ("The server is running out of memory.", ("server", "running", "memory")),
    ("He forgot his keys at the office.", ("forgot", "keys", "office")),
    ("Check the logs for any errors.", ("check", "logs", "errors")),
)


def words(text: str) -> list[str]:
    """Lowercase words; punctuation and hyphens become spaces, apostrophes stay."""
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()


def word_errors(reference: str, hypothesis: str) -> int:
    """Substitutions + deletions + insertions (word-level Levenshtein distance)."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        previous, row[0] = row[:], i
        for j, h in enumerate(hyp, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (r != h))
    return row[-1]


def word_error_rate(pairs: Iterable[tuple[str, str]]) -> float:
    """Corpus WER over (reference, hypothesis) pairs: all errors / all reference words."""
    errors = total = 0
    for reference, hypothesis in pairs:
        errors += word_errors(reference, hypothesis)
        total += len(words(reference))
    return errors / total if total else 0.0
