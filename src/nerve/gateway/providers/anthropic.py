"""The Anthropic Messages wire protocol, translated to and from OpenAI's both ways.

The translation itself is pure and lives in anthropic_wire; this class only does the I/O.
A client that speaks Messages itself (POST /v1/messages) is passed through instead: `messages`,
`open_messages` and `count_tokens` send its body with only `model` replaced, and its
`anthropic-version` and `anthropic-beta` headers as it sent them (no allow-list of betas).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import aiohttp
import orjson

from nerve.config import ProviderConfig
from nerve.errors import UpstreamError
from nerve.gateway.providers.anthropic_wire import (
    StreamTranslator,
    from_anthropic_response,
    openai_usage,
    to_anthropic_request,
)
from nerve.gateway.providers.base import Completion, Provider, Stream, parse_json, sse_events
from nerve.gateway.providers.passthrough import native_stream
from nerve.gateway.stats import Usage

__all__ = ["ANTHROPIC_VERSION", "AnthropicProvider", "MessagesUsage"]

ANTHROPIC_VERSION = "2023-06-01"
CLIENT_HEADERS = ("anthropic-version", "anthropic-beta")  # what a passthrough forwards


class AnthropicProvider(Provider):
    def __init__(self, config: ProviderConfig, session: aiohttp.ClientSession) -> None:
        super().__init__(config, session)
        self.url = f"{config.base_url}/v1/messages"
        self.count_url = f"{config.base_url}/v1/messages/count_tokens"
        self.models_url = f"{config.base_url}/v1/models"
        self.headers = {
            "content-type": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
            **config.headers,
        }
        if config.api_key:
            self.headers["x-api-key"] = config.api_key

    async def complete(self, body: dict[str, Any], model: str) -> Completion:
        payload = to_anthropic_request({**body, "stream": False}, model)
        raw = await self._fetch(self.url, payload, self.headers)
        data = parse_json(self.name, raw, "answered")
        if not isinstance(data, dict) or data.get("type") != "message":
            raise UpstreamError(f"{self.name}: answer is not a message", code="upstream_bad_json")
        answer = from_anthropic_response(data, model)
        return Completion(orjson.dumps(answer), Usage.from_openai(answer.get("usage")))

    async def open_stream(self, body: dict[str, Any], model: str) -> Stream:
        options = body.get("stream_options") or {}
        payload = to_anthropic_request({**body, "stream": True}, model)
        response = await self._post(self.url, payload, self.headers, stream=True)
        translator = StreamTranslator(model, include_usage=bool(options.get("include_usage")))
        usage: list[Usage] = []
        return await Stream.start(self._frames(response, translator, usage), response.close, usage)

    async def _frames(
        self, response: aiohttp.ClientResponse, translator: StreamTranslator, usages: list[Usage]
    ) -> AsyncGenerator[bytes, None]:
        async for event in sse_events(self.name, response, "message_stop"):
            payload = parse_json(self.name, event.data, "streamed")
            name = event.event or (payload.get("type") if isinstance(payload, dict) else None)
            if not isinstance(payload, dict) or not name:
                continue
            for chunk in translator.feed(name, payload):
                yield b"data: " + orjson.dumps(chunk) + b"\n\n"
            if name == "message_stop":
                usage = Usage.from_openai(translator.usage)
                if usage is not None:
                    usages.append(usage)
                yield b"data: [DONE]\n\n"
                return

    # --- a Messages client passed through --------------------------------------------------

    def native_headers(self, client: Mapping[str, str]) -> dict[str, str]:
        """The provider's headers (its key, never the client's), with the client's version and
        betas as it sent them."""
        headers = dict(self.headers)
        for name in CLIENT_HEADERS:
            value = client.get(name)
            if value:
                headers[name] = value
        return headers

    async def messages(
        self, body: dict[str, Any], model: str, client: Mapping[str, str]
    ) -> Completion:
        payload = {**body, "model": model, "stream": False}
        raw = await self._fetch(self.url, payload, self.native_headers(client))
        data = parse_json(self.name, raw, "answered")
        if not isinstance(data, dict) or data.get("type") != "message":
            raise UpstreamError(f"{self.name}: answer is not a message", code="upstream_bad_json")
        usage = data.get("usage")
        return Completion(raw, Usage.from_openai(openai_usage(usage)) if isinstance(usage, dict)
                          else None)  # fmt: skip

    async def open_messages(
        self, body: dict[str, Any], model: str, client: Mapping[str, str]
    ) -> Stream:
        payload = {**body, "model": model, "stream": True}
        headers = self.native_headers(client)
        response = await self._post(self.url, payload, headers, stream=True)
        return await native_stream(self.name, response, MessagesUsage(), "message_stop")

    async def count_tokens(
        self, body: dict[str, Any], model: str, client: Mapping[str, str]
    ) -> int:
        """The upstream's own count (`input_tokens`) for a Messages body."""
        payload = {k: v for k, v in body.items() if k not in _NOT_COUNTED}
        raw = await self._fetch(self.count_url, {**payload, "model": model},
                                self.native_headers(client))  # fmt: skip
        data = parse_json(self.name, raw, "answered")
        count = data.get("input_tokens") if isinstance(data, dict) else None
        if not isinstance(count, int) or isinstance(count, bool):
            raise UpstreamError(f"{self.name}: count_tokens gave no input_tokens",
                                code="upstream_bad_json")  # fmt: skip
        return count


# Fields of a Messages request that count_tokens refuses (it counts the prompt only).
_NOT_COUNTED = frozenset({"max_tokens", "stream", "temperature", "top_p", "top_k",
                          "stop_sequences", "metadata", "service_tier"})  # fmt: skip


class MessagesUsage:
    """Reads a Messages stream's usage: the input at `message_start`, the output (and, in newer
    API versions, the input again) at `message_delta`; the stream ends at `message_stop`."""

    def __init__(self) -> None:
        self.counts: dict[str, Any] = {}

    def __call__(self, kind: str | None, payload: object) -> tuple[Usage | None, bool]:
        if not isinstance(payload, dict):
            return None, False
        if kind == "message_start":
            message = payload.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(usage, dict):
                self.counts.update(usage)
            return None, False
        if kind == "message_delta":
            usage = payload.get("usage")
            if isinstance(usage, dict):
                self.counts.update({k: v for k, v in usage.items() if v is not None})
            return Usage.from_openai(openai_usage(self.counts)), False
        return None, kind == "message_stop"
