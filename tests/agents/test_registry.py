"""The registry's store on SQLite and PostgreSQL (SPEC PR-4): register, update, list, find by
capability, delete, and nothing lost across close and open."""

from __future__ import annotations

import pytest

from nerve.errors import RequestError

EP = "http://127.0.0.1:9/agent"


async def test_a_registered_agent_is_listed_and_found_by_capability(registry):
    stored = await registry.register("mailer", EP, ["send_message", "schedule"])
    assert stored["agent_name"] == "mailer" and stored["endpoint"] == EP
    assert stored["capabilities"] == ["send_message", "schedule"]
    assert stored["created_at"] == stored["updated_at"]
    await registry.register("coder", "http://localhost:8000/", ["write_code"])
    assert [a["agent_name"] for a in await registry.list()] == ["coder", "mailer"]
    assert [a["agent_name"] for a in await registry.list("send_message")] == ["mailer"]
    assert await registry.list("fly") == []
    assert await registry.get("mailer") == stored
    assert await registry.get("nobody") is None


async def test_registering_again_updates_the_agent_and_keeps_its_creation_time(registry):
    first, created = await registry.upsert("mailer", EP, ["send_message"])
    assert created
    second, created = await registry.upsert("mailer", "http://[::1]:8080/v2", ["schedule"])
    assert not created
    assert second["created_at"] == first["created_at"]
    assert second["updated_at"] >= first["updated_at"]
    assert await registry.list() == [second]
    assert second["endpoint"] == "http://[::1]:8080/v2" and second["capabilities"] == ["schedule"]
    assert await registry.list("send_message") == []


async def test_delete_says_whether_the_agent_existed(registry):
    await registry.register("mailer", EP, [])
    assert await registry.delete("mailer") is True
    assert await registry.delete("mailer") is False
    assert await registry.list() == []


async def test_agents_persist_across_close_and_open(registry, reopen):
    stored = await registry.register("mailer", EP, ["send_message", "send_message", "notify"])
    assert stored["capabilities"] == ["send_message", "notify"]  # duplicates dropped, in order
    await registry.close()
    again = reopen()
    await again.open()
    assert await again.list() == [stored]


@pytest.mark.parametrize(
    ("name", "endpoint", "capabilities", "param"),
    [
        ("", EP, [], "agent_name"),
        ("has space", EP, [], "agent_name"),
        ("a/b", EP, [], "agent_name"),
        ("x" * 101, EP, [], "agent_name"),
        (5, EP, [], "agent_name"),
        ("ok", "", [], "endpoint"),
        ("ok", "not a url", [], "endpoint"),
        ("ok", "ftp://127.0.0.1/x", [], "endpoint"),
        ("ok", "file:///etc/passwd", [], "endpoint"),
        ("ok", "http://127.0.0.1:99999/", [], "endpoint"),
        ("ok", EP, "send_message", "capabilities"),
        ("ok", EP, [""], "capabilities"),
        ("ok", EP, [" padded"], "capabilities"),
        ("ok", EP, [3], "capabilities"),
        ("ok", EP, [f"c{i}" for i in range(101)], "capabilities"),
    ],
)
async def test_bad_fields_are_request_errors_naming_the_field(
    registry, name, endpoint, capabilities, param
):
    with pytest.raises(RequestError) as caught:
        await registry.register(name, endpoint, capabilities)
    assert caught.value.param == param and f"'{param}'" in caught.value.message
    assert await registry.list() == []
