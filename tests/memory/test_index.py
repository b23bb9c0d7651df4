"""The memory search index: ranking, isolation, updates, filters, odd input (SPEC ME-2, ME-6)."""

from __future__ import annotations

import pytest

from nerve.memory.index import SearchIndex
from nerve.memory.model import Kind, Record
from nerve.memory.tokenize import terms


def rec(
    rid: str,
    text: str,
    *,
    user: str = "u1",
    kind: Kind = "memory",
    session: str | None = None,
    at: float = 1.7e9,
) -> Record:
    return Record.make(
        id=rid, user_id=user, tier="episodic", intent="note", kind=kind, session_id=session,
        data={"text": text}, importance=0.5, created_at=at,
    )  # fmt: skip


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [rid for rid, _ in hits]


@pytest.fixture
def index() -> SearchIndex:
    idx = SearchIndex()
    idx.add([
        rec("pottery", "Melanie signed up for a pottery class in July"),
        rec("sweden", "Caroline moved from Sweden four years ago"),
        rec("dog", "The neighbours got a new dog called Rex"),
        rec("paint", "Melanie painted a sunrise over the lake last year"),
    ])  # fmt: skip
    return idx


def test_a_matching_record_outranks_the_others_and_scores_are_normalized(
    index: SearchIndex,
) -> None:
    """ME-2: recall by text query ranks what matches first; the best scores 1.0, the rest less
    but above zero, so the caller can multiply by a decay factor (ME-7)."""
    hits = index.search("u1", "When did Melanie take a pottery class?", 10)
    assert hits[0] == ("pottery", 1.0)
    assert "sweden" not in ids(hits) and "dog" not in ids(hits)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)


def test_inflected_forms_match_each_other(index: SearchIndex) -> None:
    """ME-2: stemming: "paintings" finds "painted", "moving" finds "moved"."""
    assert ids(index.search("u1", "paintings", 5)) == ["paint"]
    assert ids(index.search("u1", "moving", 5)) == ["sweden"]


def test_k_limits_the_number_of_results(index: SearchIndex) -> None:
    """ME-2: at most k results."""
    assert len(index.search("u1", "Melanie", 1)) == 1
    assert len(index.search("u1", "Melanie", 10)) == 2


def test_a_search_never_returns_another_users_record_even_with_identical_text() -> None:
    """ME-2: isolation by user is absolute, whatever the text."""
    idx = SearchIndex()
    idx.add([rec("a1", "my bank pin is 4321", user="alice"),
             rec("b1", "my bank pin is 4321", user="bob")])  # fmt: skip
    assert ids(idx.search("alice", "bank pin", 10)) == ["a1"]
    assert ids(idx.search("bob", "bank pin", 10)) == ["b1"]
    assert idx.search("carol", "bank pin", 10) == []


def test_another_users_records_do_not_change_a_users_scores() -> None:
    """ME-2: not even term statistics are shared between users."""
    idx = SearchIndex()
    idx.add([rec("a1", "hiking in the alps", user="alice"),
             rec("a2", "hiking boots and alps maps", user="alice")])  # fmt: skip
    before = idx.search("alice", "alps hiking boots", 10)
    idx.add(rec(f"b{i}", "alps alps hiking", user="bob") for i in range(50))
    assert idx.search("alice", "alps hiking boots", 10) == before


def test_a_removed_record_is_never_found_again(index: SearchIndex) -> None:
    """ME-2: remove takes a record out of search at once; unknown ids are ignored."""
    index.remove(["pottery", "no-such-id"])
    assert "pottery" not in ids(index.search("u1", "pottery class", 10))
    assert len(index) == 3


def test_adding_an_existing_id_replaces_the_record(index: SearchIndex) -> None:
    """ME-2: add is add-or-replace by id; the old text stops matching."""
    index.add([rec("pottery", "Melanie quit the choir")])
    assert index.search("u1", "pottery", 10) == []
    assert ids(index.search("u1", "choir", 10)) == ["pottery"]
    assert len(index) == 4


def test_a_record_replaced_under_another_user_leaves_the_first_user() -> None:
    """ME-2: an id belongs to one user at a time."""
    idx = SearchIndex()
    idx.add([rec("x", "garden tomatoes", user="alice")])
    idx.add([rec("x", "garden tomatoes", user="bob")])
    assert idx.search("alice", "tomatoes", 10) == []
    assert ids(idx.search("bob", "tomatoes", 10)) == ["x"]
    assert len(idx) == 1


def test_remove_user_forgets_only_that_user() -> None:
    """ME-2: forgetting a user removes all of theirs and nothing of anyone else's."""
    idx = SearchIndex()
    idx.add([rec("a1", "chess club", user="alice"), rec("a2", "chess book", user="alice"),
             rec("b1", "chess club", user="bob")])  # fmt: skip
    idx.remove_user("alice")
    idx.remove_user("nobody")
    assert idx.search("alice", "chess", 10) == []
    assert ids(idx.search("bob", "chess", 10)) == ["b1"]
    assert len(idx) == 1
    idx.add([rec("a1", "chess again", user="alice")])
    assert ids(idx.search("alice", "chess", 10)) == ["a1"]


