"""OpenAI Chat Completions <-> Anthropic Messages, as pure functions over JSON dicts (SPEC GW-2).

    to_anthropic_request     OpenAI request body  -> Anthropic request body
    from_anthropic_response  Anthropic message    -> OpenAI chat.completion
    StreamTranslator         Anthropic SSE events -> OpenAI chat.completion.chunk (anthropic_stream)

Tool call ids, names and arguments cross unchanged in both directions (GW-10). OpenAI fields with
no Anthropic counterpart (logprobs, penalties, seed, response_format...) are dropped; a request
that cannot be honoured (n > 1, a tool call whose arguments are not JSON) is a RequestError.
"""

from __future__ import annotations

import json
import time
from typing import Any

from nerve.errors import RequestError
from nerve.gateway.providers.anthropic_stream import (
    FINISH_REASONS,
    StreamTranslator,
    anthropic_error_message,
    dump_arguments,
    finish_reason,
    openai_usage,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FINISH_REASONS",
    "StreamTranslator",
    "anthropic_error_message",
    "from_anthropic_response",
    "openai_usage",
    "to_anthropic_request",
]

DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; OpenAI clients often leave it out

Block = dict[str, Any]


def to_anthropic_request(body: dict[str, Any], model: str) -> dict[str, Any]:
    """An OpenAI chat request body as an Anthropic Messages request body for `model`."""
    n = body.get("n")
    if n is not None and n != 1:
        raise RequestError("n must be 1: Anthropic models return one choice", param="n")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise RequestError("messages must be a list", param="messages")
    system, turns = _messages(messages)

    max_tokens = body.get("max_completion_tokens")
    if max_tokens is None:
        max_tokens = body.get("max_tokens")
    out: dict[str, Any] = {
        "model": model,
        "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        "messages": turns,
    }
    if system:
        plain = len(system) == 1 and system[0].keys() == {"type", "text"}
        out["system"] = system[0]["text"] if plain else system
    if (temperature := body.get("temperature")) is not None:
        # OpenAI's range is 0-2, Anthropic's 0-1: the top of one is the top of the other.
        is_number = isinstance(temperature, int | float)
        out["temperature"] = min(temperature, 1.0) if is_number else temperature
    if (top_p := body.get("top_p")) is not None and top_p != 1:
        # 1 is the neutral value, and some models refuse temperature and top_p together.
        out["top_p"] = top_p
    stop = body.get("stop")
    if isinstance(stop, str):
        out["stop_sequences"] = [stop]
    elif isinstance(stop, list) and stop:
        out["stop_sequences"] = stop
    if body.get("stream"):
        out["stream"] = True
    if isinstance(body.get("user"), str):
        out["metadata"] = {"user_id": body["user"]}

    tools = body.get("tools")
    if tools:
        if not isinstance(tools, list):
            raise RequestError("tools must be a list", param="tools")
        out["tools"] = [_tool(tool, f"tools[{k}]") for k, tool in enumerate(tools)]
        choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
        if choice is not None:
            out["tool_choice"] = choice
    return out


