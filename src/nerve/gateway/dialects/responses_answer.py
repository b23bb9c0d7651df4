"""A chat.completion as an OpenAI Responses `Response` (SPEC GW-21), and the pieces the stream
(responses_stream) and the request translation (responses_wire) share: tool names, output items
and usage. Pure: no I/O. Import from `responses_wire`, which re-exports what is public here.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INCOMPLETE",
    "ToolName",
    "as_list",
    "as_object",
    "call_item",
    "chat_name",
    "chat_to_response",
    "declared_tools",
    "dump_json",
    "message_item",
    "new_id",
    "part",
    "reasoning_of",
    "request_tools",
    "response_object",
    "response_usage",
    "usage_from_chat",
]

# chat finish_reason -> Response incomplete_details.reason; any other reason is "completed".
INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
Item = dict[str, Any]


def as_object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one: upstream answers are read leniently."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def dump_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def chat_name(namespace: Any, name: str) -> str:
    """The chat function name of a Responses tool: a namespaced one is `namespace__name`."""
    return f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name


@dataclass(frozen=True, slots=True)
class ToolName:
    kind: str  # function, custom or local_shell: which output item its calls become
    name: str
    namespace: str | None = None


def request_tools(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The request's tools with where each is (for errors): `tools`, then those `additional_tools`
    input items bring (newer Codex sends its tools so), which a chat model has from the start."""
    tools = body.get("tools")
    out = [(f"tools[{k}]", t) for k, t in enumerate(tools if isinstance(tools, list) else [])]
    items = body.get("input")
    for i, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            more = item.get("tools")
            out += [(f"input[{i}].tools[{k}]", t)
                    for k, t in enumerate(more if isinstance(more, list) else [])]  # fmt: skip
    return out


def declared_tools(body: dict[str, Any]) -> dict[str, ToolName]:
    """The request's tools by their chat function name."""
    out: dict[str, ToolName] = {}
    for _, tool in request_tools(body):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "local_shell":
            out["local_shell"] = ToolName("local_shell", "local_shell")
        elif kind in ("function", "custom") and isinstance(tool.get("name"), str):
            out[tool["name"]] = ToolName(kind, tool["name"])
        elif kind == "namespace" and isinstance(tool.get("name"), str):
            for inner in as_list(tool.get("tools")):
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    inner_kind = "custom" if inner.get("type") == "custom" else "function"
                    named = ToolName(inner_kind, inner["name"], tool["name"])
                    out[chat_name(tool["name"], inner["name"])] = named
    return out


def call_item(tools: dict[str, ToolName], call_id: str, name: str, arguments: str) -> Item:
    """A chat tool call as the output item its tool's kind makes: a custom tool's call is a
    custom_tool_call carrying the `input` argument (the raw arguments if there is none), a
    local_shell call a local_shell_call; anything else a function_call. Status completed."""
    tool = tools.get(name) or ToolName("function", name)
    where = {"namespace": tool.namespace} if tool.namespace else {}
    parsed = _loads(arguments)
    args = parsed if isinstance(parsed, dict) else {}
    if tool.kind == "custom":
        text = args.get("input")
        return {"type": "custom_tool_call", "id": new_id("ctc"), "call_id": call_id,
                "name": tool.name, "input": text if isinstance(text, str) else arguments,
                **where}  # fmt: skip
    command = args.get("command")
    if tool.kind == "local_shell" and isinstance(command, list) and command:
        action: dict[str, Any] = {"type": "exec", "command": [str(c) for c in command], "env": {}}
        if isinstance(args.get("workdir"), str):
            action["working_directory"] = args["workdir"]
        if isinstance(args.get("timeout_ms"), int):
            action["timeout_ms"] = args["timeout_ms"]
        return {"type": "local_shell_call", "id": new_id("lsh"), "call_id": call_id,
                "action": action, "status": "completed"}  # fmt: skip
    return {"type": "function_call", "id": new_id("fc"), "call_id": call_id, "name": tool.name,
            "arguments": arguments, "status": "completed", **where}  # fmt: skip


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def reasoning_of(message: dict[str, Any]) -> str:
    """A chat message's or delta's reasoning: `reasoning_content`, else `reasoning` (OpenRouter,
    newer vLLM). Some servers send both with the same text, so never both."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(value := message.get(key), str) and value:
            return value
    return ""


def part(kind: str, text: str) -> Item:
    """A content part: output_text or refusal (a message's), summary_text (reasoning's)."""
    if kind == "refusal":
        return {"type": "refusal", "refusal": text}
    if kind == "summary_text":
        return {"type": "summary_text", "text": text}
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def usage_from_chat(usage: Any) -> dict[str, Any] | None:
    """Chat usage as Responses usage; None when the upstream sent none."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    details = as_object(usage.get("prompt_tokens_details"))
    cache = {key: _count(details.get(key)) for key in ("cached_tokens", "cache_write_tokens")}
    thought = _count(as_object(usage.get("completion_tokens_details")).get("reasoning_tokens"))
    total = usage.get("total_tokens")
    total = _count(total) if total is not None else prompt + completion
    return {"input_tokens": prompt, "input_tokens_details": cache, "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": thought},
            "total_tokens": total}  # fmt: skip


