"""AS-4: memo and task are per user and persisted only through Memory (real SQLite + WAL)."""

from __future__ import annotations

from nerve.memory import build_memory
from nerve.tools import Services, ToolContext
from nerve.tools.builtin.task import open_tasks


async def test_memos_round_trip_add_list_delete(registry, context) -> None:
    added = await registry.execute(
        "memo", {"action": "add", "content": "door code 4711"}, context()
    )
    assert added.ok, added
    memo_id = added.content["added"]["id"]
    listed = await registry.execute("memo", {"action": "list"}, context())
    assert listed.content == {"memos": [{"id": memo_id, "content": "door code 4711"}]}
    gone = await registry.execute("memo", {"action": "delete", "id": memo_id[:8]}, context())
    assert gone.ok and gone.content["deleted"]["id"] == memo_id
    assert (await registry.execute("memo", {"action": "list"}, context())).content == {"memos": []}


async def test_memos_are_per_user_and_one_user_cannot_delete_anothers(registry, context) -> None:
    mine = await registry.execute("memo", {"action": "add", "content": "alice's"}, context("alice"))
    theirs = await registry.execute("memo", {"action": "list"}, context("bob"))
    assert theirs.content == {"memos": []}
    memo_id = mine.content["added"]["id"]
    attempt = await registry.execute("memo", {"action": "delete", "id": memo_id}, context("bob"))
    assert not attempt.ok and "no memo with id" in (attempt.error or "")
    still = await registry.execute("memo", {"action": "list"}, context("alice"))
    assert [m["id"] for m in still.content["memos"]] == [memo_id]


async def test_missing_fields_for_an_action_are_errors_for_the_model(registry, context) -> None:
    assert (
        "'content' is required"
        in (await registry.execute("memo", {"action": "add"}, context())).error
    )  # type: ignore[operator]
    assert (
        "'title' is required"
        in (await registry.execute("task", {"action": "add", "title": "  "}, context())).error
    )  # type: ignore[operator]
    assert (
        "'id' is required" in (await registry.execute("task", {"action": "done"}, context())).error
    )  # type: ignore[operator]


async def test_tasks_are_marked_done_and_open_ones_feed_the_prompt(
    registry, context, memory
) -> None:
    ids = []
    for title in ("file taxes", "call mum"):
        added = await registry.execute("task", {"action": "add", "title": title}, context())
        ids.append(added.content["added"]["id"])
    done = await registry.execute("task", {"action": "done", "id": ids[0]}, context())
    assert done.ok and done.content["done"]["title"] == "file taxes"
    listed = await registry.execute("task", {"action": "list"}, context())
    assert [(t["title"], t["done"]) for t in listed.content["tasks"]] == [
        ("call mum", False), ("file taxes", True),
    ]  # fmt: skip
    assert [t["title"] for t in await open_tasks(memory, "alice")] == ["call mum"]
    assert await open_tasks(memory, "bob") == []
    again = await registry.execute("task", {"action": "done", "id": done.content["done"]["id"]},
                                   context())  # fmt: skip
    assert again.ok and "already_done" in again.content


async def test_notes_survive_a_restart_because_they_live_in_the_store(registry, config) -> None:
    first = build_memory(config, environ={})
    await first.open()
    ctx = ToolContext(user_id="alice", services=Services(memory=first, config=config))
    await registry.execute("task", {"action": "add", "title": "water plants"}, ctx)
    await registry.execute("memo", {"action": "add", "content": "wifi: hunter2"}, ctx)
    await first.close()
    reopened = build_memory(config, environ={})
    await reopened.open()
    try:
        assert [t["title"] for t in await open_tasks(reopened, "alice")] == ["water plants"]
        ctx = ToolContext(user_id="alice", services=Services(memory=reopened, config=config))
        listed = await registry.execute("memo", {"action": "list"}, ctx)
        assert [m["content"] for m in listed.content["memos"]] == ["wifi: hunter2"]
    finally:
        await reopened.close()


async def test_without_memory_the_tools_say_so(registry, config) -> None:
    ctx = ToolContext(user_id="alice", services=Services(memory=None, config=config))
    result = await registry.execute("memo", {"action": "list"}, ctx)
    assert not result.ok and "memory is disabled" in (result.error or "")
