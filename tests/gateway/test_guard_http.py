"""The tool-call guard on the traffic path (SPEC TP-1), through the real OpenAI and Anthropic SDKs:
the tool calls a model returns are judged by nerve's safety engine on every endpoint, streaming
and not, passed through and translated. A blocked call never reaches the client, a harmless one
does, an answer with nothing blocked is byte-for-byte what the guard-less route sends."""

from __future__ import annotations

import json
import re

import anthropic
import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

ROUTES = [
    {"name": "default", "model": {"provider": "chat", "model": "m1"},
     "guard": {"tool_calls": "block"}},
    {"name": "claude", "model": {"provider": "anthropic", "model": "claude-up"},
     "guard": {"tool_calls": "block"}},
    {"name": "native", "model": {"provider": "native", "model": "gpt-5"},
     "guard": {"tool_calls": "block"}},
    {"name": "watch", "model": {"provider": "chat", "model": "m1"}},  # the default: flag
    {"name": "open", "model": {"provider": "chat", "model": "m1"},
     "guard": {"tool_calls": "off"}},
]  # fmt: skip
KEYS = [{"name": "ops", "key": "k-ops"},
        {"name": "trusted", "key": "k-trusted", "guard": {"tool_calls": "off"}}]  # fmt: skip


def call(name: str, arguments: dict, cid: str = "call_1") -> dict:
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip


RM = call("Bash", {"command": "rm -rf ~"}, "call_rm")
LS = call("Bash", {"command": "ls -la"}, "call_ls")


@pytest.fixture
def server(serve, upstream, upstream2):
    config = make_config({"chat": upstream, "anthropic": upstream2, "native": upstream},
                         routes=ROUTES, server={"api_keys": KEYS})  # fmt: skip
    providers = [p.model_copy(update={"responses": p.name == "native"}) for p in config.providers]
    return serve(config.model_copy(update={"providers": providers}))


