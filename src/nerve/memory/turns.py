"""What a conversation turn's search score takes from beyond its own words (SPEC ME-2, ME-6).

Two signals, kept by slot beside a user's BM25 index (bm25.py), both tuned on LoCoMo
conversations 1-3 and measured on 4-5 (bench/locomo.py --search):

- Its session as a whole. BM25 with sessions as the documents (a session's document is all its
  live turns) is blended in: a turn scores its own share of the best turn plus `session` times
  its session's share of the best session. A record outside any session counts as its own
  session, so memories and events keep their place beside turns. A turn in a session about the
  question's topic outranks a lone word match elsewhere.
- Who said it. A turn's speaker is the first term of its text: nerve writes turns as {role,
  content, ...} and `searchable_text` keeps that order; chat logs come as {speaker, text}.
  Turns spoken by someone the query names score `1 + speaker` times as much: "what did Priya say
  about the deploy" prefers Priya's turns, though the others' replies to her name her too.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter

import numpy as np

from nerve.memory.slots import Floats, Ints, sum_by_slot

__all__ = ["SESSION", "SPEAKER", "TurnSignals"]

SESSION = 0.5  # weight of the session's share beside the turn's own
SPEAKER = 0.5  # a turn of a speaker the query names scores 1.5x

Postings = dict[str, tuple["array[int]", "array[float]"]]


class TurnSignals:
    """Session and speaker numbers by slot (0: none, or a removed slot), session lengths."""

    def __init__(self, session: float, speaker: float) -> None:
        self.session, self.speaker = session, speaker
        self.session_no = array("q", [0])  # by slot
        self.number: dict[str, int] = {}  # live session -> its number
        self.length = array("d", [0.0])  # by session number: terms in its live turns
        self.speaker_no = array("q", [0])  # by slot
        self.speakers: dict[str, int] = {}  # speaker term -> its number (from 1)

    def append(self, session: str | None, words: list[str], size: float) -> None:
        """The next slot: a turn of `session` whose terms are `words`, or (None) no turn."""
        if session is None or not words:
            self.session_no.append(0)
            self.speaker_no.append(0)
            return
        number = self.number.get(session)
        if number is None:
            number = self.number[session] = len(self.length)
            self.length.append(0.0)
        self.length[number] += size
        self.session_no.append(number)
        self.speaker_no.append(self.speakers.setdefault(words[0], len(self.speakers) + 1))

    def remove(self, slot: int, session: str, size: float, emptied: bool) -> None:
        number = self.session_no[slot]
        if number:
            self.length[number] -= size
        self.session_no[slot] = self.speaker_no[slot] = 0
        if emptied:
            self.number.pop(session, None)

    def compact(self, keep: Ints) -> None:
        """Keep the slots `keep` (sorted), renumbering the live sessions densely."""
        old = np.array(list(self.number.values()), dtype=np.int64)
        renumber = np.zeros(len(self.length), dtype=np.int64)
        renumber[old] = np.arange(1, len(old) + 1)
        lengths = np.frombuffer(self.length, dtype=np.float64)[old]
        self.length = array("d", [0.0, *lengths.tolist()])
        self.number = dict(zip(self.number, range(1, len(old) + 1), strict=True))
        numbers = renumber[np.frombuffer(self.session_no, dtype=np.int64)[keep]]
        self.session_no = array("q", numbers.tobytes())
        speakers = np.frombuffer(self.speaker_no, dtype=np.int64)[keep]
        self.speaker_no = array("q", speakers.tobytes())
        live = set(np.unique(speakers).tolist())
        self.speakers = {term: n for term, n in self.speakers.items() if n in live}

    def rescore(
        self,
        where: Ints,
        score: Floats,
        wanted: Counter[str],
        postings: Postings,
        bm25: tuple[float, float],
    ) -> Floats:
        """The turn scores of the slots `where` with both signals applied."""
        if self.session:
            score = self._blend(where, score, wanted, postings, bm25)
        named = [self.speakers[t] for t in wanted if t in self.speakers]
        if self.speaker and named:
            who = np.frombuffer(self.speaker_no, dtype=np.int64)[where]
            said = np.isin(who, named) if len(named) > 1 else who == named[0]
            boosted: Floats = np.where(said, score * (1.0 + self.speaker), score)
            return boosted
        return score

    def _blend(
        self,
        where: Ints,
        score: Floats,
        wanted: Counter[str],
        postings: Postings,
        bm25: tuple[float, float],
    ) -> Floats:
        numbers = np.frombuffer(self.session_no, dtype=np.int64)
        lengths = np.frombuffer(self.length, dtype=np.float64)
        sessions, size, (k1, b) = len(self.number), len(self.length), bm25
        own: Floats = score / float(score.max())
        mean = max(float(lengths.sum()) / max(sessions, 1), 1e-9)
        found: list[Ints] = []
        gained: list[Floats] = []
        for term, repeat in wanted.items():
            slots, counts = postings[term]
            at = numbers[np.frombuffer(slots, dtype=np.int64)]
            at, tf = sum_by_slot(at, np.frombuffer(counts, dtype=np.float64), size)
            if len(at) and at[0] == 0:  # records outside sessions, and removed ones
                at, tf = at[1:], tf[1:]
            if len(at):
                idf = math.log(1.0 + (sessions - len(at) + 0.5) / (len(at) + 0.5))
                norm = k1 * (1.0 - b + b * lengths[at] / mean)
                found.append(at)
                gained.append(repeat * idf * tf * (k1 + 1.0) / (tf + norm))
        if not found:
            return own
        at, total = sum_by_slot(np.concatenate(found), np.concatenate(gained), size)
        share = np.zeros(size)
        share[at] = total / total.max()
        mine = numbers[where]
        blended: Floats = own + self.session * np.where(mine > 0, share[mine], own)
        return blended
