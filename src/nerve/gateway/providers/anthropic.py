"""The Anthropic Messages wire protocol, translated to and from OpenAI's both ways.

The translation itself is pure and lives in anthropic_wire; this class only does the I/O.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import aiohttp
import orjson

from nerve.config import ProviderConfig
from nerve.errors import UpstreamError
from nerve.gateway.providers.anthropic_wire import (
    StreamTranslator,
    from_anthropic_response,
    to_anthropic_request,
)
from nerve.gateway.providers.base import Completion, Provider, Stream, parse_json, sse_events
from nerve.gateway.stats import Usage

__all__ = ["ANTHROPIC_VERSION", "AnthropicProvider"]

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(Provider):
    def __init__(self, config: ProviderConfig, session: aiohttp.ClientSession) -> None:
        super().__init__(config, session)
        self.url = f"{config.base_url}/v1/messages"
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
        return await Stream.start(self._frames(response, translator, usage), response, usage)

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
