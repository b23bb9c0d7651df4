"""The cascade's `when` layers: a route chosen by what a message is (SPEC GW-5, TP-3).

language  a route with `when: {languages: [ta, hi]}` takes a message when one of those is
          among the languages nerve.language detects in it, romanized or native script. A
          code-switched message counts for each language the detector reports, since it
          reports one only with a real share of the words (a listed word, one unmistakable
          word, or several n-gram votes; a second romanized Indic language needs two words
          of its own). On the held-out half of Hinglish-TOP this takes 98.6% of the Hinglish
          queries to a Hindi route and 0.1% of their English originals
          (bench/routing_when.py); requiring Hindi to lead instead would take only 95.4%.
          When several routes could take it, the language with the larger share wins, then
          config order. Code is left out first (tasks.prose_of): commands and identifiers
          look like romanized words (16.9% of shell one-liners were "not English" without
          this, 3.3% with it). Detection costs about a microsecond a character, so only the
          ends of a long message are read: ~+90 µs on a short ask, ~+400 µs on 2 KB.
task      `when: {task: code | reasoning | multilingual}`: the cues of tasks.py, or "not
          English" (a non-English language detected, or letters of a script nerve does not
          detect: CJK, Cyrillic, Arabic...). Routes are tried in config order.
          `languages` and `task` together must both hold; such a route is a language route.
private   `when: {task: private}` is not a preference but a constraint, so it is asked before
          everything else, over every message of the request (they all go upstream): the
          x-nerve-private header, or personal data (pii.py; `when.pii` narrows the kinds).

Nothing here runs unless a route has `when`; a message is detected at most once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nerve.config import RouteConfig
from nerve.config_routes import PII_KINDS
from nerve.gateway.router.pii import find_pii, message_texts
from nerve.gateway.router.tasks import code_cue, prose_of, reasoning_cue
from nerve.language import detect

__all__ = ["PRIVATE_HEADER", "Evidence", "Reading", "WhenLayers", "wants_private"]

PRIVATE_HEADER = "x-nerve-private"
_LANG_HEAD, _LANG_TAIL = 240, 120  # chars of a long message detection reads


def wants_private(headers: Mapping[str, str]) -> bool:
    """Whether lower-cased request headers ask for local models only (`x-nerve-private: true`)."""
    return headers.get(PRIVATE_HEADER, "").strip().lower() in ("true", "1", "yes")


@dataclass(frozen=True, slots=True)
class Evidence:
    route: str
    layer: Literal["rules", "semantic", "language", "task"]
    score: float
    detail: str


class Reading:
    """One message, its languages detected on first demand and kept."""

    __slots__ = ("_languages", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._languages: tuple[list[str], float] | None = None

    @property
    def languages(self) -> tuple[list[str], float]:
        """The detected languages, largest share first, and the detector's confidence."""
        if self._languages is None:
            text = prose_of(self.text)
            if len(text) > _LANG_HEAD + _LANG_TAIL:
                text = f"{text[:_LANG_HEAD]}\n{text[-_LANG_TAIL:]}"
            found = detect(text)
            self._languages = (found.languages, found.confidence)
        return self._languages

    def task(self, task: str) -> str | None:
        """Why the message is of `task`, or None."""
        if task == "code":
            return code_cue(self.text)
        if task == "reasoning":
            return reasoning_cue(self.text)
        if task == "multilingual":
            languages, _ = self.languages
            if any(lang != "en" for lang in languages):
                return f"not English: {', '.join(languages)}"
            if not languages and any(c.isalpha() for c in prose_of(self.text[:_LANG_HEAD])):
                return "not English: a script nerve does not detect"
        return None


class WhenLayers:
    """The routes with `when`, by layer; built once per config."""

    def __init__(self, routes: Sequence[RouteConfig]) -> None:
        self.by_language: list[tuple[str, frozenset[str], str | None]] = []
        self.by_task: list[tuple[str, str]] = []
        self.private: list[tuple[str, tuple[str, ...]]] = []
        for route in routes:
            when = route.when
            if when is None:
                continue
            if when.task == "private":
                self.private.append((route.name, tuple(when.pii or PII_KINDS)))
            elif when.languages:
                self.by_language.append((route.name, frozenset(when.languages), when.task))
            elif when.task is not None:
                self.by_task.append((route.name, when.task))
        self.active = bool(self.by_language or self.by_task)
        if self.by_language or any(task == "multilingual" for _, task in self.by_task):
            detect("warm")  # the first detection loads the lexicons (~60 ms): not in a request

    def match(self, reading: Reading) -> Evidence | None:
        """The language layer, then the task layer, on one message."""
        if self.by_language:
            languages, confidence = reading.languages
            for lang in languages:
                for route, listed, task in self.by_language:
                    if lang not in listed:
                        continue
                    why = f"{lang} detected ({', '.join(languages)}; confidence {confidence:.2f})"
                    if task is None:
                        return Evidence(route, "language", confidence, why)
                    cue = reading.task(task)
                    if cue is not None:
                        return Evidence(route, "language", confidence, f"{why}, and {cue}")
        for route, task in self.by_task:
            cue = reading.task(task)
            if cue is not None:
                return Evidence(route, "task", 1.0, cue)
        return None

    def private_route(self, messages: Sequence[Mapping[str, Any]], header: bool) -> Evidence | None:
        """The private route a request must take: asked for by the header, or for its PII."""
        if not self.private:
            return None
        if header:
            return Evidence(self.private[0][0], "task", 1.0, "private: x-nerve-private header")
        texts = list(message_texts(messages))
        for route, kinds in self.private:
            kind = find_pii(texts, kinds)
            if kind is not None:  # the kind only: the detail is logged and shown
                return Evidence(route, "task", 1.0, f"private: {kind} in the request")
        return None