def test_search_stays_right_after_most_records_are_removed() -> None:
    """ME-2: removing most of a user's records (which compacts the index) keeps the survivors
    and their conversation context findable."""
    idx = SearchIndex()
    idx.add(rec(f"r{i}", f"note number{i} about topic{i % 7}") for i in range(3000))
    idx.add([rec("t1", "Where did you go on holiday?", kind="turn", session="s", at=1.0),
             rec("t2", "Lisbon, by train.", kind="turn", session="s", at=2.0)])  # fmt: skip
    idx.remove(f"r{i}" for i in range(3000) if i % 10)
    assert len(idx) == 302
    assert ids(idx.search("u1", "number2990", 5)) == ["r2990"]
    assert idx.search("u1", "number2991", 5) == []
    assert len(idx.search("u1", "topic3", 1000)) == 300 // 7 + 1
    assert ids(idx.search("u1", "holiday", 5)) == ["t1", "t2"]


def test_allowed_filters_ids_and_still_fills_k_from_lower_ranks() -> None:
    """ME-2: the caller's filters (intent, tier, time) reach the index as `allowed`."""
    idx = SearchIndex()
    idx.add(rec(f"r{i}", "pizza " * (30 - i) + "dinner") for i in range(30))
    hits = idx.search("u1", "pizza", 3, allowed=lambda rid: int(rid[1:]) >= 20)
    assert ids(hits) == ["r20", "r21", "r22"]
    assert hits[0][1] == 1.0
    assert idx.search("u1", "pizza", 3, allowed=lambda rid: False) == []


@pytest.mark.parametrize(
    "query",
    ["", "   ", "!!! ??? ...", "the of and to", "zzqx unknownword", "\x00\x00", "\ud800 \udfff",
     "्ािीु", "\u200b\u200c", "pottery" * 5000, " ".join(f"w{i}" for i in range(100_000)),
     "a'b'c''d ' '", "🙂🙂", "_"],
)  # fmt: skip
def test_garbage_empty_or_huge_queries_never_raise(index: SearchIndex, query: str) -> None:
    """ME-2: any string is a valid query; one with no known word finds nothing."""
    hits = index.search("u1", query, 10)
    assert all(0.0 < score <= 1.0 for _, score in hits)


def test_a_query_of_many_known_words_keeps_the_rarest(index: SearchIndex) -> None:
    """ME-2: a query's work is bounded by keeping its rarest known words, which carry its
    meaning; common ones are dropped first."""
    words = " ".join(f"filler{i}" for i in range(100))
    index.add(rec(f"f{i}", words) for i in range(200))
    assert ids(index.search("u1", words + " Sweden", 3))[0] == "sweden"


def test_odd_k_and_unknown_users_give_nothing(index: SearchIndex) -> None:
    """ME-2: k <= 0 or a user with no records: no results, no error."""
    assert index.search("u1", "pottery", 0) == []
    assert index.search("u1", "pottery", -5) == []
    assert index.search("stranger", "pottery", 5) == []


def test_odd_record_text_is_indexed_without_error() -> None:
    """ME-2: records with empty, binary-looking or surrogate-laden text still index."""
    idx = SearchIndex()
    idx.add([rec("e", ""), rec("s", "\ud800 moon \x00"), rec("m", "्ािीु")])
    assert ids(idx.search("u1", "moon", 5)) == ["s"]
    assert len(idx) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("हिन्दी में बात करो", ["हिन्दी", "में", "बात", "करो"]),
        ("தமிழ் பேசு", ["தமிழ்", "பேசு"]),
        ("తెలుగు ಕನ್ನಡ മലയാളം বাংলা", ["తెలుగు", "ಕನ್ನಡ", "മലയാളം", "বাংলা"]),
        ("Café NAÏVE", ["café", "naïv"]),
        ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),
        ("Caroline's don't delete_data", ["carolin", "delet", "data"]),
        ("１２３ ＡＢＣ", ["123", "abc"]),
    ],
)
def test_words_of_any_script_are_kept_whole(text: str, expected: list[str]) -> None:
    """ME-2: Indic vowel signs and viramas stay inside their word; CJK runs become bigrams;
    width and case are folded; possessives and stop words dropped."""
    assert terms(text) == expected


def test_native_script_and_romanized_indic_records_are_found_by_their_words() -> None:
    """ME-2: memories in Hindi, Tamil or romanized Hinglish are recalled by their own words."""
    idx = SearchIndex()
    idx.add([rec("hi", "कल सुबह डॉक्टर के पास जाना है"),
             rec("ta", "நாளை அம்மாவுக்கு போன் பண்ணு"),
             rec("hinglish", "kal meeting ka reminder bhejo Priya ko"),
             rec("en", "Send the weekly report to Priya")])  # fmt: skip
    assert ids(idx.search("u1", "डॉक्टर", 5)) == ["hi"]
    assert ids(idx.search("u1", "அம்மாவுக்கு போன்", 5)) == ["ta"]
    assert ids(idx.search("u1", "meeting reminder bhejo", 5)) == ["hinglish"]
    assert ids(idx.search("u1", "Priya", 5)) == ["en", "hinglish"] or ids(
        idx.search("u1", "Priya", 5)
    ) == ["hinglish", "en"]


