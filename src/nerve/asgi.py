"""How a NerveError leaves over HTTP, OpenAI-shaped, in one place: `send_error` writes it straight
to ASGI `send` (the hot path and the boundary, which run before or without the framework);
`error_response` is the same answer as a starlette Response (the app's one exception handler,
and the admin guard, which adds its own headers)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from nerve.errors import NerveError

__all__ = ["JSON_HEADERS", "encode_headers", "error_response", "send_error", "send_json"]

JSON_HEADERS = [(b"content-type", b"application/json")]


def encode_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in headers.items()]


async def send_json(send: Any, status: int, body: bytes, headers: dict[str, str]) -> None:
    fields = [*JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    fields += encode_headers(headers)
    await send({"type": "http.response.start", "status": status, "headers": fields})
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Any, error: NerveError) -> None:
    await send_json(send, error.status, orjson.dumps(error.to_dict()), error.headers())


def error_response(error: NerveError) -> Response:
    return Response(
        orjson.dumps(error.to_dict()),
        status_code=error.status,
        headers=error.headers(),
        media_type="application/json",
    )
