"""Anthropic Messages (what Claude Code sends) <-> OpenAI chat completions (what an
openai-protocol upstream speaks), as pure functions over JSON: the inbound side of /v1/messages.

    parse_messages_request   the body, checked (a RequestError naming the field)
    messages_to_chat         Messages request -> chat request
    chat_to_message          chat.completion  -> Messages message
    MessagesStream           chat chunks      -> Messages SSE events (messages_stream)
    error_body, error_type   a status         -> Anthropic's error JSON (messages_stream)

Tool ids, names and inputs cross unchanged. Thinking blocks are dropped on the way up (an OpenAI
upstream cannot take them, and their signatures bind them to the provider that made them), and
reasoning the upstream streams back is not turned into thinking (unsigned, it would be refused
when the client sends it back). What has no chat form at all (server tools, the MCP connector,
PDF documents, Files API sources) is a RequestError rather than a silent loss.
"""

from __future__ import annotations

from typing import Any

from nerve.errors import RequestError
from nerve.gateway.dialects.base import parse_object
from nerve.gateway.dialects.messages_stream import (
    PING,
    STOP_REASONS,
    MessagesStream,
    anthropic_usage,
    chat_to_message,
    error_body,
    error_type,
    stop_reason,
)
from nerve.gateway.providers.anthropic_stream import dump_arguments
from nerve.gateway.providers.anthropic_stream import openai_usage as message_usage
from nerve.gateway.request import check_model, optional

__all__ = [
    "PING",
    "STOP_REASONS",
    "MessagesStream",
    "anthropic_usage",
    "chat_to_message",
    "error_body",
    "error_type",
    "message_usage",
    "messages_to_chat",
    "parse_messages_request",
    "stop_reason",
]

_NUMBER = (int, float)
_DROPPED = ("thinking", "redacted_thinking")

Block = dict[str, Any]


