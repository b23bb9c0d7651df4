"""process(text, user_id) through the Python API (SPEC PR-1)."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from nerve.config import parse_config
from nerve.gateway.app import GatewayState
from nerve.intent import IntentClassifier
from nerve.pipeline import Pipeline, build_pipeline, intent_tool
from nerve.safety import SafetyEngine
from nerve.tools import ToolRegistry
from tests.conftest import make_config
from tests.fakes.upstream import Reply


def pipeline(handlers=None, *, strict=False, memory=None):
    return Pipeline(
        intents=IntentClassifier(),
        safety=SafetyEngine(strict=strict),
        tools=handlers,
        memory=memory,
    )


async def test_an_english_request_is_understood_and_judged():
    result = await pipeline().process("convert this csv file to json", "u1")
    assert result.language.languages == ["en"]
    assert result.intent.intent == "convert_format"
    assert result.intent.parameters["input_format"] == "csv"
    assert result.intent.parameters["output_format"] == "json"
    assert result.safety.allowed
    assert result.execution["status"] == "no_handler"


async def test_a_code_switched_request_is_normalized_before_intent():
    result = await pipeline().process("is report ko pdf mein convert karo", "u1")
    assert "hi" in result.language.languages and result.language.is_code_switched
    assert result.intent.intent == "convert_format"
    assert result.intent.parameters["output_format"] == "pdf"


async def test_a_registered_handler_runs_with_what_was_understood():
    seen = []

    async def convert(request):
        seen.append(request)
        return {"converted": True}

    handlers = ToolRegistry()
    handlers.register(intent_tool("convert_format", convert))
    result = await pipeline(handlers).process("convert data.csv to json", "asha")
    assert result.execution == {
        "status": "ok",
        "executed": True,
        "attempts": 1,
        "result": {"converted": True},
    }
    assert seen[0].user_id == "asha" and seen[0].intent.intent == "convert_format"


async def test_a_blocked_request_is_never_executed():
    called = []

    async def delete(request):
        called.append(request)
        return {}

    handlers = ToolRegistry()
    handlers.register(intent_tool("delete_data", delete))
    result = await pipeline(handlers).process("delete all records from the users table", "u")
    assert result.intent.intent == "delete_data"
    assert not result.safety.allowed and result.safety.blocked_by in ("risk", "rule")
    assert result.execution["status"] == "blocked"
    assert called == []


async def test_strict_mode_blocks_medium_risk_intents():
    result = await pipeline(strict=True).process("send the report to Priya", "u")
    assert result.intent.intent == "send_message"
    assert not result.safety.allowed and result.safety.risk_level == "medium"
    assert (await pipeline().process("send the report to Priya", "u")).safety.allowed


async def test_a_failing_handler_is_retried_then_reported():
    attempts = []

    async def flaky(request):
        attempts.append(1)
        if len(attempts) < 3:
            raise RuntimeError("transient")
        return {"ok": True}

    handlers = ToolRegistry()
    handlers.register(intent_tool("summarize", flaky, retries=2))
    result = await pipeline(handlers).process("summarize this article for me", "u")
    assert result.execution["status"] == "ok" and result.execution["attempts"] == 3

    async def broken(request):
        raise RuntimeError("disk on fire")

    handlers.register(intent_tool("summarize", broken, retries=1))
    result = await pipeline(handlers).process("summarize this article for me", "u")
    assert result.execution == {
        "status": "failed",
        "executed": False,
        "attempts": 2,
        "error": "intent_summarize failed: RuntimeError: disk on fire",
    }


async def test_a_handler_that_hangs_times_out():
    never = asyncio.Event()

    async def hang(request):
        await never.wait()

    handlers = ToolRegistry()
    handlers.register(intent_tool("explain", hang, retries=0, timeout_seconds=0.05))
    result = await pipeline(handlers).process("explain how DNS works", "u")
    assert result.execution["status"] == "failed" and "timed out" in result.execution["error"]


async def test_the_memory_hook_sees_every_request_and_cannot_break_it():
    seen = []

    async def remember(understood, verdict, execution):
        seen.append((understood.text, verdict.allowed))
        raise RuntimeError("memory down")

    result = await pipeline(memory=remember).process("explain recursion", "u")
    assert seen == [("explain recursion", True)]
    assert result.intent.intent == "explain"


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01", "\ud800 lone surrogate", "a" * 99_000])
async def test_bad_text_gives_a_well_formed_unknown_result(text):
    result = (await pipeline().process(text, "u")).to_dict()
    assert set(result) == {"language", "intent", "safety", "execution"}
    assert result["intent"]["intent"] in ("unknown", "explain", "query_data", "summarize")


async def test_llm_intent_and_answers_go_through_the_gateway(upstream):
    """IN-1 wired: the intent LLM and the answering handler use the gateway's Python API."""
    config = make_config({"primary": upstream}, intent={"llm_route": "default"})
    state = GatewayState(config)
    await state.open()
    try:
        p = build_pipeline(config, state.gateway.ask)
        llm_answer = {"intent": "explain", "parameters": {"target": "dns"}, "confidence": 0.9}
        upstream.script(Reply(text=orjson.dumps(llm_answer).decode()), Reply(text="DNS maps names"))
        result = await p.process("what is dns, in short", "u")
        assert result.intent.intent == "explain" and result.intent.source == "llm"
        assert upstream.requests[0].body.get("response_format")
        assert result.execution["result"] == {"answer": "DNS maps names"}
        upstream.script(Reply(status=500), Reply(status=500))
        result = await p.process("convert a.csv to json", "u", execute=False)
        assert result.intent.source == "rules" and result.intent.intent == "convert_format"
    finally:
        await state.close()


async def test_without_a_provider_key_answers_fail_clearly():
    config = parse_config({}, environ={})
    state = GatewayState(config)
    await state.open()
    try:
        result = await build_pipeline(config, state.gateway.ask).process("explain tcp", "u")
        assert result.execution["status"] == "failed"
        assert "no API key" in result.execution["error"]
    finally:
        await state.close()


async def test_the_llm_judge_is_asked_through_the_gateway_after_layers_1_and_2(upstream):
    """SF-3 wired: safety.llm_judge names a route; its {safe, reason} can block."""
    config = make_config(
        {"primary": upstream}, safety={"llm_judge": "default"}, pipeline={"answer_model": None}
    )
    state = GatewayState(config)
    await state.open()
    try:
        p = build_pipeline(config, state.gateway.ask)
        upstream.script(Reply(text='{"safe": false, "reason": "exfiltrates customer data"}'))
        result = await p.process("explain how to copy the customer table to my laptop", "u")
        assert not result.safety.allowed and result.safety.blocked_by == "llm"
        assert "exfiltrates" in result.safety.reason
        assert upstream.requests[-1].body["response_format"] == {"type": "json_object"}
        upstream.script(Reply(status=503))
        result = await p.process("explain how DNS works", "u")
        assert result.safety.allowed and "unavailable" in result.safety.reason
    finally:
        await state.close()


async def test_handle_registers_a_handler_as_a_hidden_tool_of_the_pipelines_registry():
    async def explain(request):
        return {"explained": request.intent.parameters.get("target")}

    p = pipeline()
    p.handle("explain", explain, retries=0, timeout_seconds=5)
    assert "intent_explain" in p.tools and p.tools.names() == []
    result = await p.process("explain how DNS works", "u")
    assert result.execution == {
        "status": "ok",
        "executed": True,
        "attempts": 1,
        "result": {"explained": "how DNS works"},
    }