def response_usage(usage: dict[str, Any]) -> dict[str, int]:
    """Responses usage as chat usage, for accounting."""
    prompt, completion = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    total = usage.get("total_tokens")
    total = _count(total) if total is not None else prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def response_object(
    body: dict[str, Any], rid: str, model: str, created: int, status: str, output: list[Item],
    usage: dict[str, Any] | None, *, incomplete: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A Response, with what the request asked for (tools, temperature...) echoed back."""
    out: dict[str, Any] = {
        "id": rid, "object": "response", "created_at": created, "status": status,
        "model": model, "output": output, "error": error,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": body.get("instructions"), "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice") or "auto",
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "text": body.get("text") or {"format": {"type": "text"}},
        "truncation": body.get("truncation") or "disabled", "metadata": body.get("metadata") or {},
        "background": False, "previous_response_id": None, "store": False, "usage": usage,
    }  # fmt: skip
    for name in ("max_output_tokens", "max_tool_calls", "temperature", "top_p", "top_logprobs",
                 "reasoning", "user", "safety_identifier", "prompt_cache_key"):  # fmt: skip
        out[name] = body.get(name)
    return out


def chat_to_response(completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion as the Response to the Responses request `body`: reasoning, then the
    message, then the tool calls, as the Responses API orders its output."""
    choices = completion.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    choice = as_object(choice)
    message = as_object(choice.get("message"))
    finish = choice.get("finish_reason")
    incomplete = INCOMPLETE.get(finish) if isinstance(finish, str) else None
    output: list[Item] = []
    if thought := reasoning_of(message):
        summary = [part("summary_text", thought)]
        output.append({"type": "reasoning", "id": new_id("rs"), "summary": summary})
    content, refusal = message.get("content"), message.get("refusal")
    if isinstance(content, list):  # a few servers answer with text parts
        content = "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    calls = [c for c in as_list(message.get("tool_calls")) if isinstance(c, dict)]
    parts: list[Item] = []
    if content or not (calls or refusal):
        parts.append(part("output_text", content if isinstance(content, str) else ""))
    if isinstance(refusal, str) and refusal:
        parts.append(part("refusal", refusal))
    if parts:
        output.append(message_item(new_id("msg"), parts, "incomplete" if incomplete else
                                   "completed"))  # fmt: skip
    tools = declared_tools(body)
    for call in calls:
        function = as_object(call.get("function"))
        call_id = call["id"] if isinstance(call.get("id"), str) else new_id("call")
        output.append(call_item(tools, call_id, str(function.get("name") or ""),
                                str(function.get("arguments") or "")))  # fmt: skip
    model = str(completion.get("model") or body.get("model") or "")
    status = "incomplete" if incomplete else "completed"
    return response_object(body, new_id("resp"), model, int(time.time()), status, output,
                           usage_from_chat(completion.get("usage")),
                           incomplete=incomplete)  # fmt: skip


def message_item(item_id: str, content: list[Item], status: str) -> Item:
    return {"type": "message", "id": item_id, "role": "assistant", "status": status,
            "content": content}  # fmt: skip
