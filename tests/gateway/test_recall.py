"""Memory for any client on the gateway path (SPEC TP-2): whose memory a request uses, the ME-6
block added at the end of each dialect's system prompt, the exchange stored after the answer,
and a broken or slow memory that never fails the call. A real Memory on a temp SQLite file."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from nerve.access.principal import LOCAL, Principal
from nerve.config import parse_config
from nerve.gateway.dialects.messages import MESSAGES
from nerve.gateway.dialects.responses import RESPONSES
from nerve.gateway.recall import PathMemory, path_user, with_context
from nerve.memory import Memory, Query, build_memory
from tests.memory.memstore import MemStore

QUESTION = "which editor should I open the repo in?"


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "auto", "messages": list(messages)}


def user(text: str = QUESTION) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'nerve.db'}"


@pytest.fixture
async def memory(url: str) -> AsyncIterator[Memory]:
    mem = build_memory(parse_config({"storage": {"url": url}}, environ={}), environ={})
    await mem.open()
    yield mem
    await mem.close()


@pytest.fixture
async def asha(memory: Memory) -> Memory:
    await memory.store_fact("asha", "asha", "favourite editor", "helix", 0.9)
    return memory


@pytest.fixture
def path(memory: Memory) -> PathMemory:
    return PathMemory(lambda: memory)


# -- recall into each dialect ----------------------------------------------------------------


async def test_a_users_fact_is_recalled_into_a_chat_body_after_its_system_messages(asha, path):
    body = chat({"role": "system", "content": "You are helpful."}, user())
    added, n = await path.recall("chat", body, "asha")
    assert n >= 1
    system, block, question = added["messages"]
    assert system == {"role": "system", "content": "You are helpful."}
    assert block["role"] == "system" and "favourite editor: helix" in block["content"]
    assert block["content"].startswith("<memory>")
    assert question == user()
    assert len(body["messages"]) == 2  # the client's body is not changed
    assert path.stats()["recalls"] == 1 and path.stats()["recalled"] == n


async def test_the_block_is_the_one_api_memory_context_gives(asha, path):
    from nerve.memory import build_context

    expected = await build_context(asha, "asha", query=QUESTION)
    added, _ = await path.recall("chat", chat(user()), "asha")
    assert added["messages"][0] == {"role": "system", "content": expected.prompt_block}


async def test_another_user_or_one_without_memories_gets_the_body_unchanged(asha, path):
    body = chat(user())
    assert await path.recall("chat", body, "ravi") == (body, 0)
    assert path.failures == 0


async def test_no_memory_configured_or_closed_server_memory_is_nothing_not_a_failure():
    path = PathMemory(lambda: None)
    body = chat(user())
    assert await path.recall("chat", body, "asha") == (body, 0)
    path.store_later("asha", "chat", body, "answer")
    await path.idle()
    assert path.stats() == {"recalls": 0, "recalled": 0, "stored": 0, "failures": 0,
                            "dropped": 0, "pending": 0}  # fmt: skip


def test_chat_gets_a_developer_message_where_the_client_uses_that_role():
    body = chat({"role": "developer", "content": "rules"}, user())
    roles = [m["role"] for m in with_context("chat", body, "<memory>x</memory>")["messages"]]
    assert roles == ["developer", "developer", "user"]
    bare = with_context("chat", chat(user()), "B")["messages"]
    assert bare[0] == {"role": "system", "content": "B"}


def test_messages_get_the_block_after_their_system_string_or_blocks_cache_control_kept():
    cached = {
        "type": "text",
        "text": "You are Claude Code.",
        "cache_control": {"type": "ephemeral"},
    }
    listed = with_context("messages", {"system": [cached], "messages": [user()]}, "B")
    assert listed["system"] == [cached, {"type": "text", "text": "B"}]
    assert with_context("messages", {"system": "Be brief."}, "B")["system"] == "Be brief.\n\nB"
    assert with_context("messages", {"messages": [user()]}, "B")["system"] == "B"


def test_responses_get_the_block_appended_to_their_instructions():
    body = {"instructions": "You are Codex.", "input": QUESTION}
    assert with_context("responses", body, "B")["instructions"] == "You are Codex.\n\nB"
    assert with_context("responses", {"input": QUESTION}, "B")["instructions"] == "B"
    assert body["instructions"] == "You are Codex."


def test_an_empty_block_changes_nothing_and_an_unknown_dialect_is_refused():
    body = chat(user())
    assert with_context("chat", body, "") is body
    with pytest.raises(ValueError, match="embeddings"):
        with_context("embeddings", {"input": "x"}, "B")


@pytest.mark.parametrize("dialect", ["messages", "responses"])
async def test_recall_reaches_messages_and_responses_bodies(asha, path, dialect):
    body = ({"system": [{"type": "text", "text": "S"}], "messages": [user()], "max_tokens": 9}
            if dialect == "messages" else {"instructions": "S", "input": QUESTION})  # fmt: skip
    added, n = await path.recall(dialect, body, "asha")
    prompt = added["system"][-1]["text"] if dialect == "messages" else added["instructions"]
    assert n >= 1 and "helix" in prompt


# -- whose memory ------------------------------------------------------------------------------


def test_a_key_bound_to_one_user_wins_over_the_header_and_the_body():
    bound = Principal("ci", users=("asha",))
    assert path_user(bound, {"x-nerve-user": "ravi"}, {"user": "meera"}) == "asha"


def test_then_the_header_then_the_bodys_user_field():
    assert path_user(LOCAL, {"x-nerve-user": "ravi"}, {"user": "meera"}) == "ravi"
    assert path_user(LOCAL, {}, {"user": "meera"}) == "meera"
    assert path_user(LOCAL, {"x-nerve-user": "  "}, {"user": "meera"}) == "meera"


def test_anthropic_metadata_user_id_and_responses_safety_identifier_name_the_user():
    messages = {"model": "m", "messages": [user()], "metadata": {"user_id": "asha"}}
    assert path_user(LOCAL, {}, MESSAGES.view(messages)) == "asha"
    responses = {"model": "m", "input": QUESTION, "safety_identifier": "ravi"}
    assert path_user(LOCAL, {}, RESPONSES.view(responses)) == "ravi"


def test_a_key_with_several_users_must_name_one_of_them_and_a_key_with_none_gets_no_memory():
    team = Principal("team", users=("asha", "ravi"))
    assert path_user(team, {"x-nerve-user": "ravi"}, {}) == "ravi"
    assert path_user(team, {}, {"user": "asha"}) == "asha"
    assert path_user(team, {"x-nerve-user": "meera"}, {}) is None
    assert path_user(team, {}, {}) is None
    assert path_user(Principal("nobody", users=()), {"x-nerve-user": "asha"}, {}) is None


@pytest.mark.parametrize("name", [None, "", "   ", "a\x00b", "bell\x07", "x" * 201, 42])
def test_no_user_or_one_memory_could_not_keep_is_no_memory(name):
    assert path_user(LOCAL, {}, {"user": name}) is None


# -- storing the exchange -----------------------------------------------------------------------


async def test_a_stored_exchange_is_recalled_in_a_later_conversation(memory, path):
    asked = chat(user("my cat is called Biscuit, remember that"))
    path.store_later("asha", "chat", asked, "Noted: your cat Biscuit.")
    await path.idle()
    assert path.stored == 2
    added, n = await path.recall("chat", chat(user("what is my cat called?")), "asha")
    assert n >= 1 and "Biscuit" in added["messages"][0]["content"]


async def test_turns_are_stored_in_order_as_the_assistant_stores_them(memory, path):
    path.store_later("asha", "chat", chat(user("hello there")), "hi")
    await path.idle()
    turns = await memory.store.query(Query("asha", kind="turn"))
    ordered = sorted(turns, key=lambda r: r.created_at)
    assert [t.data for t in ordered] == [{"role": "user", "content": "hello there"},
                                         {"role": "assistant", "content": "hi"}]  # fmt: skip
    assert {(t.tier, t.intent, t.session_id) for t in turns} == {
        ("episodic", "conversation", ordered[0].session_id)
    }


async def test_a_conversations_own_turns_are_not_recalled_back_into_it(memory, path):
    first = chat(user("the deploy key rotates on fridays"))
    path.store_later("asha", "chat", first, "Understood, fridays.")
    await path.idle()
    follow_up = chat(*first["messages"], {"role": "assistant", "content": "Understood, fridays."},
                     user("when does the deploy key rotate?"))  # fmt: skip
    assert await path.recall("chat", follow_up, "asha") == (follow_up, 0)
    elsewhere, n = await path.recall("chat", chat(user("when does the deploy key rotate?")),
                                     "asha")  # fmt: skip
    assert n >= 1 and "fridays" in elsewhere["messages"][0]["content"]


async def test_a_tool_round_stores_only_the_answer_and_empty_answers_store_nothing(memory, path):
    body = chat(user("read a.py"), {"role": "assistant", "content": None, "tool_calls": []},
                {"role": "tool", "tool_call_id": "c1", "content": "print(1)"})  # fmt: skip
    path.store_later("asha", "chat", body, "It prints 1.")
    path.store_later("asha", "chat", body, "   ")
    await path.idle()
    turns = await memory.store.query(Query("asha", kind="turn"))
    assert [t.data["role"] for t in turns] == ["assistant"]


async def test_a_turn_stored_by_one_process_is_recalled_by_another(memory, path, url):
    path.store_later("asha", "chat", chat(user("our staging host is kestrel-7")), "Got it.")
    await path.idle()
    script = (
        "import asyncio, sys\n"
        "from nerve.config import parse_config\n"
        "from nerve.gateway.recall import PathMemory\n"
        "from nerve.memory import build_memory\n"
        "async def main():\n"
        "    mem = build_memory(parse_config({'storage': {'url': sys.argv[1]}}, environ={}),\n"
        "                       environ={})\n"
        "    await mem.open()\n"
        "    body = {'messages': [{'role': 'user', 'content': 'what is the staging host?'}]}\n"
        "    added, n = await PathMemory(lambda: mem).recall('chat', body, 'asha')\n"
        "    print(n, added['messages'][0]['content'])\n"
        "    await mem.close()\n"
        "asyncio.run(main())\n"
    )
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script, url], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kestrel-7" in done.stdout and not done.stdout.startswith("0")


# -- memory broken -----------------------------------------------------------------------------


async def test_a_closed_store_leaves_the_body_unchanged_and_counts_the_failures(url):
    mem = build_memory(parse_config({"storage": {"url": url}}, environ={}), environ={})
    await mem.open()
    await mem.store_fact("asha", "asha", "favourite editor", "helix", 0.9)
    await mem.close()
    path = PathMemory(lambda: mem)
    body = chat(user())
    assert await path.recall("chat", body, "asha") == (body, 0)
    path.store_later("asha", "chat", body, "helix")
    await path.idle()
    assert path.failures == 2 and path.stored == 0


async def test_a_store_that_refuses_writes_fails_the_store_not_the_caller():
    store = MemStore()  # the test backend, in an outage: every write raises StoreDown
    store.writes_left = 0
    path = PathMemory(lambda: Memory(store))
    path.store_later("asha", "chat", chat(user("hello")), "hi")
    await path.idle()
    assert (path.failures, path.stored) == (1, 0)


class HangingStore(MemStore):
    """An outage that answers nothing: every read waits forever."""

    async def query(self, query: Query) -> list[Any]:
        await asyncio.Event().wait()
        return []


async def test_a_store_that_hangs_delays_the_call_by_the_recall_limit_only():
    path = PathMemory(lambda: Memory(HangingStore()), recall_seconds=0.05)
    body = chat(user())
    assert await asyncio.wait_for(path.recall("chat", body, "asha"), 5) == (body, 0)
    assert path.failures == 1


async def test_an_unknown_dialect_is_counted_not_raised(asha, path):
    body = {"input": "x"}
    assert await path.recall("embeddings", body, "asha") == (body, 0)
    assert path.failures == 1


async def test_stores_beyond_the_backlog_are_dropped_and_counted(memory):
    path = PathMemory(lambda: memory, max_pending=1)
    for _ in range(3):
        path.store_later("asha", "chat", chat(user("hello")), "hi")
    await path.idle()
    assert path.stats()["dropped"] == 2 and path.stored == 2


def test_storing_without_a_running_loop_is_counted_not_raised():
    path = PathMemory(lambda: None)
    path.store_later("asha", "chat", chat(user()), "answer")
    assert path.failures == 1