@pytest.fixture
def oai(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k-ops", max_retries=0) as c:
        yield c


@pytest.fixture
def claude(server):
    with anthropic.Anthropic(base_url=server.url, api_key="k-ops", max_retries=0) as c:
        yield c


def traffic(server) -> dict:
    stats = httpx.get(f"{server.url}/stats", headers={"authorization": "Bearer k-ops"}).json()
    return stats["traffic"].get("guard", {})


CHAT = [{"role": "user", "content": "clean up my home directory"}]
BASH = {"type": "function", "function": {"name": "Bash", "parameters": {"type": "object"}}}


# --- /v1/chat/completions ----------------------------------------------------------------------


def test_a_blocked_chat_call_is_replaced_and_a_harmless_one_passes(server, oai, upstream):
    upstream.script(Reply(tool_calls=[RM, LS]))
    raw = oai.chat.completions.with_raw_response.create(model="default", messages=CHAT,
                                                        tools=[BASH])  # fmt: skip
    message = raw.parse().choices[0].message
    assert [c.id for c in message.tool_calls] == ["call_ls"]
    assert "nerve blocked the tool call Bash" in message.content and "rm -rf" in message.content
    assert raw.headers["x-nerve-guard"] == "blocked"
    assert traffic(server) == {"blocked": 1}


def test_a_chat_answer_whose_only_call_is_blocked_stops(oai, upstream):
    upstream.script(Reply(tool_calls=[RM]))
    choice = oai.chat.completions.create(model="default", messages=CHAT, tools=[BASH]).choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls


def test_a_streamed_chat_call_is_held_judged_and_replaced(server, oai, upstream):
    upstream.script(Reply(tool_calls=[LS, RM]))
    stream = oai.chat.completions.create(model="default", messages=CHAT, tools=[BASH],
                                         stream=True)  # fmt: skip
    calls: dict[int, dict] = {}
    text, finish = "", None
    for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is None:
            continue
        text += delta.content or ""
        for c in delta.tool_calls or []:
            got = calls.setdefault(c.index, {"id": None, "args": ""})
            got["id"] = c.id or got["id"]
            got["args"] += c.function.arguments or "" if c.function else ""
        finish = chunk.choices[0].finish_reason or finish
    assert [c["id"] for c in calls.values()] == ["call_ls"]
    assert json.loads(calls[0]["args"]) == {"command": "ls -la"}
    assert "nerve blocked the tool call Bash" in text
    assert finish == "tool_calls"  # the allowed call still asks the client to run it
    assert traffic(server) == {"blocked": 1}


def test_nothing_blocked_is_byte_for_byte_the_unguarded_answer(server, upstream):
    url, auth = f"{server.url}/v1/chat/completions", {"authorization": "Bearer k-ops"}
    for stream in (False, True):
        bodies = []
        for route in ("default", "open"):
            upstream.script(Reply(tool_calls=[LS]))
            body = {"model": route, "messages": CHAT, "stream": stream}
            answer = httpx.post(url, json=body, headers=auth).content
            bodies.append(re.sub(rb'fake\d+|"created": ?\d+', b"", answer))  # the fake's own
        assert bodies[0] == bodies[1] and b"call_ls" in bodies[0]


def test_flag_lets_the_call_through_and_says_so(server, oai, upstream, caplog):
    upstream.script(Reply(tool_calls=[RM]), Reply(tool_calls=[RM]))
    raw = oai.chat.completions.with_raw_response.create(model="watch", messages=CHAT)
    assert raw.parse().choices[0].message.tool_calls[0].id == "call_rm"
    assert raw.headers["x-nerve-guard"] == "flagged"
    body = {"model": "watch", "messages": CHAT, "stream": True}
    text = httpx.post(f"{server.url}/v1/chat/completions", json=body,
                      headers={"authorization": "Bearer k-ops"}).text  # fmt: skip
    assert "call_rm" in text and ": x-nerve-guard flagged Bash" in text
    assert text.index(": x-nerve-guard") < text.index("data: [DONE]")
    assert traffic(server) == {"flagged": 2}
    assert any("GUARD FLAGGED route=watch Bash" in r.getMessage() for r in caplog.records)


def test_a_key_with_its_own_guard_overrides_the_route(server, upstream):
    upstream.script(Reply(tool_calls=[RM]))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k-trusted", max_retries=0) as c:
        raw = c.chat.completions.with_raw_response.create(model="default", messages=CHAT)
    assert raw.parse().choices[0].message.tool_calls[0].id == "call_rm"
    assert "x-nerve-guard" not in raw.headers


# --- /v1/messages (Claude Code) ----------------------------------------------------------------

COMMAND = {"type": "object", "properties": {"command": {"type": "string"}}}
TOOL = {"name": "Bash", "input_schema": COMMAND}
ASK = {"max_tokens": 256, "tools": [TOOL],
       "messages": [{"role": "user", "content": "clean up my home directory"}]}  # fmt: skip


@pytest.mark.parametrize("route", ["claude", "default"])  # passthrough, translated
def test_messages_a_blocked_tool_use_becomes_text(server, claude, upstream, upstream2, route):
    (upstream2 if route == "claude" else upstream).script(Reply(tool_calls=[RM, LS]))
    raw = claude.messages.with_raw_response.create(model=route, **ASK)
    message = raw.parse()
    kinds = [(b.type, getattr(b, "id", None)) for b in message.content]
    assert kinds == [("text", None), ("tool_use", "call_ls")]
    assert "nerve blocked the tool call Bash" in message.content[0].text
    assert message.stop_reason == "tool_use" and raw.headers["x-nerve-guard"] == "blocked"


@pytest.mark.parametrize("route", ["claude", "default"])
def test_messages_stream_a_blocked_tool_use_never_arrives(server, claude, upstream, upstream2,
                                                          route):  # fmt: skip
    (upstream2 if route == "claude" else upstream).script(Reply(tool_calls=[RM]))
    with claude.messages.stream(model=route, **ASK) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["text"]
    assert "rm -rf" in message.content[0].text and "nerve blocked" in message.content[0].text
    assert message.stop_reason == "end_turn"
    assert traffic(server) == {"blocked": 1}


def test_messages_stream_a_harmless_tool_use_arrives_whole(claude, upstream2):
    upstream2.script(Reply(tool_calls=[LS]))
    with claude.messages.stream(model="claude", **ASK) as stream:
        message = stream.get_final_message()
    assert [(b.type, b.input) for b in message.content] == [("tool_use", {"command": "ls -la"})]
    assert message.stop_reason == "tool_use"


# --- /v1/responses (Codex) ---------------------------------------------------------------------

SHELL = {"type": "function", "name": "shell", "parameters": {"type": "object"}}
CODEX_RM = call("shell", {"command": ["bash", "-lc", "rm -rf /"]}, "call_rm")
EXEC_LS = call("exec_command", {"cmd": "ls"}, "call_ls")
SQL_DROP = call("execute_sql", {"sql": "DROP TABLE users"}, "call_sql")


@pytest.mark.parametrize("route", ["native", "default"])  # passthrough, translated
def test_responses_blocked_calls_become_a_message(server, oai, upstream, route):
    upstream.script(Reply(tool_calls=[CODEX_RM, EXEC_LS, SQL_DROP]))
    raw = oai.responses.with_raw_response.create(model=route, input="tidy up", tools=[SHELL],
                                                 store=False)  # fmt: skip
    response = raw.parse()
    calls = [i.call_id for i in response.output if i.type == "function_call"]
    assert calls == ["call_ls"]
    assert response.output_text.count("nerve blocked the tool call") == 2
    assert raw.headers["x-nerve-guard"] == "blocked"
    assert traffic(server) == {"blocked": 2}


@pytest.mark.parametrize("route", ["native", "default"])
def test_responses_stream_a_blocked_call_never_arrives(oai, upstream, route):
    upstream.script(Reply(tool_calls=[CODEX_RM]))
    seen = []
    with oai.responses.stream(model=route, input="tidy up", tools=[SHELL], store=False) as s:
        for event in s:
            seen.append(event.type)
        final = s.get_final_response()
    assert "response.function_call_arguments.delta" not in seen
    assert [i.type for i in final.output] == ["message"]
    assert "nerve blocked the tool call shell" in final.output_text


def test_a_stream_cut_after_a_blocked_call_fails_without_showing_it(oai, upstream):
    """The upstream dies after the call's last piece: `response.failed` repeats the output so
    far, and the call in it is judged and replaced like any other."""
    upstream.script(Reply(tool_calls=[CODEX_RM], cut_after=3))
    kinds, failed, text = [], [], ""
    with oai.responses.create(model="default", input="tidy up", tools=[SHELL], store=False,
                              stream=True) as stream:  # fmt: skip
        for event in stream:
            kinds.append(event.type)
            text += event.delta if event.type == "response.output_text.delta" else ""
            if event.type == "response.failed":
                failed.append(event.response)
    assert "response.function_call_arguments.delta" not in kinds and len(failed) == 1
    assert not [item for item in failed[0].output if item.type == "function_call"]
    assert "nerve blocked the tool call shell" in text
