"""SPEC OB-1: what nerve does around a model call has spans in the same trace: the tool-call
guard's safety verdicts, memory recalled and stored on the traffic path, and MCP tool calls
(nerve's own server at /mcp, and its client calling it)."""

from __future__ import annotations

import json

import httpx
import openai

from nerve.config_sections import McpServerConfig
from nerve.mcp.client import McpClients
from tests.fakes.upstream import FakeUpstream, Reply
from tests.telemetry.collector import Collector
from tests.telemetry.conftest import Traced

CHAT = "POST /v1/chat/completions"


def bash(command: str, cid: str) -> dict:
    arguments = json.dumps({"command": command})
    return {"id": cid, "type": "function", "function": {"name": "Bash", "arguments": arguments}}


def test_the_guards_verdicts_are_spans_and_the_attempt_says_it_was_blocked(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    routes = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
               "guard": {"tool_calls": "block"}}]  # fmt: skip
    server = traced({"primary": upstream}, routes)
    upstream.script(Reply(tool_calls=[bash("rm -rf ~", "call_rm"), bash("ls -la", "call_ls")]))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="auto", messages=[{"role": "user", "content": "tidy up"}]
        )
    assert raw.headers["x-nerve-guard"] == "blocked"
    server.stop()

    http, call = otlp.one(CHAT), otlp.one("chat m1")
    verdicts = otlp.named("safety.check")
    assert {v.parent_id for v in verdicts} == {http.span_id}
    assert sorted(v.attributes["nerve.safety.allowed"] for v in verdicts) == [False, True]
    blocked = next(v for v in verdicts if not v.attributes["nerve.safety.allowed"])
    assert blocked.attributes["nerve.safety.kind"] == "shell"
    assert blocked.attributes["nerve.safety.blocked_by"] == "rule"
    assert blocked.attributes["nerve.safety.risk"] in ("high", "critical")
    assert "nerve.safety.content" not in blocked.attributes  # no capture_content
    assert http.attributes["nerve.guard"] == call.attributes["nerve.guard"] == "blocked"
    assert call.end_ns <= blocked.start_ns  # judged after the answer came back


def test_a_streams_guard_verdict_known_at_its_end_is_on_its_spans(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    routes = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
               "guard": {"tool_calls": "block"}}]  # fmt: skip
    server = traced({"primary": upstream}, routes)
    upstream.script(Reply(tool_calls=[bash("rm -rf ~", "call_rm")]))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as client:
        ask = [{"role": "user", "content": "tidy up"}]
        chunks = list(client.chat.completions.create(model="auto", messages=ask, stream=True))
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)  # withheld
    server.stop()

    http, call = otlp.one(CHAT), otlp.one("chat m1")
    assert http.attributes["nerve.guard"] == call.attributes["nerve.guard"] == "blocked"


def test_memory_recalled_and_stored_on_the_path_are_spans_of_the_request(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    routes = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
               "memory": {"recall": True, "store": True}}]  # fmt: skip
    server = traced({"primary": upstream}, routes)
    stored = httpx.post(f"{server.url}/api/memory/store", json={
        "user_id": "asha", "intent": "preference", "tier": "semantic",
        "data": {"text": "asha is vegetarian and loves paneer"}, "importance": 0.8})  # fmt: skip
    assert stored.status_code == 200, stored.text
    upstream.script(Reply(text="Try the paneer tikka."))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="auto", user="asha",
            messages=[{"role": "user", "content": "what vegetarian paneer dish should I cook?"}],
        )  # fmt: skip
    recalled = int(raw.headers["x-nerve-memory"])
    assert recalled >= 1
    server.stop()  # waits for the path's stores, then flushes

    http, call = otlp.one(CHAT), otlp.one("chat m1")
    assert call.attributes["nerve.memory.recalled"] == recalled
    assert http.attributes["nerve.memory.recalled"] == recalled
    in_request = [s for s in otlp.spans if s.trace_id == http.trace_id]
    recalls = [s for s in in_request if s.name == "memory.recall"]
    stores = [s for s in in_request if s.name == "memory.store"]
    assert recalls and {s.parent_id for s in recalls} == {http.span_id}
    assert max(s.attributes["nerve.memory.recalled"] for s in recalls) >= recalled
    assert all(s.end_ns <= call.start_ns for s in recalls)  # recalled before the call
    # The exchange is kept afterwards, as turns, in the background: still the request's trace.
    assert len(stores) == 2 and all(s.attributes["nerve.memory.kind"] == "turn" for s in stores)
    assert all(s.attributes["nerve.memory.stored"] is True for s in stores)
    assert "nerve.memory.query" not in recalls[0].attributes  # no capture_content
    # The REST store is a trace of its own, under its server span.
    rest = [s for s in otlp.named("memory.store") if s.trace_id != http.trace_id]
    (store_http,) = otlp.named("POST /api/memory/store")
    assert len(rest) == 1 and rest[0].parent_id == store_http.span_id
    assert store_http.attributes["http.response.status_code"] == 200


