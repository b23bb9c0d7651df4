"""The routing decision: private -> rules -> language -> task -> semantic -> context -> the route
`default` (GW-3, GW-4, GW-5, GW-16, TP-3).

A private route (`when: {task: private}`) is asked first, over every message: privacy is a
constraint, not a topic (understand.py). Otherwise only user messages count, and only the last
five. The latest decides when it is informative on its own: a rule hit, a `when` match (its
languages or its task, understand.py), or a semantic match at or above the threshold. Otherwise,
if it is a follow-up made only of words that carry no topic ("continue", "ok do it", "and
now?"), the earlier messages decide, weighted 1/2, 1/4, 1/8, 1/16 going back (the latest's own
weight, 1, has nothing to weigh). Each votes for its route with its score (1.0 for a rule hit or
a task cue, the detector's confidence for a language, the cosine for a semantic match); the
look back stops once no older message could change the outcome, or at a message about something
no route covers: the conversation had moved on there. A latest message about something no route
covers goes to `default`, whatever came before it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nerve.config import RouteConfig
from nerve.gateway.router.rules import RuleSet
from nerve.gateway.router.semantic import SemanticIndex
from nerve.gateway.router.understand import Evidence, Reading, WhenLayers

__all__ = ["DEFAULT_ROUTE", "LAYERS", "Decision", "Router", "user_texts"]

DEFAULT_ROUTE = "default"
Layer = Literal["rules", "language", "task", "semantic", "context", "default", "oversize"]
LAYERS: tuple[Layer, ...] = ("rules", "language", "task", "semantic", "context", "default",
                             "oversize")  # fmt: skip

_WEIGHTS = (1.0, 0.5, 0.25, 0.125, 0.0625)  # latest first: the last five user messages
_SCAN_HEAD, _SCAN_TAIL = 4096, 1024  # of a longer message only its ends are classified
_WORD = re.compile(r"\w+")
_FOLLOW_UP_MAX = 300  # chars; a longer message has something to say
# Words that carry no topic: a message made only of these continues the conversation's topic.
_FOLLOW_UP_WORDS = """
    a about above after again ahead all alright also am an and another any anything are as at
    back be been before below better bit but by can carry clarify complete cont continue could
    d detail details did didn different do does doesn doing don done elaborate else even
    example examples expand explain few fine finish first fix for from further give go going
    good great had has have he hm hmm how i if in is isn it its just k keep kk last less let
    lets little ll longer lot m make many me more much must my nah next nice no nope not now
    number of oh ok okay on one ones onward option options or other our out over page part
    parts perfect please pls plz point points previous proceed re redo remaining repeat rest
    resume retry right s same second section she shorter should show simpler so some something
    step steps still stuff sure t tell than thank thanks that the them then there these they
    thing things third this those through thx to too try ty up us ve version very wait was way
    we well were what when where which who why will with work working works would ya yeah yep
    yes yet you your
