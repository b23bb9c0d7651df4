"""Relay verbs ("tell", "ask", "bolo"): a message to someone else, or a question (IN-2, RT-2).

"tell Priya I'm late" and "Priya ko bolo" send a message; "tell me the forecast" and "mujhe
batao" ask for something; "let me know if you need anything" and "can you tell me more about
your trip?" talk to the person addressed and ask for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nerve.intent import chat, messages
from nerve.intent.cues import Token
from nerve.intent.shape import clause_end, imperative, indic_command

__all__ = ["next_word", "relay", "to_you"]

SEND = 0.85
ASK = 0.6


def relay(
    command: Callable[[str, float, int, int], None],
    text: str,
    tokens: list[Token],
    i: int,
    openers: frozenset[str],
    languages: Sequence[str],
    rest: str,
) -> None:
    """Score the relay verb at token i through `command(intent, weight, start, end)`."""
    start, end, word = tokens[i].start, tokens[i].end, tokens[i].word
    english = word in ("tell", "ask", "let")
    if english and not imperative(tokens, i, i, text, openers):
        return
    if not english and not indic_command(tokens, i, rest):
        return  # "bataya jata hai" narrates
    addressee = next_word(tokens, i)
    if addressee in messages.SELF and _about_listener(tokens, i + 2):
        return  # "let me know if you need anything", "can you tell me more about your trip?"
    if addressee in messages.SELF:
        command("query_data", ASK, start, end)
    elif addressee in messages.PRONOUNS or messages.recipient(text, start, end, languages):
        command("send_message", SEND, start, end)
    elif word != "let":
        command("query_data", ASK, start, end)


def next_word(tokens: Sequence[Token], last: int) -> str:
    return tokens[last + 1].word if last + 1 < len(tokens) else ""


def _about_listener(tokens: Sequence[Token], i: int) -> bool:
    """The clause from token i is about the person addressed, or is "let me know"."""
    rest = tokens[i : clause_end(tokens, i) if i < len(tokens) else i]
    return bool(rest) and (rest[0].word == "know" or any(t.word in chat.YOU for t in rest))


def to_you(tokens: Sequence[Token], last: int) -> bool:
    """The verb at token `last` is said to the listener: "good to see you", "miss you"."""
    after = tokens[last + 1] if last + 1 < len(tokens) else None
    return after is not None and not after.opens and after.word in chat.YOU
