"""The tool-call guard on non-streamed answers (SPEC TP-1): chat, messages and responses.

Answers are shaped by the fake upstreams' wire modules (the real APIs' shapes) and the rewritten
ones are read back with the real SDKs' models; verdicts come from the real SafetyEngine.
"""

from __future__ import annotations

import json

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from nerve.gateway.guard.core import withheld
from tests.fakes import anthropic_wire, openai_wire, responses_wire
from tests.fakes.upstream import Reply
from tests.guard.calls import DANGER, HARMLESS, JSON, call, guard


def body(fmt: str, *calls: JSON, text: str | None = None) -> bytes:
    reply = Reply(tool_calls=list(calls), chunks=[text] if text else None)
    if fmt == "chat":
        data = openai_wire.completion(reply, "up-model", "chatcmpl-1")
    elif fmt == "messages":
        data = anthropic_wire.message(reply, "claude-x", "msg_1")
    else:
        data = responses_wire.response(reply, "gpt-x", "r1")
        data.pop("usage")  # the fake's lacks a field this SDK requires; usage is optional
    return json.dumps(data, indent=1).encode()  # indented: a rewrite would show


@pytest.mark.parametrize("fmt", ["chat", "messages", "responses"])
async def test_an_answer_with_only_harmless_calls_is_returned_byte_for_byte(fmt: str) -> None:
    raw = body(fmt, call("Bash", HARMLESS), call("Read", {"file_path": "a.py"}, 1))
    out = await guard().judge_body(fmt, raw)  # type: ignore[arg-type]
    assert out.body is raw and out.blocked == () and out.flagged == ()


@pytest.mark.parametrize("fmt", ["chat", "messages", "responses"])
async def test_an_answer_without_tool_calls_is_not_even_parsed(fmt: str) -> None:
    raw = b'{"not": "json' + b'"tool"'  # no marker of a tool call: a parse would fail
    assert (await guard().judge_body(fmt, raw)).body is raw  # type: ignore[arg-type]


async def test_guard_off_reads_nothing() -> None:
    raw = body("chat", call("Bash", DANGER))
    out = await guard("off").judge_body("chat", raw)
    assert out.body is raw and out.blocked == () and out.flagged == ()


@pytest.mark.parametrize("fmt", ["chat", "messages", "responses"])
async def test_flag_mode_passes_every_call_and_reports_the_dangerous_ones(fmt: str) -> None:
    raw = body(fmt, call("Bash", DANGER), call("Bash", HARMLESS, 1))
    out = await guard("flag").judge_body(fmt, raw)  # type: ignore[arg-type]
    assert out.body is raw and out.blocked == ()
    assert [(j.tool, j.call_id, j.risk) for j in out.flagged] == [("Bash", "call_0", "critical")]


async def test_chat_a_blocked_call_becomes_text_and_the_finish_reason_stop() -> None:
    out = await guard().judge_body("chat", body("chat", call("Bash", DANGER)))
    completion = ChatCompletion.model_validate_json(out.body)
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content == (
        'nerve blocked the tool call Bash {"command": "rm -rf ~"}: '
        "rm deletes a home directory (~) recursively"
    )
    assert [j.reason for j in out.blocked] == ["rm deletes a home directory (~) recursively"]


async def test_chat_an_allowed_call_beside_a_blocked_one_passes_unchanged() -> None:
    raw = body("chat", call("Bash", HARMLESS), call("Bash", DANGER, 1),
               call("get_weather", {"city": "Paris"}, 2), text="Let me look.")  # fmt: skip
    out = await guard().judge_body("chat", raw)
    completion = ChatCompletion.model_validate_json(out.body)
    message = completion.choices[0].message
    original = json.loads(raw)["choices"][0]["message"]["tool_calls"]
    assert [c.model_dump(exclude_none=True) for c in message.tool_calls or []] == [
        original[0], original[2]
    ]  # fmt: skip
    assert completion.choices[0].finish_reason == "tool_calls"  # calls remain
    assert message.content is not None and message.content.startswith("Let me look.\n\nnerve bl")
    assert len(out.blocked) == 1 and out.blocked[0].call_id == "call_1"


async def test_chat_the_legacy_function_call_is_judged_too() -> None:
    data = json.loads(body("chat"))
    data["choices"][0]["message"]["function_call"] = {"name": "Bash", "arguments": '{"command'
                                                      '": "mkfs /dev/sda"}'}  # fmt: skip
    data["choices"][0]["finish_reason"] = "function_call"
    out = await guard().judge_body("chat", json.dumps(data).encode())
    choice = ChatCompletion.model_validate_json(out.body).choices[0]
    assert choice.message.function_call is None and choice.finish_reason == "stop"
    assert choice.message.content and "nerve blocked the tool call Bash" in choice.message.content


async def test_messages_a_blocked_tool_use_becomes_a_text_block_and_the_turn_ends() -> None:
    out = await guard().judge_body("messages", body("messages", call("Bash", DANGER)))
    message = Message.model_validate_json(out.body)
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text.startswith("nerve blocked the tool call Bash")  # type: ignore[union-attr]


