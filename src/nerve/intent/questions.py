"""Question shape: does a question word or a "?" ask for data, or only talk (RT-2)?

In conversation most questions ask for nothing a tool could fetch: a follow-up that points back
("is that why?", "what's that?"), a fragment ("by the duck pond?", "or just a best friend?"), a
wh-word that opens a statement's clause ("when I decided to go vegan, ..."), an embedded question
("it's crazy how many people came"), an auxiliary that opens an elliptic statement or a wish
("should be good", "have a good night"). rules.py skips those; short echoes and tag questions
("really?", "genius, right?") are read as reactions in chat.py.

Indic question words count when they open or end their clause, SOV-style ("kya kal barish
hogi", "balance kitna hai"), in a short sentence, or when the text is a question.
"""

from __future__ import annotations

from collections.abc import Sequence

from nerve.intent.cues import Token
from nerve.intent.lexicon import words
from nerve.intent.shape import clause_end

__all__ = ["asks_near_the_end", "embedded", "fragment", "no_question", "sentence_start"]

QUESTION_REACH = 12  # tokens: a sentence this short with an Indic question word asks
_WH = frozenset(words("what, when, where, which, who, whom, whose, how, why"))
# After a wh-word, a subject starts a statement's clause ("when I decided", "where it can").
_SUBJECTS = frozenset(
    words("i, we, he, she, they, it, this, my, our, his, her, their, there, you, people, u")
)
# After an opener, a word pointing back makes a follow-up on what was said: "is that why?"
_POINTING = frozenset(words("that, this, those, these, that's"))
_MODALS = frozenset(words("can, could, would, should, will, may, might, shall"))
# After an auxiliary, words that make it no question: "have a good night", "should be good".
_NOT_ASKED = frozenset(
    words(
        "a, an, be, been, being, just, really, so, very, not, also, still, never, always, kinda",
        "pretty, totally, definitely, probably, only, even, too, like, fun, nice, good, great",
    )
)
_NOT_ASKED_AFTER_MODAL = _NOT_ASKED | frozenset(words("have, get, go, make, do, see"))
_AUX_WORDS = frozenset(
    words("is, are, was, were, will, would, do, does, did, can, could, should, shall, has")
) | frozenset(words("have, am, may, 's"))
_RELATIVE_NEXT = frozenset(words("is, was, means, meant, makes, made, sucks, explains, to"))
_ECHO = _AUX_WORDS | _POINTING | frozenset(words("it, about, then, again, exactly, even, so"))
# A question opening with these continues the conversation: "or just a best friend?"
_FRAGMENT_OPENERS = frozenset(words("or, even, by, from, with, like, and, but"))
_AUXILIARIES = _AUX_WORDS


def no_question(tokens: Sequence[Token], i: int, text: str) -> bool:
    """The English opener at token i asks nothing: it opens a statement's clause, points back at
    what was said, or is an auxiliary of an elliptic statement."""
    word = tokens[i].word
    following = tokens[i + 1].word if i + 1 < len(tokens) else ""
    if following in _POINTING or _points_back(tokens, i):
        return True
    if word in _WH:
        if "?" in text:
            return False
        return following in _SUBJECTS or (word == "which" and following in _RELATIVE_NEXT)
    if word in _AUXILIARIES:
        return following in (_NOT_ASKED_AFTER_MODAL if word in _MODALS else _NOT_ASKED)
    return False


def _points_back(tokens: Sequence[Token], i: int) -> bool:
    """After the opener, nothing but auxiliaries and words pointing back: "what is it?",
    "who is it?", "why's that?", "what was that about?"."""
    rest = tokens[i + 1 : i + 5]
    if not rest or (i + 5 < len(tokens) and not tokens[i + 5].opens):
        return False
    return any(t.word in _POINTING or t.word == "it" for t in rest) and all(
        t.word in _ECHO for t in rest
    )


def embedded(tokens: Sequence[Token], start: int, text: str) -> bool:
    """A question phrasing starting with a wh-word at character `start` stands inside a
    statement's clause (no "?" anywhere): "it's crazy how many people came", "remind me how
    much kindness matters"."""
    if "?" in text:
        return False
    for token in tokens:
        if token.start >= start:
            return not token.opens and token.word in _WH
    return False


def fragment(tokens: Sequence[Token]) -> bool:
    """A question of one or two words, or one that opens with a coordinator or a preposition:
    a follow-up in a conversation, not a request ("this month?", "by the duck pond?")."""
    return len(tokens) <= 2 or tokens[0].word in _FRAGMENT_OPENERS


def asks_near_the_end(tokens: Sequence[Token], i: int, text: str) -> bool:
    """An Indic question word asks when it opens or ends its clause (4 words at most), stands in
    a short sentence, or the text is a question; deep in a long statement it reports one
    ("usne kaha ki vah kya daan karega")."""
    end = clause_end(tokens, i)
    return (
        tokens[i].sentence
        or end - i <= 4
        or end - sentence_start(tokens, i) <= QUESTION_REACH
        or text.endswith("?")
    )


def sentence_start(tokens: Sequence[Token], i: int) -> int:
    while i > 0 and not tokens[i].sentence:
        i -= 1
    return i