"""
_FOLLOW_UP = frozenset(_FOLLOW_UP_WORDS.split())


@dataclass(frozen=True, slots=True)
class Decision:
    route: str
    layer: Layer
    score: float  # 1.0 for a rule or task, language confidence, cosine, context's weighted vote
    detail: str  # why, for logs and /evolution: the rule, the nearest example, ...


class Router:
    """Decides a route for a chat request. Built once per config; `decide` is pure and cheap.

    threshold: the cosine similarity a message needs to its nearest example. 0.22 was chosen on
    bench/routing.py's labelled paraphrases and unrelated requests (its quality table): at 0.22,
    83% of paraphrases reach their route and none a wrong one, 17 of 19 unrelated requests fall
    through to default; 0.20 routes 91% but lets 4 unrelated through, 0.25 routes only 74%. A
    missed route costs little (the general default model answers); a specialised route taking
    what it was not meant for is worse, so the threshold leans to precision.
    """

    def __init__(
        self,
        routes: Sequence[RouteConfig],
        *,
        max_classify_chars: int = 140_000,
        threshold: float = 0.22,
    ) -> None:
        self.rules = RuleSet([(r.name, r.rules) for r in routes])
        self.semantic = SemanticIndex([(r.name, r.examples) for r in routes])
        self.max_classify_chars = max_classify_chars
        self.threshold = threshold
        self.when = WhenLayers(routes)
        self.nothing_to_match = not any(r.rules or r.examples or r.when for r in routes)

    def decide(self, messages: Sequence[Mapping[str, Any]], *, private: bool = False) -> Decision:
        """The route for `messages`; `private`: the client sent `x-nerve-private: true`."""
        if self.when.private:
            hit = self.when.private_route(messages, private)
            if hit is not None:
                return Decision(hit.route, hit.layer, hit.score, hit.detail)
        if self.nothing_to_match:  # only a catch-all: skip reading the messages at all
            return Decision(DEFAULT_ROUTE, "default", 0.0, "no route has rules, examples or when")
        texts = user_texts(messages)
        if not texts:
            return Decision(DEFAULT_ROUTE, "default", 0.0, "no user message")
        size = sum(map(len, texts))
        if size > self.max_classify_chars:  # GW-16: too big to classify cheaply; not even regexes
            why = f"{size} chars of user messages > {self.max_classify_chars}: not classified"
            return Decision(DEFAULT_ROUTE, "oversize", 0.0, why)
        latest = self._classify(texts[0])
        if latest is not None:
            return Decision(latest.route, latest.layer, latest.score, latest.detail)
        if not is_follow_up(texts[0]):
            return Decision(DEFAULT_ROUTE, "default", 0.0, "the latest message matches no route")
        return self._context(texts[1:]) or Decision(
            DEFAULT_ROUTE, "default", 0.0, "a follow-up, and no earlier message matches a route"
        )

    def _classify(self, text: str) -> Evidence | None:
        if len(text) > _SCAN_HEAD + _SCAN_TAIL:
            text = f"{text[:_SCAN_HEAD]}\n{text[-_SCAN_TAIL:]}"
        rule = self.rules.match(text)
        if rule is not None:
            return Evidence(rule.route, "rules", 1.0, f"rule /{rule.pattern}/")
        if self.when.active:
            understood = self.when.match(Reading(text))
            if understood is not None:
                return understood
        match = self.semantic.nearest(text)
        if match is not None and match.score >= self.threshold:
            why = f"nearest example {match.example!r} (cosine {match.score:.2f})"
            return Evidence(match.route, "semantic", match.score, why)
        return None

    def _context(self, history: list[str]) -> Decision | None:
        """The weighted vote of the earlier messages (most recent first), back to a topic change."""
        votes: dict[str, float] = {}
        strongest: dict[str, tuple[float, int, Evidence]] = {}
        examined = 0.0
        for back, (weight, text) in enumerate(zip(_WEIGHTS[1:], history, strict=False), start=1):
            examined += weight
            evidence = self._classify(text)
            if evidence is None:
                if is_follow_up(text):
                    continue
                break
            vote = weight * evidence.score
            votes[evidence.route] = votes.get(evidence.route, 0.0) + vote
            if vote > strongest.get(evidence.route, (0.0,))[0]:
                strongest[evidence.route] = (vote, back, evidence)
            if _settled(votes, sum(_WEIGHTS[back + 1 :])):
                break
        if not votes:
            return None
        route = max(votes, key=votes.__getitem__)  # a tie goes to the most recent voter
        _, back, evidence = strongest[route]
        why = f"follow-up; {back} message(s) back, {evidence.layer}: {evidence.detail}"
        return Decision(route, "context", votes[route] / examined, why)


def _settled(votes: dict[str, float], remaining: float) -> bool:
    """Whether the leading route stays ahead even if every older message votes 1.0 for another."""
    ranked = sorted(votes.values(), reverse=True)
    return ranked[0] - (ranked[1] if len(ranked) > 1 else 0.0) > remaining


def is_follow_up(text: str) -> bool:
    """Whether a message carries no topic of its own ("continue", "ok do it", "and now?")."""
    if len(text) > _FOLLOW_UP_MAX:
        return False
    return all(w in _FOLLOW_UP or w.isdigit() for w in _WORD.findall(text.lower()))


def user_texts(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The text of the last five user messages, latest first; images and other parts ignored."""
    texts: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        texts.append(_text(message.get("content")))
        if len(texts) == len(_WEIGHTS):
            break
    return texts


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""