def from_anthropic_response(resp: dict[str, Any], model: str | None = None) -> dict[str, Any]:
    """An Anthropic message as an OpenAI `chat.completion`; thinking goes to `reasoning_content`."""
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in resp.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "thinking":
            thoughts.append(block.get("thinking") or "")
        elif kind == "tool_use":
            args = dump_arguments(block.get("input") or {})
            function = {"name": block.get("name"), "arguments": args}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None if calls and not texts else "".join(texts),
    }
    if thoughts:
        message["reasoning_content"] = "".join(thoughts)
    if calls:
        message["tool_calls"] = calls
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": finish_reason(resp.get("stop_reason")),
    }
    return {
        "id": resp.get("id"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model or resp.get("model"),
        "choices": [choice],
        "usage": openai_usage(resp.get("usage") or {}),
    }


def _messages(messages: list[Any]) -> tuple[list[Block], list[dict[str, Any]]]:
    """System blocks, and user/assistant turns with same-role neighbours merged."""
    system: list[Block] = []
    turns: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RequestError("each message must be an object", param=f"messages[{i}]")
        role = msg.get("role")
        content_param = f"messages[{i}].content"
        if role in ("system", "developer"):
            system.extend(_blocks(msg.get("content"), content_param))
            continue
        if role == "user":
            blocks = _blocks(msg.get("content"), content_param, images=True)
        elif role == "assistant":
            blocks = _blocks(msg.get("content"), content_param)
            blocks += _tool_uses(msg.get("tool_calls"), f"messages[{i}].tool_calls")
        elif role == "tool":
            role, blocks = "user", [_tool_result(msg, i)]
        else:
            raise RequestError(f"unsupported message role {role!r}", param=f"messages[{i}].role")
        if not blocks:
            continue  # Anthropic refuses empty content; an empty turn carries nothing
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)  # Anthropic needs strict alternation
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _blocks(content: Any, param: str, *, images: bool = False) -> list[Block]:
    """Message content (a string or a list of parts) as Anthropic content blocks."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestError("content must be a string or a list of parts", param=param)
    blocks: list[Block] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "refusal"):
            text = part.get(kind)
            if not isinstance(text, str):
                raise RequestError(f"a {kind} part needs a string {kind}", param=f"{param}[{j}]")
            if not text:
                continue
            block: Block = {"type": "text", "text": text}
        elif kind == "image_url" and images:
            block = _image(part.get("image_url"), f"{param}[{j}].image_url")
        else:
            raise RequestError(f"unsupported content part type {kind!r}", param=f"{param}[{j}]")
        if "cache_control" in part:  # prompt caching hints, as OpenRouter and LiteLLM accept
            block["cache_control"] = part["cache_control"]
        blocks.append(block)
    return blocks


def _image(image_url: Any, param: str) -> Block:
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    if isinstance(url, str) and url.startswith("data:"):
        header, comma, data = url[5:].partition(",")
        media_type, *flags = header.split(";")
        if comma and media_type and "base64" in flags:
            source = {"type": "base64", "media_type": media_type, "data": data}
            return {"type": "image", "source": source}
        raise RequestError("an image data URL must be data:<type>;base64,<data>", param=param)
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return {"type": "image", "source": {"type": "url", "url": url}}
    raise RequestError("image_url must be an http(s) URL or a base64 data URL", param=param)


def _tool_uses(calls: Any, param: str) -> list[Block]:
    if not calls:
        return []
    if not isinstance(calls, list):
        raise RequestError("tool_calls must be a list", param=param)
    blocks: list[Block] = []
    for j, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise RequestError("a tool call needs a function", param=f"{param}[{j}]")
        args = _arguments(function.get("arguments"), f"{param}[{j}].function.arguments")
        blocks.append(
            {"type": "tool_use", "id": call.get("id"), "name": function.get("name"), "input": args}
        )
    return blocks


def _arguments(raw: Any, param: str) -> Any:
    """Tool call arguments (a JSON string) as the object Anthropic wants in `input`."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}  # some clients send "" for a tool that takes no arguments
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise RequestError("tool call arguments must be a JSON string", param=param)
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise RequestError(f"tool call arguments are not valid JSON: {e}", param=param) from None
    if not isinstance(value, dict):
        raise RequestError("tool call arguments must be a JSON object", param=param)
    return value


def _tool_result(msg: dict[str, Any], i: int) -> Block:
    call_id = msg.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(
            "a tool message needs a tool_call_id", param=f"messages[{i}].tool_call_id"
        )
    block: Block = {"type": "tool_result", "tool_use_id": call_id}
    content = msg.get("content")
    if isinstance(content, str):
        if content:
            block["content"] = content
    elif content_blocks := _blocks(content, f"messages[{i}].content", images=True):
        block["content"] = content_blocks
    return block


def _tool(tool: Any, param: str) -> Block:
    if not isinstance(tool, dict) or tool.get("type", "function") != "function":
        raise RequestError("only function tools are supported", param=f"{param}.type")
    function = tool.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise RequestError("a function tool needs a name", param=f"{param}.function.name")
    spec: Block = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        spec["description"] = function["description"]
    return spec


def _tool_choice(choice: Any, parallel: Any) -> Block | None:
    if choice is None or choice == "auto":
        out: Block | None = {"type": "auto"} if choice or parallel is False else None
    elif choice == "none":
        return {"type": "none"}  # takes no other field
    elif choice == "required":
        out = {"type": "any"}
    elif (
        isinstance(choice, dict)
        and choice.get("type") == "function"
        and isinstance(function := choice.get("function"), dict)
        and isinstance(function.get("name"), str)
    ):
        out = {"type": "tool", "name": function["name"]}
    else:
        raise RequestError(
            'tool_choice must be "auto", "none", "required" or a named function',
            param="tool_choice",
        )
    if out is not None and parallel is False:
        out["disable_parallel_tool_use"] = True
    return out
