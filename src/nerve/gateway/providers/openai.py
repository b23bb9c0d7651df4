"""The OpenAI wire protocol: OpenAI itself, OpenRouter, Sarvam, Ollama, vLLM, any compatible URL.

Requests go out as the client sent them, with only `model` replaced (and `stream` turned off
when a body that asks for a stream is completed, by /task or `ask`), so tool calls and fields
nerve does not know pass through untouched. Non-streamed answers go back byte for byte.
The other OpenAI endpoints pass through the same way: `/responses` (where the upstream serves
it: `responses: true`), `/embeddings` and `/completions`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import aiohttp

from nerve.config import ProviderConfig
from nerve.errors import UpstreamError
from nerve.gateway.providers.base import Completion, Provider, Stream, parse_json, sse_events
from nerve.gateway.providers.passthrough import native_stream
from nerve.gateway.stats import Usage

__all__ = ["OpenAIProvider", "responses_usage"]

DONE = b"data: [DONE]\n\n"


class OpenAIProvider(Provider):
    def __init__(self, config: ProviderConfig, session: aiohttp.ClientSession) -> None:
        super().__init__(config, session)
        self.url = f"{config.base_url}/chat/completions"
        self.base_url = config.base_url
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
            self._frames(response, usage, client_wants_usage), response.close, usage
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

    # --- the other endpoints, passed through ------------------------------------------------

    async def native(self, endpoint: str, body: dict[str, Any], model: str) -> Completion:
        """POST `body` to `/{endpoint}` (responses, embeddings, completions) for `model`; the
        answer's bytes as they came, and its usage."""
        payload = {**body, "model": model}
        if payload.get("stream"):
            payload["stream"] = False
            payload.pop("stream_options", None)
        raw = await self._fetch(f"{self.base_url}/{endpoint}", payload, self.headers)
        data = parse_json(self.name, raw, "answered")
        if not isinstance(data, dict):
            raise UpstreamError(f"{self.name}: answer is not an object", code="upstream_bad_json")
        usage = data.get("usage")
        if endpoint == "responses":
            return Completion(raw, responses_usage(usage))
        return Completion(raw, Usage.from_openai(usage if isinstance(usage, dict) else None))

    async def open_native(self, endpoint: str, body: dict[str, Any], model: str) -> Stream:
        """Stream `/{endpoint}` (responses, completions): its events forwarded as they come."""
        payload = {**body, "model": model, "stream": True}
        if endpoint == "completions":  # ask for the usage, as chat streams do
            options = body.get("stream_options") or {}
            payload["stream_options"] = {**options, "include_usage": True}
            read, end = _completion_usage, "[DONE]"
        else:
            read, end = _response_usage, "response.completed"
        response = await self._post(f"{self.base_url}/{endpoint}", payload, self.headers,
                                    stream=True)  # fmt: skip
        return await native_stream(self.name, response, read, end)


def responses_usage(usage: Any) -> Usage | None:
    """A Responses `usage` ({input_tokens, output_tokens, ...}) as nerve counts it."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("output_tokens_details")
    return Usage.from_openai({
        "prompt_tokens": usage.get("input_tokens"),
        "completion_tokens": usage.get("output_tokens"),
        "total_tokens": usage.get("total_tokens"),
        "completion_tokens_details": {"reasoning_tokens": details.get("reasoning_tokens")}
        if isinstance(details, dict) else None,
    })  # fmt: skip


_RESPONSE_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _response_usage(kind: str | None, payload: object) -> tuple[Usage | None, bool]:
    if kind not in _RESPONSE_ENDS or not isinstance(payload, dict):
        return None, False
    response = payload.get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    return responses_usage(usage), True


def _completion_usage(kind: str | None, payload: object) -> tuple[Usage | None, bool]:
    usage = payload.get("usage") if isinstance(payload, dict) else None
    return Usage.from_openai(usage if isinstance(usage, dict) else None), False
