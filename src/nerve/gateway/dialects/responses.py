"""POST /v1/responses: the OpenAI Responses API, what Codex and the OpenAI Agents SDK speak.

Stateless: the client sends the whole conversation each turn (`store: false`, as Codex does);
`previous_response_id` is refused with a 400 saying so, since nerve keeps no responses. To an
openai provider that serves Responses (`responses: true`; the `openai` preset does) the request
passes through; to any other (chat completions only, or Anthropic through the chat pivot) it is
translated both ways (responses_wire), streams included, `custom` tools (Codex's apply_patch)
coming back as `custom_tool_call`s.
"""

from __future__ import annotations

from typing import Any

import orjson

from nerve.errors import NerveError
from nerve.gateway.dialects.base import Dialect, DialectStream, Incoming, translate
from nerve.gateway.dialects.responses_wire import (
    ResponsesStream,
    chat_to_response,
    parse_responses_request,
    responses_to_chat,
)
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.providers.base import parse_json
from nerve.gateway.providers.openai import OpenAIProvider

__all__ = ["RESPONSES", "ResponsesDialect", "chat_view"]


def speaks_responses(provider: Provider) -> bool:
    return isinstance(provider, OpenAIProvider) and provider.config.responses


class ResponsesDialect(Dialect):
    name = "Responses"
    wire = "responses"

    def parse(self, raw: bytes) -> dict[str, Any]:
        return parse_responses_request(raw)

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        return chat_view(body)

    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        if speaks_responses(provider):
            assert isinstance(provider, OpenAIProvider)
            return await provider.native("responses", request.body, model)
        chat = responses_to_chat({**request.body, "stream": False})
        done = await provider.complete(chat, model)
        answer = chat_to_response(parse_json(provider.name, done.body, "answered"), request.body)
        return Completion(orjson.dumps(answer), done.usage)

    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        translator = ResponsesStream(request.body, model)
        fail = _failed(translator)
        if speaks_responses(provider):
            assert isinstance(provider, OpenAIProvider)
            stream = await provider.open_native("responses", request.body, model)
            return DialectStream.of(stream, fail)
        chat = responses_to_chat({**request.body, "stream": True})
        upstream = await provider.open_stream(chat, model)
        return translate(upstream, translator.feed, translator.finish, fail)


def _failed(translator: ResponsesStream) -> Any:
    def fail(error: NerveError) -> bytes:
        return translator.failed(error.message, error.code or "server_error")

    return fail


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses body's text as chat messages, for the router and admission."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        if role in ("system", "developer"):
            messages.append({"role": "system", "content": _text(item.get("content"))})
        elif role in ("user", "assistant"):
            messages.append({"role": role, "content": _text(item.get("content"))})
        elif isinstance(item.get("output"), str):  # a tool's output
            messages.append({"role": "user", "content": item["output"]})
        elif isinstance(item.get("arguments") or item.get("input"), str):  # a tool call
            messages.append({"role": "assistant",
                             "content": item.get("arguments") or item.get("input")})  # fmt: skip
    user = body.get("user") or body.get("safety_identifier")
    return {"model": body.get("model"), "messages": messages or [{"role": "user", "content": ""}],
            "max_tokens": body.get("max_output_tokens"),
            "user": user if isinstance(user, str) else None}  # fmt: skip


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(p["text"] for p in content if isinstance(p, dict)
                     and isinstance(p.get("text"), str))  # fmt: skip


RESPONSES = ResponsesDialect()