async def test_messages_several_calls_one_blocked_keeps_the_others_in_place() -> None:
    raw = body("messages", call("Bash", HARMLESS), call("execute_sql", {"sql": "DROP TABLE t"},
               1), call("Bash", {"command": "pwd"}, 2), text="Working.")  # fmt: skip
    out = await guard().judge_body("messages", raw)
    message = Message.model_validate_json(out.body)
    assert [b.type for b in message.content] == ["text", "tool_use", "text", "tool_use"]
    assert message.stop_reason == "tool_use"
    assert "DROP TABLE destroys it" in message.content[2].text  # type: ignore[union-attr]
    assert json.loads(raw)["content"][1] == message.content[1].model_dump(exclude_none=True)


async def test_responses_a_blocked_call_becomes_a_message_item_in_its_place() -> None:
    raw = body("responses", call("Bash", HARMLESS), call("shell", {"command": ["bash", "-lc",
               "rm -rf /"]}, 1))  # fmt: skip
    out = await guard().judge_body("responses", raw)
    response = Response.model_validate_json(out.body)
    assert [i.type for i in response.output] == ["function_call", "message"]
    assert response.output_text.startswith('nerve blocked the tool call shell {"command": ["ba')
    assert response.output[0].model_dump(exclude_none=True) == json.loads(raw)["output"][0]


def custom_answer(*items: JSON) -> bytes:
    data = responses_wire.response(Reply(text="ok"), "gpt-x", "r1")
    data["output"] = list(items)
    data.pop("usage")
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("patch", "blocked"),
    [("*** Begin Patch\n*** Delete File: /etc/passwd\n*** End Patch", True),
     ('*** Begin Patch\n*** Add File: hi.txt\n+héllo "x"\n*** End Patch', False)],
)  # fmt: skip
async def test_responses_a_custom_apply_patch_is_judged_on_its_paths(
    patch: str, blocked: bool
) -> None:
    item = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
            "input": patch, "status": "completed"}  # fmt: skip
    raw = custom_answer(item)
    out = await guard().judge_body("responses", raw)
    if not blocked:
        assert out.body is raw
        return
    response = Response.model_validate_json(out.body)
    assert response.output[0].type == "message" and response.output[0].id == "msg_nerve_ctc_1"
    assert "/etc/passwd" in response.output_text and out.blocked[0].kind == "path"


async def test_responses_a_local_shell_call_is_judged_on_its_argv() -> None:
    action = {"type": "exec", "command": ["bash", "-lc", "rm -rf ~"], "env": {}}
    item = {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_l",
            "status": "completed", "action": action}  # fmt: skip
    out = await guard().judge_body("responses", custom_answer(item))
    assert [j.tool for j in out.blocked] == ["local_shell"]
    assert Response.model_validate_json(out.body).output[0].type == "message"


async def test_malformed_arguments_do_not_crash_and_are_judged_on_what_can_be_read() -> None:
    raw = body("chat", call("Bash", '{"command": "rm -rf ~"'), call("Bash", "{{{", 1))
    out = await guard().judge_body("chat", raw)
    completion = ChatCompletion.model_validate_json(out.body)
    assert [c.id for c in completion.choices[0].message.tool_calls or []] == ["call_1"]
    assert len(out.blocked) == 1 and out.error is None


async def test_an_answer_that_is_not_json_passes_as_it_came() -> None:
    raw = b'<html>"tool_calls"</html>'
    assert (await guard().judge_body("chat", raw)).body is raw


async def test_user_rules_decide_before_the_defaults() -> None:
    raw = body("messages", call("Bash", DANGER))
    out = await guard(tools={"Bash": "off"}).judge_body("messages", raw)
    assert out.body is raw and out.blocked == ()


async def test_a_configured_workspace_blocks_deletes_outside_it_and_allows_inside() -> None:
    """TP-1 with SF-1's workspace: `guard.workspace` is what the agents may change."""
    g = guard(workspace=["/srv/app"])
    inside = body("chat", call("shell", {"command": "rm -rf /srv/app/build"}))
    assert (await g.judge_body("chat", inside)).body is inside
    outside = body("chat", call("shell", {"command": "rm -rf /srv/data"}))
    out = await g.judge_body("chat", outside)
    assert [j.verdict.category for j in out.blocked] == ["workspace"]


async def test_sql_mode_read_only_blocks_a_write_the_default_mode_lets_through() -> None:
    write = body("chat", call("run_sql", {"sql": "INSERT INTO notes VALUES (1, 'x')"}))
    rules = {"run_sql": {"kind": "sql", "argument": "sql"}}
    assert (await guard(tools=rules).judge_body("chat", write)).body is write
    out = await guard(tools=rules, sql_mode="read_only").judge_body("chat", write)
    assert [j.verdict.category for j in out.blocked] == ["read_only"]


def test_a_relative_workspace_directory_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="absolute"):
        guard(workspace=["srv/app"])


def test_the_answer_sent_when_the_guard_fails_is_valid_in_every_format() -> None:
    text = "nerve's tool-call guard failed (KeyError); the tool calls were withheld."
    chat = ChatCompletion.model_validate(withheld("chat", {"id": "x", "model": "m"}, text))
    assert chat.choices[0].message.content == text and chat.choices[0].finish_reason == "stop"
    message = Message.model_validate(withheld("messages", {"id": 3}, text))
    assert message.content[0].text == text and message.stop_reason == "end_turn"  # type: ignore[union-attr]
    assert Response.model_validate(withheld("responses", {}, text)).output_text == text
