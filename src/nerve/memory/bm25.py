"""One user's BM25 index: incremental postings, conversation context, numpy scoring (SPEC ME-2).

Records live in numbered slots; each term keeps the slots it occurs in and how often, in
append-only arrays, so adding a record appends and removing one only marks its slot dead (dead
slots are compacted away once they outnumber the live ones). Slot 0 is a permanent empty slot:
"no neighbour" points there.

A conversation turn (kind "turn" with a session) is scored as its own terms plus those of the
turns up to `len(context)` places before and after it in the same session (ordered by
created_at, then insertion), at the context weights. The expansion happens at query time from the
plain postings, so adding a turn never rewrites its neighbours' postings; a term's document
frequency counts documents with context. Then a turn's session and speaker have their say
(turns.py).
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

from nerve.memory.model import Indexed
from nerve.memory.slots import Floats, Ints, sum_by_slot
from nerve.memory.tokenize import STOP_WORDS, terms
from nerve.memory.turns import SESSION, SPEAKER, TurnSignals

__all__ = ["K1", "MAX_QUERY_TERMS", "B", "UserIndex"]

MAX_QUERY_TERMS = 64
# BM25's term saturation and length normalization, as tuned on LoCoMo conversations 1-3
# (bench/locomo.py --search; k1 1.2 scored 0.010 lower there, the same held out).
K1, B = 0.9, 0.75


class UserIndex:
    """One user's records."""

    def __init__(
        self,
        k1: float,
        b: float,
        context: tuple[float, ...],
        *,
        session: float = SESSION,
        speaker: float = SPEAKER,
        stop_words: bool = True,
    ) -> None:
        """`session` and `speaker` weigh the turn signals (turns.py; 0 turns one off);
        `stop_words` False keeps function words (measured worse)."""
        self.k1, self.b = k1, b
        self.stop_words = STOP_WORDS if stop_words else frozenset()
        self.turns = TurnSignals(session, speaker)
        reach = len(context)
        # Offsets to the neighbours and their weights: -2, -1, +1, +2 -> 0.25, 0.5, 0.5, 0.25.
        self.offsets = [d for d in range(-reach, reach + 1) if d]
        self.weights = [context[abs(d) - 1] for d in self.offsets]
        self.mirror = [self.offsets.index(-d) for d in self.offsets]
        self.postings: dict[str, tuple[array[int], array[float]]] = {}
        self.slot_of: dict[str, int] = {}
        self.id_at: list[str | None] = [None]
        self.alive = bytearray(1)
        self.length = array("d", [0.0])  # terms in the record itself
        self.context_length = array("d", [0.0])  # ... and in its weighted neighbours
        self.context_total = 0.0  # of live slots
        self.neighbour = [array("q", [0]) for _ in self.offsets]
        self.session_at: list[str | None] = [None]
        self.created = array("d", [0.0])
        self.sessions: dict[str, list[tuple[float, int]]] = {}  # (created_at, slot), sorted
        self.dead = 0

    def ids(self) -> list[str]:
        return list(self.slot_of)

    # -- writing -------------------------------------------------------------------------------

    def add(self, record: Indexed) -> None:
        slot, session, at = self._append(record)
        if session is not None:
            order = self.sessions.setdefault(session, [])
            pos = bisect.bisect(order, (at, slot))
            order.insert(pos, (at, slot))
            self._relink(order, pos)

    def extend(self, records: Iterable[Indexed]) -> None:
        """`add` for many new records (no id indexed already), each session linked once at the
        end instead of once per turn: how a user's index is loaded (cache.py)."""
        touched: set[str] = set()
        for record in records:
            slot, session, at = self._append(record)
            if session is not None:
                self.sessions.setdefault(session, []).append((at, slot))
                touched.add(session)
        for session in touched:
            order = self.sessions[session]
            order.sort()
            self._relink(order, 0, len(order))

    def _append(self, record: Indexed) -> tuple[int, str | None, float]:
        """A new slot for `record` with its postings: (slot, its session if a turn, its time);
        linking it to its session's neighbours is the caller's."""
        slot = len(self.id_at)
        words = terms(record.text, self.stop_words)
        counts = Counter(words)
        for term, count in counts.items():
            posting = self.postings.get(term)
            if posting is None:
                posting = self.postings[term] = (array("q"), array("d"))
            posting[0].append(slot)
            posting[1].append(count)
        size = float(counts.total())
        self.slot_of[record.id] = slot
        self.id_at.append(record.id)
        self.alive.append(1)
        self.length.append(size)
        self.context_length.append(size)
        self.context_total += size
        for column in self.neighbour:
            column.append(0)
        session = record.session_id if record.kind == "turn" else None
        self.session_at.append(session)
        self.turns.append(session, words, size)
        at = record.created_at if math.isfinite(record.created_at) else 0.0
        self.created.append(at)
        return slot, session, at

    def remove(self, record_id: str) -> None:
        slot = self.slot_of.pop(record_id)
        self.id_at[slot] = None
        self.alive[slot] = 0
        self.context_total -= self.context_length[slot]
        session = self.session_at[slot]
        if session is not None:
            order = self.sessions[session]
            at = bisect.bisect_left(order, (self.created[slot], slot))
            del order[at]
            self.turns.remove(slot, session, self.length[slot], emptied=not order)
            if not order:
                del self.sessions[session]
            for column in self.neighbour:
                column[slot] = 0
            self._relink(order, at)
        self.dead += 1
        if self.dead > 1024 and self.dead > len(self.slot_of):
            self._compact()

    def _relink(self, order: list[tuple[float, int]], at: int, stop: int | None = None) -> None:
        """Point the turns around position `at` of a session (or, with `stop`, those at
        positions at..stop-1) at their current neighbours."""
        reach = len(self.offsets) // 2
        start, end = (max(0, at - reach), at + reach + 1) if stop is None else (at, stop)
        for pos in range(start, min(len(order), end)):
            slot = order[pos][1]
            size = self.length[slot]
            for column, offset, weight in zip(
                self.neighbour, self.offsets, self.weights, strict=True
            ):
                near = pos + offset
                other = order[near][1] if 0 <= near < len(order) else 0
                column[slot] = other
                size += weight * self.length[other]
            self.context_total += size - self.context_length[slot]
            self.context_length[slot] = size

    def _compact(self) -> None:
        """Renumber the live slots densely and drop the dead ones' postings."""
        kept = np.frombuffer(self.alive, dtype=np.uint8).astype(bool)
        kept[0] = True  # the empty slot stays, as slot 0
        remap = np.cumsum(kept) - 1
        for term in list(self.postings):
            slots, counts = self.postings[term]
            s = np.frombuffer(slots, dtype=np.int64)
            keep = kept[s]
            if not keep.any():
                del self.postings[term]
                continue
            self.postings[term] = (
                array("q", remap[s[keep]].tobytes()),
                array("d", np.frombuffer(counts, dtype=np.float64)[keep].tobytes()),
            )
            del s, keep
        keep = np.flatnonzero(kept)
        self.id_at = [self.id_at[i] for i in keep]
        self.slot_of = {rid: i for i, rid in enumerate(self.id_at) if rid is not None}
        self.session_at = [self.session_at[i] for i in keep]
        for name in ("length", "context_length", "created"):
            values = np.frombuffer(getattr(self, name), dtype=np.float64)[keep]
            setattr(self, name, array("d", values.tobytes()))
        self.neighbour = [
            array("q", remap[np.frombuffer(col, dtype=np.int64)[keep]].tobytes())
            for col in self.neighbour
        ]
        self.alive = bytearray(np.frombuffer(self.alive, dtype=np.uint8)[keep].tobytes())
        lengths = np.frombuffer(self.context_length, dtype=np.float64)
        self.context_total = float(lengths[np.frombuffer(self.alive, dtype=np.bool_)].sum())
        del lengths
        self.sessions = {
            name: [(at, int(remap[slot])) for at, slot in order]
            for name, order in self.sessions.items()
        }
        self.turns.compact(keep)
        self.dead = 0

    # -- reading -------------------------------------------------------------------------------

    def search(
        self, query: str, k: int, allowed: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        live = len(self.slot_of)
        wanted = Counter(t for t in terms(query, self.stop_words) if t in self.postings)
        if not wanted or not live:
            return []
        if len(wanted) > MAX_QUERY_TERMS:  # keep the rarest: they carry the meaning
            rarest = sorted(wanted, key=lambda t: len(self.postings[t][0]))[:MAX_QUERY_TERMS]
            wanted = Counter({t: wanted[t] for t in rarest})
        size = len(self.id_at)
        alive = np.frombuffer(self.alive, dtype=np.bool_)
        context_length = np.frombuffer(self.context_length, dtype=np.float64)
        neighbour = [np.frombuffer(col, dtype=np.int64) for col in self.neighbour]
        mean = max(self.context_total / live, 1e-9)
        k1, b = self.k1, self.b
        found: list[Ints] = []
        gained: list[Floats] = []
        for term, repeat in wanted.items():
            slots, counts = self.postings[term]
            tf, where = self._context_tf(
                np.frombuffer(slots, dtype=np.int64),
                np.frombuffer(counts, dtype=np.float64),
                neighbour,
                size,
            )
            keep = alive[where]
            tf, where = tf[keep], where[keep]
            if not len(where):
                continue
            share = len(where)  # documents (with context) holding the term
            idf = math.log(1.0 + (live - share + 0.5) / (share + 0.5))
            norm = k1 * (1.0 - b + b * context_length[where] / mean)
            found.append(where)
            gained.append(repeat * idf * tf * (k1 + 1.0) / (tf + norm))
        # Views of growable buffers must not outlive the search: the next add would fail to
        # resize them (say an `allowed` callback raised and its traceback were kept).
        del alive, context_length, neighbour
        if not found:
            return []
        where, score = sum_by_slot(np.concatenate(found), np.concatenate(gained), size)
        score = self.turns.rescore(where, score, wanted, self.postings, (k1, b))
        return self._top(where, score, k, allowed)

    def _context_tf(
        self, slots: Ints, counts: Floats, neighbour: list[Ints], size: int
    ) -> tuple[Floats, Ints]:
        """Term frequency in each document with context: a record's own count plus its
        neighbours' counts at their weights. A term at slot s reaches the turn whose neighbour
        at offset d is s, which is s's neighbour at offset -d. Where there is none, slot 0 (never
        alive) takes the count."""
        parts, values = [slots], [counts]
        for mirror, weight in zip(self.mirror, self.weights, strict=True):
            parts.append(neighbour[mirror][slots])
            values.append(weight * counts)
        where, tf = sum_by_slot(np.concatenate(parts), np.concatenate(values), size)
        return tf, where

    def _top(
        self, where: Ints, score: Floats, k: int, allowed: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        """The k best allowed, looking deeper (4x each time) while `allowed` turns many down."""
        picked: list[tuple[str, float]] = []
        seen: set[int] = set()
        depth = k if allowed is None else 4 * k
        while True:
            if depth < len(where):
                head = np.argpartition(-score, depth)[:depth]
            else:
                head = np.arange(len(where))
            # Best first; equal scores: the newer record first.
            for i in head[np.lexsort((-where[head], -score[head]))].tolist():
                if i in seen:
                    continue
                seen.add(i)
                record_id = self.id_at[where[i]]
                if record_id is not None and (allowed is None or allowed(record_id)):
                    picked.append((record_id, float(score[i])))
                    if len(picked) == k:
                        break
            if len(picked) == k or depth >= len(where):
                break
            depth *= 4
        if not picked:
            return []
        best = picked[0][1]
        return [(record_id, value / best) for record_id, value in picked]
