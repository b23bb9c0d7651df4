"""POST /v1/chat/completions: the pivot every provider speaks, so nothing is translated here."""

from __future__ import annotations

from typing import Any

from nerve.gateway.dialects.base import Dialect, Incoming
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.request import parse_chat_request

__all__ = ["CHAT", "ChatDialect"]


class ChatDialect(Dialect):
    name = "chat completions"
    wire = "chat"

    def parse(self, raw: bytes) -> dict[str, Any]:
        return parse_chat_request(raw)

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        return await provider.complete(request.body, model)

    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        return await provider.open_stream(request.body, model)


CHAT = ChatDialect()