def test_rest_and_mcp_requests_are_server_spans_named_by_their_route(
    traced: Traced, otlp: Collector, upstream: FakeUpstream, client_traceparent
) -> None:
    header, trace_id, client_span = client_traceparent
    server = traced({"primary": upstream})
    checked = httpx.post(f"{server.url}/api/safety/check", headers={"traceparent": header},
                         json={"kind": "shell", "content": "rm -rf /"})  # fmt: skip
    gone = httpx.delete(f"{server.url}/api/agents/no-such-agent")
    assert checked.json()["allowed"] is False and gone.status_code == 404
    assert httpx.get(f"{server.url}/health").status_code == 200
    server.stop()

    (check,) = otlp.named("POST /api/safety/check")
    assert (check.trace_id, check.parent_id) == (trace_id, client_span)  # the client's trace
    (verdict,) = otlp.named("safety.check")
    assert verdict.parent_id == check.span_id
    # A path with an id is named by its template, not once per id; probes are not traced.
    (delete,) = otlp.named("DELETE /api/agents/{agent_name}")
    assert delete.attributes["http.route"] == "/api/agents/{agent_name}"
    assert delete.attributes["http.response.status_code"] == 404
    assert not [s for s in otlp.spans if "health" in s.name]


async def test_mcp_tool_calls_are_execute_tool_spans_on_both_sides(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    server = traced({"primary": upstream})
    clients = McpClients([McpServerConfig(name="web", url=f"{server.url}/mcp")])
    await clients.start(wait=30)
    try:
        verdict = await clients.call(
            "web", "check_safety", {"kind": "sql", "content": "DROP TABLE x"}
        )
        missing = await clients.call("web", "check_safety", {"kind": "sql"})
    finally:
        await clients.stop()
    assert verdict.ok and verdict.content["allowed"] is False and not missing.ok
    server.stop()

    calls = otlp.named("execute_tool check_safety")
    # Each call twice: the client's span (nerve.mcp.server) and the server's.
    client_side = [s for s in calls if "nerve.mcp.server" in s.attributes]
    server_side = [s for s in calls if "nerve.mcp.server" not in s.attributes]
    assert len(client_side) == len(server_side) == 2
    for span in calls:
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == "check_safety"
        assert "gen_ai.tool.call.arguments" not in span.attributes  # no capture_content
    assert sorted(s.error for s in client_side) == [False, True]
    assert sorted(s.error for s in server_side) == [False, True]
    # Each MCP request is a server span; the SDK runs a tool in its session's task, not the
    # request's, so the tool's span starts a trace of its own.
    assert otlp.named("POST /mcp")
    ok = next(s for s in server_side if not s.error)
    (judged,) = [s for s in otlp.named("safety.check") if s.parent_id == ok.span_id]
    assert judged.attributes["nerve.safety.kind"] == "sql"
    assert judged.attributes["nerve.safety.allowed"] is False
