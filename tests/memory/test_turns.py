"""What a turn's score takes from beyond its own words: its session and its speaker (SPEC ME-2,
ME-6; src/nerve/memory/turns.py)."""

from __future__ import annotations

from nerve.memory.index import SearchIndex
from nerve.memory.model import Record
from tests.memory.test_index import ids, rec


def said(rid: str, speaker: str, text: str, session: str, at: float) -> Record:
    """A chat-log turn: data {speaker, text}, so its text begins with who spoke."""
    return Record.make(
        id=rid, user_id="u1", tier="episodic", intent="chat", kind="turn", session_id=session,
        data={"speaker": speaker, "text": text}, importance=0.5, created_at=at,
    )  # fmt: skip


def priya_and_sam() -> list[Record]:
    """Sam's short reply names Priya and the deploy script; Priya's own longer turn says what
    she did. On words alone Sam's turn wins."""
    return [
        said("sam", "Sam", "Priya, the deploy script!", "s1", 1.0),
        said("later", "Sam", "No rush, lunch first.", "s1", 2.0),
        said("idle", "Kim", "Lunch sounds good.", "s1", 3.0),
        said("weekend", "Sam", "How was the weekend?", "s2", 4.0),
        said("reading", "Priya", "Quiet, mostly reading.", "s2", 5.0),
        said("priya", "Priya", "Long morning: I rewrote the whole deploy script in Python, with "
             "tests and docs.", "s3", 7.0),
        said("thanks", "Sam", "Nice, thanks.", "s3", 8.0),
    ]  # fmt: skip


def test_turns_spoken_by_the_person_the_query_names_rank_first() -> None:
    """ME-6: a turn's speaker (the first word of its text: nerve's {role, content}, a chat
    log's {speaker, text}) counts: asked what Priya did, her own turn outranks Sam's reply that
    only names her."""
    idx = SearchIndex()
    idx.add(priya_and_sam())
    hits = ids(idx.search("u1", "What did Priya do to the deploy script?", 3))
    assert hits[0] == "priya" and hits.index("priya") < hits.index("sam")
    # Asked about Sam, the same words put Sam's turn first.
    assert ids(idx.search("u1", "What did Sam say about the deploy script?", 1)) == ["sam"]


def topical_sessions() -> list[Record]:
    """Two sessions, each ending in a turn about a glaze, beyond context reach of the rest; only
    the first session is about pottery."""
    talk = {
        "art": ["We started a pottery course", "Sounds fun", "It was", "Tell me more",
                "The glaze came out blue"],
        "food": ["Breakfast was good", "What did you have", "Donuts", "Any good",
                 "The glaze was sweet"],
    }  # fmt: skip
    return [
        rec(f"{name}{i}", line, kind="turn", session=name, at=10.0 * n + i)
        for n, (name, lines) in enumerate(talk.items())
        for i, line in enumerate(lines)
    ]


def test_a_turn_in_a_session_about_the_query_outranks_a_lone_match_elsewhere() -> None:
    """ME-6: the session as a whole is scored too (BM25 over sessions, blended in): the glaze
    of the pottery session outranks the shorter glaze of the breakfast chat."""
    idx = SearchIndex()
    idx.add(topical_sessions())
    hits = ids(idx.search("u1", "pottery glaze", 10))
    assert hits[0] == "art0"
    assert hits.index("art4") < hits.index("food4")


def test_a_record_outside_any_session_counts_as_its_own_session() -> None:
    """ME-2: the session signal never sinks memories and events below turns: the same words
    score the same as a memory and as a turn alone in its session."""
    idx = SearchIndex()
    idx.add([rec("memory", "pottery glaze recipe"),
             rec("turn", "pottery glaze recipe", kind="turn", session="s")])  # fmt: skip
    assert dict(idx.search("u1", "glaze recipe", 5)) == {"memory": 1.0, "turn": 1.0}


def test_session_and_speaker_signals_survive_removals_and_compaction() -> None:
    """ME-2: after most records are removed (the index compacts) and a session is emptied and
    refilled, both signals still rank as before."""
    idx = SearchIndex()
    idx.add(
        said(f"f{i}", "Sam" if i % 2 else "Kim", f"filler {i} glaze", f"filler{i // 20}", 100 + i)
        for i in range(3000)
    )
    idx.add(priya_and_sam())
    idx.add(topical_sessions())
    idx.remove(f"f{i}" for i in range(3000))
    idx.remove(["weekend", "reading"])  # all of session s2
    idx.add([said("weekend", "Sam", "How was the weekend?", "s2", 4.0)])
    assert len(idx) == 6 + 10
    hits = ids(idx.search("u1", "What did Priya do to the deploy script?", 3))
    assert hits[0] == "priya" and hits.index("priya") < hits.index("sam")
    hits = ids(idx.search("u1", "pottery glaze", 10))
    assert hits.index("art4") < hits.index("food4")
