"""POST /v1/messages (and /v1/messages/count_tokens): the Anthropic Messages API, Claude Code's.

To an anthropic provider the request passes through: the body with only `model` replaced, the
client's `anthropic-version` and `anthropic-beta`, `cache_control`, the `system` array and
thinking blocks untouched; the answer, every stream event (`ping`s too) and upstream error
bodies come back as the upstream sent them. To an openai provider it is translated both ways
(messages_wire), streams included.

Thinking signatures are provider-bound: a conversation that carries signed (or redacted)
thinking blocks is tried on anthropic-protocol candidates first, in the plan's order, so `auto`
or a fallback does not move it off Anthropic while one can answer; where an openai candidate
answers anyway, the blocks are dropped in the translation (that upstream cannot take them).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from nerve.access.principal import principal_of
from nerve.errors import NerveError, RequestError, UpstreamError, UpstreamStatus
from nerve.gateway.core import Gateway, Plan, wants_private
from nerve.gateway.dialects.base import Dialect, DialectStream, Incoming, translate
from nerve.gateway.dialects.messages_wire import (
    PING,
    MessagesStream,
    chat_to_message,
    error_body,
    error_type,
    messages_to_chat,
    parse_messages_request,
)
from nerve.gateway.dialects.tokens import count_message_tokens
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.providers.anthropic import AnthropicProvider
from nerve.gateway.providers.base import parse_json

__all__ = ["MESSAGES", "MessagesDialect", "count_tokens_route"]

log = logging.getLogger("nerve.gateway")


class MessagesDialect(Dialect):
    name = "Anthropic Messages"
    wire = "messages"
    keepalive = PING

    def parse(self, raw: bytes) -> dict[str, Any]:
        return parse_messages_request(raw)

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        return chat_view(body)

    def order(self, plan: Plan, body: dict[str, Any], providers: Mapping[str, Provider]) -> Plan:
        plan = super().order(plan, body, providers)
        if not signed_thinking(body):
            return plan
        anthropic = [t for t in plan.targets
                     if isinstance(providers[t.provider], AnthropicProvider)]  # fmt: skip
        rest = [t for t in plan.targets if t not in anthropic]
        return replace(plan, targets=(*anthropic, *rest))

    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        if isinstance(provider, AnthropicProvider):
            return await provider.messages(request.body, model, request.headers)
        chat = messages_to_chat({**request.body, "stream": False})
        done = await provider.complete(chat, model)
        answer = chat_to_message(parse_json(provider.name, done.body, "answered"), model)
        return Completion(orjson.dumps(answer), done.usage)

    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        if isinstance(provider, AnthropicProvider):
            stream = await provider.open_messages(request.body, model, request.headers)
            return DialectStream.of(stream, _error_event)
        chat = messages_to_chat({**request.body, "stream": True})
        upstream = await provider.open_stream(chat, model)
        translator = MessagesStream(model, input_tokens=count_message_tokens(request.body))
        return translate(upstream, translator.feed, translator.finish,
                         lambda e: translator.error(e.message, _kind(e.status)))  # fmt: skip

    def error_body(self, error: NerveError) -> bytes:
        if isinstance(error, UpstreamStatus) and _is_anthropic_error(error.body):
            return error.body  # an Anthropic upstream's own error, unmodified
        return error_body(error.status, error.message)


def _error_event(error: NerveError) -> bytes:
    payload = {"type": "error", "error": {"type": _kind(error.status), "message": error.message}}
    return b"event: error\ndata: " + orjson.dumps(payload) + b"\n\n"


def _kind(status: int) -> str:
    return error_type(status)


def _is_anthropic_error(raw: bytes) -> bool:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("type") == "error"


def chat_view(body: Mapping[str, Any]) -> dict[str, Any]:
    """The text of a Messages body as chat messages, for the router and admission: lenient,
    since a passthrough sends blocks no translation could (server tools, documents)."""
    messages: list[dict[str, Any]] = []
    system = _text(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            role = message.get("role")
            role = role if role in ("assistant", "system") else "user"
            messages.append({"role": role, "content": _text(message.get("content"))})
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    return {"model": body.get("model"), "messages": messages or [{"role": "user", "content": ""}],
            "max_tokens": body.get("max_tokens"),
            "user": user if isinstance(user, str) else None}  # fmt: skip


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_use":
            parts.append(orjson.dumps(block.get("input")).decode())
        elif block.get("type") == "tool_result":
            parts.append(_text(block.get("content")))
    return "\n".join(parts)


def signed_thinking(body: Mapping[str, Any]) -> bool:
    """Whether an assistant turn carries thinking only its signer can verify."""
    for message in body.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and (
                block.get("type") == "redacted_thinking"
                or (block.get("type") == "thinking" and block.get("signature"))
            ):
                return True
    return False


async def count_tokens_route(gateway: Gateway, request: Request) -> Response:
    """POST /v1/messages/count_tokens: the upstream's count where the model's first candidate
    speaks Anthropic, else (or if that fails) nerve's estimate. Never 0: Claude Code compacts
    a conversation by it."""
    try:
        body = parse_messages_request(await request.body())
        if not isinstance(body.get("messages"), list):
            raise RequestError("'messages' is required", param="messages")
        private = wants_private(request.headers)  # a private body is counted locally or not at all
        plan = gateway.plan(chat_view(body), principal_of(request.scope), private=private)
        count = await _upstream_count(gateway, plan, body, request.headers)
        if count is None:
            count = count_message_tokens(body)
    except NerveError as e:
        return Response(MESSAGES.error_body(e), e.status, e.headers(),
                        media_type="application/json")  # fmt: skip
    return Response(orjson.dumps({"input_tokens": max(1, count)}), media_type="application/json")


async def _upstream_count(
    gateway: Gateway, plan: Plan, body: dict[str, Any], headers: Mapping[str, str]
) -> int | None:
    for target in plan.targets:
        provider = gateway.providers[target.provider]
        if provider.missing_key:
            continue
        if not isinstance(provider, AnthropicProvider):
            return None
        try:
            return await provider.count_tokens(body, target.model, headers)
        except UpstreamError as e:  # the estimate is better than no answer
            log.warning("count_tokens on %s failed, estimated instead: %s", target, e.message)
            return None
    return None


MESSAGES = MessagesDialect()
