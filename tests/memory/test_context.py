"""The session-start context's "recent session" items say what each past session did (SPEC ME-6):
its task, outcome and score, the files read and edited, the commands run, its errors and its
conversation summary; never the current session. On SQLite and PostgreSQL (the `store` fixture),
and over REST."""

from __future__ import annotations

import httpx
import pytest

from nerve.memory import Memory, build_context
from nerve.memory.summaries import add_turn, summarize_session
from tests.conftest import make_config


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 1.0  # every record a second after the last: their order is their time
        return self.now


@pytest.fixture
async def memory(store):
    mem = Memory(store, clock=Clock())
    await mem.open()
    yield mem
    await mem.close()


LOGIN_FIX = [
    ("outcome_task", {"task": "fix KeyError in login"}),
    *[("eye_read", {"path": f"app/{name}.py"}) for name in ("login", "models", "db", "util")],
    ("eye_read", {"path": "app/login.py"}),  # read again: counted once
    ("body_bash", {"command": "pytest -q tests/test_login.py", "exit_code": 1}),
    ("nose_error", {"message": "KeyError: 'user' in app/login.py:42"}),
    ("tongue_edit", {"path": "app/login.py", "diff": "-user = d['user']\n+user = d.get('user')"}),
    ("tongue_write", {"path": "tests/test_login.py"}),
    ("body_bash", {"command": "pytest -q", "exit_code": 0}),
    ("outcome_done", {"score": 0.9, "summary": "guarded the session lookup"}),
]


async def record(memory: Memory, session: str, events: list[tuple[str, dict]]) -> None:
    for event_type, payload in events:
        await memory.record_event("u", session, event_type, payload)


async def test_a_recent_session_names_its_task_score_files_commands_and_errors(memory):
    """ME-6: not only the session's last event: what it was for, how it ended, what it touched."""
    await record(memory, "s1", LOGIN_FIX)
    await record(memory, "now", [("eye_read", {"path": "app/current_work.py"})])
    ctx = await build_context(memory, "u", session_id="now")
    [item] = [i for i in ctx.items if i.source == "recent_session"]
    block = ctx.prompt_block
    for words in ('task "fix KeyError in login"', "done, score 0.9", "guarded the session lookup",
                  "read 4 files: app/login.py, app/models.py, app/db.py +1",
                  "edited 2 files: app/login.py, tests/test_login.py",
                  "ran 2 commands: pytest -q tests/test_login.py (exit 1), pytest -q",
                  "hit 1 error: KeyError: 'user' in app/login.py:42"):  # fmt: skip
        assert words in block, words
    assert "current_work" not in block, "the current session is not a recent one"
    session = item.to_dict()["session"]
    assert session["id"] == "s1" and session["task"] == "fix KeyError in login"
    assert session["outcome"] == "done" and session["score"] == 0.9
    assert session["read"] == ["app/login.py", "app/models.py", "app/db.py", "app/util.py"]
    assert session["edited"] == ["app/login.py", "tests/test_login.py"]
    assert session["counts"] == {"read": 4, "edited": 2, "commands": 2, "tools": 0, "errors": 1}
    assert item.to_dict()["text"] in block


async def test_each_recent_session_is_one_item_newest_first_and_the_cap_holds(memory):
    """ME-6: two recent sessions at most, the latest active first; a task set and never done
    reads "unfinished"; `max_contexts` caps the whole context."""
    old = [("outcome_task", {"task": "upgrade pydantic"}),
           ("body_bash", {"command": "pip install -U pydantic"})]  # fmt: skip
    await record(memory, "old", old)
    await record(memory, "s1", LOGIN_FIX)
    await record(memory, "s2", [("outcome_task", {"task": "add pagination"}),
                                ("eye_read", {"path": "api/users.py"})])  # fmt: skip
    ctx = await build_context(memory, "u", session_id="s3")
    sessions = [i.session.session_id for i in ctx.items if i.session]
    assert sessions == ["s2", "s1"]
    assert [i.source for i in ctx.items][:3] == ["active_task", "recent_session", "recent_session"]
    assert 'task "add pagination"; unfinished; read 1 file: api/users.py' in ctx.prompt_block
    assert len({i.record.id for i in ctx.items}) == len(ctx.items)
    assert "pydantic" not in ctx.prompt_block
    capped = await build_context(memory, "u", session_id="s3", max_contexts=2)
    assert [i.source for i in capped.items] == ["active_task", "recent_session"]


async def test_past_sessions_are_found_behind_a_busy_current_session(memory):
    """ME-6: however many events the current session has, the past sessions are still found."""
    await record(memory, "s1", LOGIN_FIX)
    await record(memory, "now", [("eye_read", {"path": f"f{i}.py"}) for i in range(120)])
    ctx = await build_context(memory, "u", session_id="now")
    assert [i.session.session_id for i in ctx.items if i.session] == ["s1"]
    assert "fix KeyError in login" in ctx.prompt_block and "f7.py" not in ctx.prompt_block


async def test_a_summarised_conversation_joins_the_event_digest_of_its_session(memory):
    """ME-6 with ME-9: a session's conversation summary and its events make one item."""
    for i in range(25):
        await add_turn(memory, "u", "chat", "user", f"Let us talk about invoice number {i}. ok")
    assert await summarize_session(memory, "u", "chat") is not None
    await record(memory, "chat", [("body_tool", {"tool": "send_invoice"})])
    ctx = await build_context(memory, "u", session_id="next")
    [item] = [i for i in ctx.items if i.source == "recent_session"]
    assert "used 1 tool: send_invoice" in item.text()
    assert "conversation: " in item.text() and "invoice number 0" in item.text()
    assert item.to_dict()["session"]["summary"].startswith("user: Let us talk")


def test_the_context_route_returns_the_digest_as_text_and_fields(serve, upstream):
    """ME-6 over REST: /api/memory/context carries each recent session's digest."""
    server = serve(make_config({"primary": upstream}))
    url = f"{server.url}/api/memory"
    for event_type, payload in LOGIN_FIX:
        body = {"user_id": "d", "session_id": "s1", "type": event_type, "payload": payload}
        assert httpx.post(f"{url}/events", json=body, timeout=10).status_code == 200
    reply = httpx.post(f"{url}/context", json={"user_id": "d", "session_id": "s2"}, timeout=10)
    body = reply.json()
    [item] = [i for i in body["items"] if i["source"] == "recent_session"]
    assert item["session"]["task"] == "fix KeyError in login" and item["session"]["score"] == 0.9
    assert item["session"]["commands"] == ["pytest -q tests/test_login.py (exit 1)", "pytest -q"]
    assert "edited 2 files: app/login.py, tests/test_login.py" in body["prompt_block"]
    assert item["text"] in body["prompt_block"]