def parse_messages_request(raw: bytes) -> dict[str, Any]:
    """The body of POST /v1/messages (and count_tokens), parsed and checked. Only what nerve
    reads is checked; other fields pass through. max_tokens may be absent (count_tokens)."""
    body = parse_object(raw, "Messages")
    check_model(body.get("model"))
    max_tokens = optional(body, "max_tokens", int, "a positive integer")
    if max_tokens is not None and max_tokens < 1:
        raise RequestError(
            f"'max_tokens' must be a positive integer, got {max_tokens}", param="max_tokens"
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' is required and must be a non-empty array", param="messages")
    for i, message in enumerate(messages):
        _check_message(message, f"messages[{i}]")
    system = body.get("system")
    if isinstance(system, list):
        _check_blocks(system, "system", text_only=True)
    elif system is not None and not isinstance(system, str):
        raise RequestError("'system' must be a string or an array of text blocks", param="system")
    optional(body, "stream", bool, "true or false")
    optional(body, "temperature", _NUMBER, "a number")
    optional(body, "top_p", _NUMBER, "a number")
    optional(body, "top_k", int, "an integer")
    stops = optional(body, "stop_sequences", list, "an array of strings")
    if stops is not None and not all(isinstance(stop, str) for stop in stops):
        raise RequestError("'stop_sequences' must be an array of strings", param="stop_sequences")
    tools = optional(body, "tools", list, "an array of tools")
    for k, tool in enumerate(tools or ()):
        if not isinstance(tool, dict):
            raise RequestError(f"'tools[{k}]' must be an object", param=f"tools[{k}]")
    choice = optional(body, "tool_choice", dict, "an object")
    if choice is not None:
        optional(choice, "type", str, "a string", "tool_choice.")
    metadata = optional(body, "metadata", dict, "an object")
    if metadata is not None:
        optional(metadata, "user_id", str, "a string", "metadata.")
    optional(body, "thinking", dict, "an object")
    return body


# Claude Code sends `system` turns inside `messages` too (its environment notes), beside the
# top-level `system`; the API takes them, so the gateway does.
ROLES = ("user", "assistant", "system")


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    role = message.get("role")
    if role not in ROLES:
        raise RequestError(
            f"'{where}.role' must be user, assistant or system", param=f"{where}.role"
        )
    content = message.get("content")
    if isinstance(content, list):
        _check_blocks(content, f"{where}.content", text_only=role == "system")
    elif not isinstance(content, str):
        raise RequestError(
            f"'{where}.content' must be a string or an array of content blocks",
            param=f"{where}.content",
        )


def _check_blocks(blocks: list[Any], param: str, *, text_only: bool = False) -> None:
    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            raise RequestError(
                f"'{param}[{j}]' must be a content block: an object with a string type",
                param=f"{param}[{j}]",
            )
        if text_only and (kind != "text" or not isinstance(block.get("text"), str)):
            raise RequestError(f"'{param}[{j}]' must be a text block", param=f"{param}[{j}]")


def messages_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A checked Messages request body as a chat-completions request body, model as given."""
    if body.get("mcp_servers"):
        raise RequestError(
            "mcp_servers (the MCP connector) cannot be sent to a chat-completions model",
            param="mcp_servers",
        )
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if isinstance(system, list):
        system = "\n\n".join(block["text"] for block in system)
    if system:
        messages.append({"role": "system", "content": system})
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        where = f"messages[{i}].content"
        if message["role"] == "assistant":
            messages.extend(_assistant(blocks, where))
        elif message["role"] == "system":
            messages.append({"role": "system", "content": "\n\n".join(b["text"] for b in blocks)})
        else:
            messages.extend(_user(blocks, where))

    out: dict[str, Any] = {"model": body["model"], "messages": messages}
    if body.get("max_tokens") is not None:
        out["max_tokens"] = body["max_tokens"]
    for name in ("temperature", "top_p"):  # top_k has no chat counterpart
        if body.get(name) is not None:
            out[name] = body[name]
    if body.get("stop_sequences"):
        out["stop"] = body["stop_sequences"]
    user = (body.get("metadata") or {}).get("user_id")
    if isinstance(user, str):
        out["user"] = user
    if tools := body.get("tools"):
        out["tools"] = [_tool(tool, f"tools[{k}]") for k, tool in enumerate(tools)]
        out.update(_tool_choice(body.get("tool_choice")))
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


def _assistant(blocks: list[Block], where: str) -> list[dict[str, Any]]:
    """An assistant turn: its text, and its tool_use blocks as tool_calls."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            texts.append(_string(block, "text", f"{where}[{j}]"))
        elif kind == "tool_use":
            call_input = block.get("input")
            if not isinstance(call_input, dict):
                raise RequestError(
                    "a tool_use input must be an object", param=f"{where}[{j}].input"
                )
            function = {
                "name": _string(block, "name", f"{where}[{j}]"),
                "arguments": dump_arguments(call_input),
            }
            calls.append(
                {
                    "id": _string(block, "id", f"{where}[{j}]"),
                    "type": "function",
                    "function": function,
                }
            )
        elif kind not in _DROPPED:
            raise _untranslatable(kind, f"{where}[{j}]")
    if not texts and not calls:
        return []  # only thinking: nothing an OpenAI upstream can take
    turn: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        turn["tool_calls"] = calls
    return [turn]


def _user(blocks: list[Block], where: str) -> list[dict[str, Any]]:
    """A user turn: its tool results as `tool` messages first, in order, then what else it says
    (an image inside a tool result with it, since a tool message carries text only)."""
    results: list[dict[str, Any]] = []
    parts: list[Block] = []
    for j, block in enumerate(blocks):
        kind = block["type"]
        param = f"{where}[{j}]"
        if kind == "tool_result":
            text, images = _tool_result_content(block.get("content"), f"{param}.content")
            if block.get("is_error") is True:
                text = f"Error: {text}" if text else "Error"
            call_id = _string(block, "tool_use_id", param)
            results.append({"role": "tool", "tool_call_id": call_id, "content": text})
            parts.extend(images)
        elif kind not in _DROPPED:
            parts.append(_part(block, param))
    if not parts:
        return results
    if all(part["type"] == "text" for part in parts):
        return [*results, {"role": "user", "content": "\n\n".join(p["text"] for p in parts)}]
    return [*results, {"role": "user", "content": parts}]


def _tool_result_content(content: Any, param: str) -> tuple[str, list[Block]]:
    if content is None or isinstance(content, str):
        return content or "", []
    if not isinstance(content, list):
        raise RequestError("a tool_result content must be a string or an array", param=param)
    texts: list[str] = []
    images: list[Block] = []
    for k, block in enumerate(content):
        if not isinstance(block, dict):
            raise RequestError("a tool_result content block must be an object", param=param)
        part = _part(block, f"{param}[{k}]")
        if part["type"] == "text":
            texts.append(part["text"])
        else:
            images.append(part)
    return "\n\n".join(texts), images


def _part(block: Block, param: str) -> Block:
    """A user content block as a chat content part: text or image_url."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": _string(block, "text", param)}
    source = block.get("source")
    if kind not in ("image", "document") or not isinstance(source, dict):
        raise _untranslatable(kind, param)
    source_type = source.get("type")
    if kind == "image" and source_type == "base64":
        media_type = _string(source, "media_type", f"{param}.source")
        url = f"data:{media_type};base64,{_string(source, 'data', f'{param}.source')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "image" and source_type == "url":
        return {
            "type": "image_url",
            "image_url": {"url": _string(source, "url", f"{param}.source")},
        }
    if kind == "document" and source_type == "text":
        text = _string(source, "data", f"{param}.source")
        title = block.get("title")
        return {"type": "text", "text": f"{title}\n\n{text}" if isinstance(title, str) else text}
    raise RequestError(
        f"a {kind} with a {source_type!r} source cannot be sent to a chat-completions model "
        "(images: base64 or url; documents: plain text)",
        param=f"{param}.source.type",
    )


def _untranslatable(kind: Any, param: str) -> RequestError:
    return RequestError(f"a {kind!r} block cannot be sent to a chat-completions model", param=param)


def _string(block: Block, key: str, param: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise RequestError(f"'{param}.{key}' must be a string", param=f"{param}.{key}")
    return value


def _tool(tool: Block, param: str) -> Block:
    kind = tool.get("type")
    if kind not in (None, "custom"):
        raise RequestError(
            f"{param} is the server tool {kind!r}: only custom tools (name, input_schema) "
            "can be sent to a chat-completions model",
            param=f"{param}.type",
        )
    schema = tool.get("input_schema")
    if schema is not None and not isinstance(schema, dict):
        raise RequestError(
            f"'{param}.input_schema' must be an object", param=f"{param}.input_schema"
        )
    function: Block = {
        "name": _string(tool, "name", param),
        "parameters": schema or {"type": "object", "properties": {}},
    }
    if isinstance(tool.get("description"), str):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def _tool_choice(choice: Any) -> dict[str, Any]:
    """tool_choice (and parallel_tool_calls) for a request that has tools."""
    if choice is None:
        return {}
    kind = choice.get("type")
    out: dict[str, Any] = {}
    if kind in ("auto", "none"):
        out["tool_choice"] = kind
    elif kind == "any":
        out["tool_choice"] = "required"
    elif kind == "tool":
        name = _string(choice, "name", "tool_choice")
        out["tool_choice"] = {"type": "function", "function": {"name": name}}
    else:
        raise RequestError(
            f"'tool_choice.type' must be auto, any, tool or none, got {kind!r}",
            param="tool_choice.type",
        )
    if choice.get("disable_parallel_tool_use") is True and kind != "none":
        out["parallel_tool_calls"] = False
    return out
