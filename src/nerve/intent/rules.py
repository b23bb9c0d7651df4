"""Deterministic intent rules (IN-2): cue words score intents, the strongest cue wins.

Each cue adds a candidate (intent, weight, span): an imperative verb is strong, a question or a
topic noun is weak, a named destructive action is strongest. The highest weight wins; a tie goes
to the earlier cue. Confidence is the winning weight, lowered when a rival came close. Parameters
are then read around the winning cue (params.py). Only the first MAX_CHARS characters are read: an
intent is stated up front, and the cost stays bounded on pathological input.

The chat gate (RT-2) comes first: a verb counts as strong only in a command's shape (shape.py),
and without such a cue conversation (chat.py) outweighs the weak ones, so small talk is `chat`.
A deletion must be a command with an object: "delete karo" alone is delete_data below 0.5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nerve.intent import actions, chat, messages, params, shape
from nerve.intent.cues import CUES, Token, question_openers, tokenize
from nerve.intent.lexicon import NOT_NAMES, REPORT_MAKERS, VERBS, words
from nerve.intent.model import Intent
from nerve.intent.shape import clause_end, imperative, indic_command, narrated, wished

__all__ = ["MAX_CHARS", "classify_rules", "clean"]

MAX_CHARS = 2000
_I = re.IGNORECASE

# How much a strong cue weighs per intent; ties between intents go to the earlier cue.
STRONG = {
    "delete_data": 0.9,
    "convert_format": 0.9,
    "summarize": 0.9,
    "generate_report": 0.9,
    "explain": 0.9,
    "send_message": 0.85,
    "query_data": 0.8,
}
NOUN = {"summarize": 0.85, "generate_report": 0.6, "query_data": 0.5}
WEAK_VERB = 0.5  # an English verb that is not in imperative position
QUESTION = 0.6
ACTION = 0.95
FORMAT_PAIR = 0.85  # "csv to json" needs no verb, "csv and json" is no conversion
RECIPIENT_BONUS = 0.05
REPORT_REACH = 40  # characters between a report maker and the report noun
CHAT = 0.9  # praise, thanks, a greeting: conversation
CHAT_QUESTION = 0.7  # a question about the person addressed
NO_OBJECT = 0.4  # a deletion that names nothing to delete: below IN-1's 0.5, a guess to confirm
QUESTION_REACH = 12  # tokens: a sentence this short with an Indic question word asks
TOPIC_ONLY_TOKENS = 10  # "aaj ka weather" asks; a long statement that mentions news does not
CHATTY_MARKERS = 3  # chat markers that make a long turn (CHATTY_TOKENS words) talk, not command
CHATTY_TOKENS = 20

_START = r"(?:^|[.,;:!?]\s*)(?:(?:please|so|and|ok|okay|hey|now|but)\s+)?"
_NOT_CONCEPT = (
    r"(?!(?:the|my|our|your|his|her|their|its|this|that|these|those|it|there|today|tomorrow|"
    r"tonight|now|next|left|up|going|happening|new|on|in|at|for|due|open|playing|we|you|i|"
    r"they|he|she|current|latest|last|first|best|good|wrong)\b)"
)
_HOW_TO = r"how\s+(?:to|do\s+(?:i|we|you)|can\s+(?:i|we)|should\s+(?:i|we))\b"
# Phrasings rather than words: (intent, weight, pattern), tried only when a trigger word is present.
_PATTERNS: list[tuple[str, float, re.Pattern[str]]] = [
    (intent, weight, re.compile(rx, _I))
    for intent, weight, rx in (
        (
            "explain",
            0.7,
            _START
            + r"(?:what\s+(?:is|are)|what's|whats)\s+(?:an?\s+)?"
            + _NOT_CONCEPT
            + r"(?P<t>[^?.!,]{1,60})",
        ),
        ("explain", 0.85, r"\bwhat\s+(?:does|do)\s(?P<t>.{1,60}?)\smean\b"),
        (
            "explain",
            0.85,
            r"\b(?:meaning|definition)\s+of\s+(?:an?\s+|the\s+)?(?P<t>[^?.!,]{1,60})",
        ),
        ("explain", 0.8, r"\bdifference\s+between\s+(?:the\s+)?(?P<t>[^?.!,]{1,60})"),
        ("explain", 0.8, r"\bwhy\s+(?:is|are|does|do|did)\b"),
        ("explain", 0.85, r"\bhow\s+(?:does|do|did)\s+(?:an?\s+|the\s+)?(?P<t>.{1,60}?)\swork\b"),
        ("explain", 0.85, r"\bdefine\s+(?:an?\s+|the\s+)?(?P<t>[^?.!,]{1,60})"),
        ("explain", 0.7, _START + r"why\b"),
        ("explain", 0.75, _START + _HOW_TO),
        ("explain", 0.7, r"^\s*(?P<t>[\w-]+)\s+kya\s+(?:hai|he|h|hota\s+hai)\s*\??\s*$"),
        ("query_data", 0.8, r"\b" + _HOW_TO + r"\s*(?:get|go|reach|arrive|drive|walk|travel)\b"),
        ("query_data", 0.65, r"\bhow\s+(?:many|much|long|far|often)\b"),
        ("query_data", 0.75, r"\b(?:what\s+(?:is|are)|what's|whats|how's|hows)\s.{1,40}\blike\b"),
    )
]
_PATTERN_TRIGGERS = frozenset(
    words(
        "what, what's, whats, why, how, how's, hows, define, meaning, definition",
        "difference, kya",
    )
)
_HOW_TO_PATTERNS = frozenset(rx for _, _, rx in _PATTERNS if _HOW_TO in rx.pattern)
_ENGLISH_MAKERS = frozenset((*VERBS["generate_report"], "do", "run", "pull")) & frozenset(
    REPORT_MAKERS
)
_POLITE = frozenset(words("please, pls, plz, plss, kindly"))
_CONTROL = dict.fromkeys([*range(32), 127], " ")


def clean(text: str) -> str:
    """Control characters become spaces, runs of whitespace one space; at most MAX_CHARS."""
    return " ".join(text[: MAX_CHARS * 2].translate(_CONTROL).split())[:MAX_CHARS]


@dataclass(slots=True)
class _Cue:
    weight: float
    start: int
    end: int
    target: str | None = None  # when a phrasing pattern names it: "what does *idempotent* mean"


class _Scores:
    def __init__(self) -> None:
        self.best: dict[str, _Cue] = {}
        self.commanded = False  # a cue in command shape: a verb that commands, a named action
        self.asked = False  # a question cue
        self.topic = False  # a cue other than a question: a topic noun, a verb out of position

    def command(self, intent: str, weight: float, start: int, end: int) -> None:
        self.commanded = True
        self.add(intent, weight, start, end)

    def ask(
        self, intent: str, weight: float, start: int, end: int, target: str | None = None
    ) -> None:
        self.asked = True
        self._put(intent, weight, start, end, target)

    def add(self, intent: str, weight: float, start: int, end: int) -> None:
        self.topic = True
        self._put(intent, weight, start, end)

    def _put(
        self, intent: str, weight: float, start: int, end: int, target: str | None = None
    ) -> None:
        cue = self.best.get(intent)
        if cue is None or weight > cue.weight or (weight == cue.weight and start < cue.start):
            self.best[intent] = _Cue(weight, start, end, target)

    def ranked(self) -> list[tuple[str, _Cue]]:
        return sorted(self.best.items(), key=lambda kv: (-kv[1].weight, kv[1].start))


def _relay(
    scores: _Scores,
    text: str,
    tokens: list[Token],
    i: int,
    openers: frozenset[str],
    languages: Sequence[str],
    rest: str,
) -> None:
    """A relay verb ("tell", "ask", "bolo") is a message when someone else is addressed and a
    question when the speaker is ("tell me the forecast", "mujhe batao")."""
    start, end, word = tokens[i].start, tokens[i].end, tokens[i].word
    english = word in ("tell", "ask", "let")
    if english and not imperative(tokens, i, i, text, openers):
        return
    if not english and not indic_command(tokens, i, rest):
        return  # "bataya jata hai" narrates
    addressee = _next_word(tokens, i)
    if addressee in messages.SELF and _about_listener(tokens, i + 2):
        return  # "let me know if you need anything", "can you tell me more about your trip?"
    if addressee in messages.SELF:
        scores.command("query_data", QUESTION, start, end)
    elif addressee in messages.PRONOUNS or messages.recipient(text, start, end, languages):
        scores.command("send_message", STRONG["send_message"], start, end)
    elif word != "let":
        scores.command("query_data", QUESTION, start, end)


def _next_word(tokens: list[Token], last: int) -> str:
    return tokens[last + 1].word if last + 1 < len(tokens) else ""


def _about_listener(tokens: list[Token], i: int) -> bool:
    """The clause from token i is about the person addressed, or is "let me know"."""
    rest = tokens[i : clause_end(tokens, i) if i < len(tokens) else i]
    return bool(rest) and (rest[0].word == "know" or any(t.word in chat.YOU for t in rest))


def _to_you(tokens: list[Token], last: int) -> bool:
    after = tokens[last + 1] if last + 1 < len(tokens) else None
    return after is not None and not after.opens and after.word in chat.YOU


def _asks_near_the_end(tokens: list[Token], i: int, text: str) -> bool:
    """An Indic question word asks when it opens or ends its clause (4 words at most), SOV-style
    ("kya kal barish hogi", "balance kitna hai"), stands in a short sentence, or the text is a
    question; deep in a long statement it reports one ("usne kaha ki vah kya daan karega")."""
    end = clause_end(tokens, i)
    return (
        tokens[i].sentence
        or end - i <= 4
        or end - _sentence_start(tokens, i) <= QUESTION_REACH
        or text.endswith("?")
    )


def _sentence_start(tokens: list[Token], i: int) -> int:
    while i > 0 and not tokens[i].sentence:
        i -= 1
    return i


def _score(
    text: str, tokens: list[Token], languages: Sequence[str], reading: chat.ChatReading
) -> tuple[_Scores, tuple[str, int] | None]:
    scores = _Scores()
    seen = {t.word for t in tokens}
    openers = question_openers(languages)
    act = actions.action(text, seen)
    if act:
        scores.command("delete_data", ACTION, act[1], act[1])
    found = params.formats(text, seen)
    if found.source and found.target and found.directed:
        scores.command("convert_format", FORMAT_PAIR, 0, 0)
    indic = any(lang != "en" for lang in languages)
    polite = not seen.isdisjoint(_POLITE)  # "I don't need alarms today, just delete them please"
    reports = [t.start for t in tokens if t.word in ("report", "reports")]
    story = False  # a past Indic send form: someone sent something
    summaries = [t.start for t in tokens if t.word in ("summary", "summaries")]
    for hit in CUES.hits(tokens):
        start, end = tokens[hit.first].start, tokens[hit.last].end
        if hit.kind in ("verb", "relay") and _to_you(tokens, hit.last):
            continue  # "good to see you", "miss you", "tell you what": said to the listener
        if hit.kind == "verb":
            after = _next_word(tokens, hit.last)  # "check out my painting!" shows, asks nothing;
            if (hit.word == "check" and after == "out") or after in shape.COPULAS:
                continue  # "show was amazing": a noun before its verb
            # SOV English ("users table delete") only in Indic company: "leg drop" is a name,
            # "long time no see!" a greeting
            closing = indic
            strong = polite or imperative(
                tokens, hit.first, hit.last, text, openers, closing=closing
            )
            if hit.intent == "delete_data" and (not strong or shape.negated(tokens, hit.first)):
                continue  # destructive only as a command: "leg drop", "don't delete them"
            if not strong and narrated(tokens, hit.first) and not wished(tokens, hit.first):
                scores.topic = True  # "I sent him a message": a story about the topic
                continue
            weight = STRONG[hit.intent] if strong else WEAK_VERB
            if hit.intent == "convert_format" and not found.mentions:
                # without a format, "change"/"save"/"turn" are not conversions
                weight = min(weight, 0.6) if hit.word in ("convert", "transform") else 0.0
            if weight:
                (scores.command if strong else scores.add)(hit.intent, weight, start, end)
        elif hit.kind == "indic" and (hit.intent != "convert_format" or found.mentions):
            if shape.told(tokens, hit.last):
                scores.topic = story = True  # "avan enikku message ayachu": he sent one, a story
            elif indic_command(tokens, hit.last, hit.rest, destructive=hit.intent == "delete_data"):
                scores.command(hit.intent, STRONG[hit.intent], start, end)
        elif hit.kind == "noun":
            scores.add(hit.intent, NOUN[hit.intent], start, end)
        elif hit.kind == "maker" and reports:
            # a maker makes the nearest thing: "report banao", but "report summary maadi"
            near = min(abs(r - start) for r in reports)
            english = hit.word in _ENGLISH_MAKERS
            shaped = (
                imperative(tokens, hit.first, hit.last, text, openers)
                if english
                else (indic_command(tokens, hit.last, hit.rest))
            )
            if shaped and near < REPORT_REACH and all(abs(s - start) > near for s in summaries):
                scores.command("generate_report", STRONG["generate_report"], start, end)
        elif hit.kind == "relay":
            _relay(scores, text, tokens, hit.first, openers, languages, hit.rest)
        elif (
            hit.kind == "question"
            or (hit.kind.startswith("question:") and hit.kind.partition(":")[2] in languages)
        ) and _asks_near_the_end(tokens, hit.first, text):
            scores.ask("query_data", QUESTION, start, end)
    if seen & _PATTERN_TRIGGERS:
        for intent, weight, rx in _PATTERNS:
            m = rx.search(text)
            if m and (not reading.about_you or rx in _HOW_TO_PATTERNS):
                named = m.groupdict().get("t")
                scores.ask(intent, weight, m.start(), m.end(), named and params.trim(named))
    opener = next(
        (
            t
            for i, t in enumerate(tokens)
            if t.opens and t.word in openers and (t.sentence or not narrated(tokens, i))
        ),
        None,
    )  # "I've been running, which has been great" asks nothing
    if reading.about_you:
        pass  # "how have you been?" asks about the person addressed, not for data
    elif opener:
        scores.ask("query_data", QUESTION, opener.start, opener.end)
    elif text.endswith("?"):
        scores.ask("query_data", QUESTION, len(text), len(text))
    send = scores.best.get("send_message")
    if send and story and not scores.commanded:  # "message" was the story's object, no verb
        del scores.best["send_message"]
        send = None
    if send and messages.recipient(text, send.start, send.end, languages):
        send.weight += RECIPIENT_BONUS
    return scores, act


def _parameters(
    intent: str, text: str, cue: _Cue, act: tuple[str, int] | None, languages: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if intent == "convert_format":
        fmts = params.formats(text)
        for key, value in (("input_format", fmts.source), ("output_format", fmts.target)):
            if value:
                out[key] = value
    elif intent == "send_message":
        for key, value in (
            ("recipient", messages.recipient(text, cue.start, cue.end, languages)),
            ("channel", messages.channel(text)),
            ("content", messages.content(text, cue.start, cue.end)),
        ):
            if value and (key != "recipient" or value.lower() not in NOT_NAMES):
                out[key] = value
    elif intent == "generate_report":
        out.update(params.report_hints(text))
    elif cue.end > cue.start and intent in ("delete_data", "query_data", "summarize", "explain"):
        found = cue.target or params.target(text, cue.start, cue.end)
        if found:
            out["target"] = found
    if act:
        out["action"] = act[0]
        if "target" not in out and intent == "delete_data":
            found = params.target(text, act[1], act[1] + len(text[act[1] :].split()[0]))
            if found:
                out["target"] = found
    return out


def _chat(reading: chat.ChatReading) -> Intent:
    """Not a command: `chat` when it reads as conversation, `unknown` when nothing does."""
    if reading.reactions or reading.greetings:
        return Intent("chat", {}, CHAT, "rules")
    if reading.about_you:
        return Intent("chat", {}, CHAT_QUESTION, "rules")
    return Intent("unknown", {}, 0.0, "rules")


def _gated(
    scores: _Scores, tokens: list[Token], reading: chat.ChatReading, act: tuple[str, int] | None
) -> bool:
    """The chat gate: without a command-shaped cue, conversation outweighs weak cues, and a
    topic noun or a verb out of command position says nothing in a long statement."""
    if scores.commanded:
        # a long turn full of chat markers ("Thanks, Gina! ... find my happy place!") talks;
        # a named destructive action is always heard
        markers = reading.reactions + reading.greetings
        return act is None and markers >= CHATTY_MARKERS and len(tokens) >= CHATTY_TOKENS
    if reading.reactions or reading.about_you or (reading.personal and not scores.topic):
        return True  # "usko kya hua?" asks about a person, not for data
    return not scores.asked and len(tokens) > TOPIC_ONLY_TOKENS


def classify_rules(text: str, *, languages: Sequence[str] = ()) -> Intent:
    """The rules' reading of `text`; never raises, `unknown` with confidence 0 when nothing fits.

    Chit-chat (greetings, thanks, praise, reactions, questions about the person addressed) is
    `chat`. `languages` (from nerve.language) switches on cue words that are ambiguous across
    languages.
    """
    try:
        cleaned = clean(text) if isinstance(text, str) else ""
        if not cleaned:
            return Intent("unknown", {}, 0.0, "rules")
        tokens = tokenize(cleaned)
        reading = chat.read(cleaned, tokens)
        if not tokens:  # punctuation or emoji only
            return _chat(reading)
        scores, act = _score(cleaned, tokens, tuple(languages), reading)
        ranked = scores.ranked()
        if not ranked or _gated(scores, tokens, reading, act):
            return _chat(reading)
        intent, cue = ranked[0]
        confidence = cue.weight
        if len(ranked) > 1 and ranked[1][1].weight >= cue.weight - 0.05:
            confidence -= 0.1  # a close rival: say so
        parameters = _parameters(intent, cleaned, cue, act, tuple(languages))
        if intent == "delete_data" and not parameters.keys() & {"target", "action"}:
            confidence = min(confidence, NO_OBJECT)  # "delete karo": delete what? ask first
        return Intent(intent, parameters, round(min(confidence, 1.0), 2), "rules")
    except Exception:  # a rule bug must never take the caller down (IN-2)
        return Intent("unknown", {}, 0.0, "rules")
