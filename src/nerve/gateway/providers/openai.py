"""The OpenAI wire protocol: OpenAI itself, OpenRouter, Sarvam, Ollama, vLLM, any compatible URL.

Requests go out as the client sent them, with only `model` replaced (and `stream` turned off
when a body that asks for a stream is completed, by /task or `ask`), so tool calls and fields
nerve does not know pass through untouched. Non-streamed answers go back byte for byte.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import aiohttp

from nerve.config import ProviderConfig
from nerve.errors import UpstreamError
from nerve.gateway.providers.base import Completion, Provider, Stream, parse_json, sse_events
from nerve.gateway.stats import Usage

__all__ = ["OpenAIProvider"]

DONE = b"data: [DONE]\n\n"


class OpenAIProvider(Provider):
    def __init__(self, config: ProviderConfig, session: aiohttp.ClientSession) -> None:
        super().__init__(config, session)
        self.url = f"{config.base_url}/chat/completions"
        self.models_url = f"{config.base_url}/models"
        self.headers = {"content-type": "application/json", **config.headers}
        if config.api_key:
            self.headers["authorization"] = f"Bearer {config.api_key}"

    async def complete(self, body: dict[str, Any], model: str) -> Completion:
        payload = {**body, "model": model}
        if payload.get("stream"):  # a body meant for a stream (/task, ask()) wants one answer
            payload["stream"] = False
            payload.pop("stream_options", None)
        raw = await self._fetch(self.url, payload, self.headers)
        data = parse_json(self.name, raw, "answered")
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise UpstreamError(
                f"{self.name}: answer is not a chat completion", code="upstream_bad_json"
            )
        return Completion(raw, Usage.from_openai(data.get("usage")))

    async def open_stream(self, body: dict[str, Any], model: str) -> Stream:
        options = body.get("stream_options") or {}
        client_wants_usage = bool(options.get("include_usage"))
        # Always ask for usage so streamed tokens are counted; hide it again if not asked for.
        payload = {
            **body,
            "model": model,
            "stream": True,
            "stream_options": {**options, "include_usage": True},
        }
        response = await self._post(self.url, payload, self.headers, stream=True)
        usage: list[Usage] = []
        return await Stream.start(
            self._frames(response, usage, client_wants_usage), response, usage
        )

    async def _frames(
        self, response: aiohttp.ClientResponse, usages: list[Usage], client_wants_usage: bool
    ) -> AsyncGenerator[bytes, None]:
        async for event in sse_events(self.name, response, "[DONE]"):
            if event.data == "[DONE]":
                yield DONE
                return
            frame = event.data.encode()
            chunk = parse_json(self.name, frame, "streamed")
            if not isinstance(chunk, dict):
                continue
            if "error" in chunk:
                raise UpstreamError(f"{self.name}: {chunk['error']}", code="upstream_stream_error")
            usage = Usage.from_openai(chunk.get("usage"))
            if usage is not None:
                usages.append(usage)
                if not client_wants_usage and not chunk.get("choices"):
                    continue
            yield b"data: " + frame + b"\n\n"
