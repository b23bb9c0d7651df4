"""Deterministic intent rules (IN-2): cue words score intents, the strongest cue wins.

Each cue adds a candidate (intent, weight, span): an imperative verb is strong, a question or a
topic noun is weak, a named destructive action is strongest. The highest weight wins; a tie goes
to the earlier cue. Confidence is the winning weight, lowered when a rival came close. Parameters
are then read around the winning cue (params.py). Only the first MAX_CHARS characters are read: an
intent is stated up front, and the cost stays bounded on pathological input.

The chat gate (RT-2) comes first: a verb counts as strong only in a command's shape (shape.py),
and without such a cue conversation (chat.py) outweighs the weak ones, so small talk is `chat`.
A question word or a "?" asks only in a question's shape (questions.py): echoes, follow-ups that
point back and wh-words opening a statement ask for nothing. Destructive intents need strong
evidence: a destructive verb in a command's shape, not denied, quoted, narrated or closing a
statement ("Reboot ek film hai"), with an object that can be deleted (objects.py). A deletion
naming nothing in a short text ("delete karo") is delete_data below 0.5: delete what?
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nerve.intent import actions, chat, messages, objects, params, questions, shape
from nerve.intent.cues import CUES, Hit, Token, question_openers, tokenize
from nerve.intent.lexicon import NOT_NAMES, REPORT_MAKERS, VERBS, words
from nerve.intent.model import Intent
from nerve.intent.relay import next_word, relay, to_you
from nerve.intent.shape import imperative, indic_command, narrated, wished

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
_POINTERS = frozenset(words("it, that, this, those, these"))
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


def _commanded(tokens: list[Token], text: str, at: int, quotes: list[tuple[int, int]]) -> bool:
    """A named destructive action starting at character `at` is an order: not quoted, negated,
    narrated after a subject ("I drop the test db every night"), after a modal ("the flood
    will wipe out everything"), nor in a sentence that ends as a statement ("Reboot ek 2013 ki
    film hai", "database drop karna galat hai")."""
    i = next((k for k, t in enumerate(tokens) if t.start >= at), len(tokens) - 1)
    return not (
        shape.inside(quotes, at)
        or shape.stated(tokens, i, text)
        or shape.negated(tokens, i)
        or (
            (narrated(tokens, i) or shape.not_an_order(tokens, i)) and not wished(tokens, i)
        )  # "I want to drop the staging db" wishes it done
    )


def _verb(
    scores: _Scores, hit: Hit, tokens: list[Token], text: str, context: tuple[Any, ...]
) -> None:
    """An English verb cue: strong in a command's shape, weak or a mere topic elsewhere."""
    openers, indic, polite, found = context
    start, end = tokens[hit.first].start, tokens[hit.last].end
    after = next_word(tokens, hit.last)  # "check out my painting!" shows, asks nothing;
    if (hit.word == "check" and after == "out") or after in shape.COPULAS:
        return  # "show was amazing": a noun before its verb
    if shape.negated(tokens, hit.first):
        scores.topic = True  # "don't get carried away", "didn't see that"
        return
    # SOV English ("users table delete") only in Indic company: "leg drop" is a name,
    # "long time no see!" a greeting
    strong = polite or imperative(tokens, hit.first, hit.last, text, openers, closing=indic)
    if hit.intent == "delete_data" and (
        not strong
        or objects.deletable(tokens, hit.first, hit.last) is False
        or shape.stated(tokens, hit.last, text)
    ):
        return  # destructive only as a command on a thing: "leg drop", "remove the banhammer"
    if (
        not strong
        and (narrated(tokens, hit.first) or shape.not_an_order(tokens, hit.first))
        and not wished(tokens, hit.first)
    ):
        scores.topic = True  # "I sent him a message", "that would get old": about the topic
        return
    weight = STRONG[hit.intent] if strong else WEAK_VERB
    if hit.intent == "convert_format" and not found.mentions:
        # without a format, "change"/"save"/"turn" are not conversions
        weight = min(weight, 0.6) if hit.word in ("convert", "transform") else 0.0
    if weight:
        (scores.command if strong else scores.add)(hit.intent, weight, start, end)


def _score(
    text: str, tokens: list[Token], languages: Sequence[str], reading: chat.ChatReading
) -> tuple[_Scores, tuple[str, int] | None]:
    scores = _Scores()
    seen = {t.word for t in tokens}
    openers = question_openers(languages)
    quotes = shape.quoted(text)  # a title, a slogan, reported speech: no order to us
    act = actions.action(text, seen)
    if act and not _commanded(tokens, text, act[1], quotes):
        act = None
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
        if quotes and shape.inside(quotes, start):
            scores.topic = True
            continue
        if hit.kind in ("verb", "relay") and to_you(tokens, hit.last):
            continue  # "good to see you", "miss you", "tell you what": said to the listener
        if hit.kind == "verb":
            _verb(scores, hit, tokens, text, (openers, indic, polite, found))
        elif hit.kind == "indic" and (hit.intent != "convert_format" or found.mentions):
            destroys = hit.intent == "delete_data"
            if shape.told(tokens, hit.last):
                scores.topic = story = True  # "avan enikku message ayachu": he sent one, a story
            elif shape.negated(tokens, hit.first):
                scores.topic = True  # "hatao mat", "anuppa vendam"
            elif indic_command(tokens, hit.last, hit.rest, destructive=destroys) and not (
                destroys
                and (
                    objects.deletable(tokens, hit.first, hit.last, hit.word) is False
                    or shape.stated(tokens, hit.last, text)
                )
            ):  # "garibi hatao" is a slogan against poverty, no deletion
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
            relay(scores.command, text, tokens, hit.first, openers, languages, hit.rest)
        elif (
            hit.kind == "question"
            or (hit.kind.startswith("question:") and hit.kind.partition(":")[2] in languages)
        ) and questions.asks_near_the_end(tokens, hit.first, text):
            scores.ask("query_data", QUESTION, start, end)
    if seen & _PATTERN_TRIGGERS:
        for intent, weight, rx in _PATTERNS:
            m = rx.search(text)
            if not m or (reading.about_you and rx not in _HOW_TO_PATTERNS):
                continue
            named = m.groupdict().get("t")
            named = named and params.trim(named)
            if named in _POINTERS or questions.embedded(tokens, m.start(), text):
                continue  # "what does it mean?" follows up; "crazy how many came" exclaims
            if not shape.inside(quotes, m.start()):
                scores.ask(intent, weight, m.start(), m.end(), named)
    # "I've been running, which has been great" asks nothing; "is that why?" follows up
    candidates = [
        i
        for i, t in enumerate(tokens)
        if t.opens and t.word in openers and (t.sentence or not narrated(tokens, i))
    ]
    asking = [
        i
        for i in candidates
        if not questions.no_question(tokens, i, text) and not shape.inside(quotes, tokens[i].start)
    ]
    if reading.about_you:
        pass  # "how have you been?" asks about the person addressed, not for data
    elif asking:
        scores.ask("query_data", QUESTION, tokens[asking[0]].start, tokens[asking[0]].end)
    elif text.endswith("?") and not candidates and not questions.fragment(tokens):
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
