"""POST /v1/embeddings and /v1/completions: OpenAI endpoints with no chat counterpart.

They pass through to openai-protocol providers only (an Anthropic model embeds nothing and
has no fill-in-the-middle), routed like every request: `provider/model`, or a route whose
candidates serve them (the others are dropped from the plan; 400 if none is left).
"""

from __future__ import annotations

from typing import Any

from nerve.errors import RequestError
from nerve.gateway.dialects.base import Dialect, Incoming, parse_object
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.providers.openai import OpenAIProvider
from nerve.gateway.request import check_model, optional

__all__ = ["COMPLETIONS", "EMBEDDINGS", "CompletionsDialect", "EmbeddingsDialect"]


def _native(provider: Provider) -> OpenAIProvider:
    assert isinstance(provider, OpenAIProvider)  # order() kept only these
    return provider


def _texts(value: Any, param: str) -> list[str]:
    """A prompt or input: a string, an array of strings, or token ids (counted, not read)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value:
        if all(isinstance(v, str) for v in value):
            return value
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return [" ".join(map(str, value))]
        if all(isinstance(v, list) and all(isinstance(i, int) for i in v) for v in value):
            return [" ".join(map(str, v)) for v in value]
    raise RequestError(
        f"'{param}' is required: a string, an array of strings, or an array of token ids",
        param=param,
    )


class EmbeddingsDialect(Dialect):
    name = "embeddings"

    def parse(self, raw: bytes) -> dict[str, Any]:
        body = parse_object(raw, "embeddings")
        check_model(body.get("model"))
        if body["model"] == "auto":
            raise RequestError("embeddings need a model: a route or provider/model, not auto",
                               param="model")  # fmt: skip
        _texts(body.get("input"), "input")
        optional(body, "encoding_format", str, "'float' or 'base64'")
        dimensions = optional(body, "dimensions", int, "a positive integer")
        if dimensions is not None and dimensions < 1:
            raise RequestError("'dimensions' must be a positive integer", param="dimensions")
        optional(body, "user", str, "a string")
        return body

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        text = "\n".join(_texts(body["input"], "input"))
        return {"model": body["model"], "messages": [{"role": "user", "content": text}],
                "max_tokens": 1, "user": body.get("user")}  # fmt: skip

    def serves(self, provider: Provider) -> bool:
        return isinstance(provider, OpenAIProvider)

    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        return await _native(provider).native("embeddings", request.body, model)

    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        raise RequestError("embeddings do not stream", param="stream")


class CompletionsDialect(Dialect):
    name = "completions"

    def parse(self, raw: bytes) -> dict[str, Any]:
        body = parse_object(raw, "completions")
        check_model(body.get("model"))
        _texts(body.get("prompt"), "prompt")
        optional(body, "suffix", str, "a string")
        optional(body, "stream", bool, "true or false")
        for name in ("max_tokens", "n", "best_of"):
            value = optional(body, name, int, "a positive integer")
            if value is not None and value < 1:
                raise RequestError(f"'{name}' must be a positive integer", param=name)
        optional(body, "user", str, "a string")
        return body

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        text = "\n".join(_texts(body["prompt"], "prompt")) + (body.get("suffix") or "")
        return {"model": body["model"], "messages": [{"role": "user", "content": text}],
                "max_tokens": body.get("max_tokens") or 16, "user": body.get("user")}  # fmt: skip

    def serves(self, provider: Provider) -> bool:
        return isinstance(provider, OpenAIProvider)

    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        return await _native(provider).native("completions", request.body, model)

    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        return await _native(provider).open_native("completions", request.body, model)


EMBEDDINGS = EmbeddingsDialect()
COMPLETIONS = CompletionsDialect()
