"""AS-5: a server that dies mid-session is restarted and calls work again ("MCP sessions that
die until restart"); `is_error` reaches the model as an error; the list hot-reloads."""

from __future__ import annotations

from pathlib import Path

from nerve.mcp.client import McpClients, qualified_name
from tests.mcp_client.conftest import Open, crashing

WAIT = 30


async def test_tools_are_listed_by_qualified_name_and_called(open_clients: Open) -> None:
    clients = await open_clients([crashing()])
    assert clients.tool_names() == {
        "crashy": [
            "crashy__echo",
            "crashy__pid",
            "crashy__fail",
            "crashy__drop_all_tables",
            "crashy__crash",
        ]
    }
    assert clients.resolve("crashy__echo") == ("crashy", "echo")
    assert clients.resolve("crashy__nope") is None
    result = await clients.call("crashy", "echo", {"text": "vanakkam"})
    assert result.ok and result.content == {"result": "vanakkam"}
    assert "crashy__echo" in clients.hints() and "use_tools" in clients.hints()


async def test_an_is_error_result_is_a_failed_tool_result_with_the_servers_message(
    open_clients: Open,
) -> None:
    clients = await open_clients([crashing()])
    result = await clients.call("crashy", "fail", {"message": "the disk is full"})
    assert not result.ok
    assert result.error is not None and "the disk is full" in result.error
    assert "the disk is full" in result.for_model()


async def test_a_server_that_crashes_mid_call_is_restarted_and_answers_again(
    open_clients: Open, tmp_path: Path
) -> None:
    marker = tmp_path / "starts.txt"
    clients = await open_clients([crashing(marker=marker)])
    first = await clients.call("crashy", "pid", {})
    assert first.ok

    crashed = await clients.call("crashy", "crash", {})
    assert not crashed.ok and crashed.error is not None
    assert "reconnecting" in crashed.error

    assert await clients.ready("crashy", wait=WAIT), clients.status()
    again = await clients.call("crashy", "pid", {})
    assert again.ok and again.content != first.content  # a new process answered
    assert clients.status()["crashy"]["restarts"] == 1
    assert len(marker.read_text().split()) == 2  # spawned twice, no more


async def test_a_call_during_the_outage_says_the_server_is_reconnecting(tmp_path: Path) -> None:
    """With a long backoff the outage lasts: calls fail fast with a clear message."""
    with (tmp_path / "err.log").open("w") as errlog:
        clients = McpClients([crashing()], cwd=tmp_path, errlog=errlog, backoff=lambda n: 3600.0)
        await clients.start(wait=WAIT)
        try:
            await clients.call("crashy", "crash", {})
            during = await clients.call("crashy", "echo", {"text": "hello?"})
            assert not during.ok and during.error is not None
            assert "is reconnecting" in during.error
            assert clients.status()["crashy"]["connected"] is False
        finally:
            await clients.stop()  # does not wait out the backoff


async def test_unknown_server_and_unknown_tool_are_errors(open_clients: Open) -> None:
    clients = await open_clients([crashing()])
    assert "unknown MCP server" in str((await clients.call("nope", "echo", {})).error)
    assert "has no tool 'nope'" in str((await clients.call("crashy", "nope", {})).error)


async def test_hot_reload_adds_removes_and_restarts_changed_servers(open_clients: Open) -> None:
    clients = await open_clients([crashing("one")])
    pid_one = (await clients.call("one", "pid", {})).content

    await clients.reload([crashing("one"), crashing("two")])  # add two; one unchanged
    assert set(clients.tool_names()) == {"one", "two"}
    assert (await clients.call("two", "echo", {"text": "hi"})).ok
    assert (await clients.call("one", "pid", {})).content == pid_one  # not restarted

    changed = crashing("two").model_copy(update={"env": {"CHANGED": "1"}})
    await clients.reload([changed])  # remove one, restart two
    assert set(clients.status()) == {"two"}
    assert "unknown MCP server 'one'" in str((await clients.call("one", "pid", {})).error)
    assert (await clients.call("two", "echo", {"text": "still here"})).ok
    assert qualified_name("two", "a.b c") == "two__a_b_c"


async def test_disable_and_enable_at_runtime(open_clients: Open) -> None:
    clients = await open_clients([crashing()])
    await clients.set_enabled("crashy", False)
    assert clients.tool_names() == {}
    assert "is disabled" in str((await clients.call("crashy", "echo", {"text": "x"})).error)
    await clients.set_enabled("crashy", True)
    assert (await clients.call("crashy", "echo", {"text": "x"})).ok


async def test_a_server_that_cannot_start_reports_why(open_clients: Open) -> None:
    from nerve.config_sections import McpServerConfig

    broken = McpServerConfig(name="broken", command="/nonexistent/mcp-server")
    clients = await open_clients([broken])
    status = clients.status()["broken"]
    assert status["connected"] is False and status["last_error"]
    assert "reconnecting" in str((await clients.call("broken", "x", {})).error)