def test_a_turn_is_found_through_the_neighbouring_turns_of_its_session() -> None:
    """ME-6: a conversation turn is read in context: an answer that never repeats the question's
    words is still found, ranked after the turn that holds them."""
    idx = SearchIndex()
    idx.add([
        rec("q", "What did you do at the pottery workshop?", kind="turn", session="s1", at=1.0),
        rec("a", "I made a little bowl for my kids!", kind="turn", session="s1", at=2.0),
        rec("mid", "Lovely. The weather is nice", kind="turn", session="s1", at=3.0),
        rec("far", "Anyway, see you soon", kind="turn", session="s1", at=9.0),
        rec("other", "Tell me about the pottery", kind="turn", session="s2", at=3.0),
    ])  # fmt: skip
    hits = ids(idx.search("u1", "pottery workshop", 10))
    assert hits[:2] == ["q", "a"]
    assert "far" not in hits  # three turns after the question: out of reach
    assert idx.search("u1", "bowl", 10)[0] == ("a", 1.0)


def test_only_turns_of_the_same_session_lend_context() -> None:
    """ME-6: other kinds of record and turns of other sessions stand on their own."""
    idx = SearchIndex()
    idx.add([
        rec("m1", "We talked about the pottery workshop", at=1.0),
        rec("m2", "I made a little bowl", at=2.0),
        rec("t1", "pottery workshop tomorrow", kind="turn", session="s1", at=1.0),
        rec("t2", "sounds lovely", kind="turn", session="s2", at=2.0),
    ])  # fmt: skip
    assert set(ids(idx.search("u1", "pottery workshop", 10))) == {"m1", "t1"}


def test_turns_are_linked_in_time_order_whatever_the_insertion_order() -> None:
    """ME-6: a turn added late but dated earlier takes its place in the session; removing a turn
    links its neighbours to each other."""
    idx = SearchIndex()
    idx.add([rec("t3", "charlie", kind="turn", session="s", at=3.0),
             rec("t1", "alpha", kind="turn", session="s", at=1.0),
             rec("t9", "zulu", kind="turn", session="s", at=9.0)])  # fmt: skip
    assert set(ids(idx.search("u1", "zulu", 10))) == {"t9", "t3", "t1"}
    idx.add([rec("t5", "mike", kind="turn", session="s", at=5.0),
             rec("t4", "november", kind="turn", session="s", at=4.0)])  # fmt: skip
    assert set(ids(idx.search("u1", "zulu", 10))) == {"t9", "t5", "t4"}
    idx.remove(["t5", "t4"])
    assert set(ids(idx.search("u1", "zulu", 10))) == {"t9", "t3", "t1"}


def test_an_allowed_callback_that_raises_leaves_the_index_usable(index: SearchIndex) -> None:
    """ME-2: a failing filter propagates its error and the index goes on working."""

    def broken(record_id: str) -> bool:
        raise RuntimeError("filter failed")

    with pytest.raises(RuntimeError) as caught:
        index.search("u1", "Melanie", 5, allowed=broken)
    index.add([rec("new", "Melanie bought a kiln")])
    assert ids(index.search("u1", "kiln", 5)) == ["new"]
    del caught


def test_stop_words_can_be_kept() -> None:
    """ME-2: function words are dropped by default (they cost recall on LoCoMo), kept on request."""
    assert terms("what is the plan") == ["plan"]
    assert terms("what is the plan", frozenset()) == ["what", "is", "the", "plan"]


def test_loading_many_records_at_once_ranks_exactly_as_adding_them_one_by_one() -> None:
    """ME-2: a user's index loaded in bulk (the search cache's first search) links each session
    once; the scores equal those of the same records added one at a time, shuffled sessions,
    re-added ids and later single adds included."""
    import random

    rng = random.Random(5)
    words = ["pottery", "class", "lake", "sunrise", "dog", "rex", "sweden", "moved", "painted",
             "july", "trip", "deploy"]  # fmt: skip
    at = rng.sample(range(1000), 300)  # distinct times: equal ones are ordered by slot
    records = [
        rec(f"r{i}", " ".join(rng.sample(words, 4)), kind="turn",
            session=f"s{rng.randrange(6)}", at=1.7e9 + at[i])
        for i in range(300)
    ]  # fmt: skip
    records += [rec("r7", "the pottery trip moved to july", kind="turn", session="s1",
                    at=1.7e9 + 0.5)]  # fmt: skip
    bulk, single = SearchIndex(), SearchIndex()
    bulk.add(records)
    for record in records:
        single.add([record])
    extra = rec("late", "a late pottery lake turn", kind="turn", session="s2", at=1.7e9 + 250.5)
    bulk.add([extra])
    single.add([extra])
    for query in ("pottery lake", "sweden dog", "deploy july trip", "rex"):
        assert dict(bulk.search("u1", query, 400)) == pytest.approx(
            dict(single.search("u1", query, 400))
        )
    assert bulk.size("u1") == single.size("u1") == 301
