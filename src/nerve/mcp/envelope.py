"""What a POST body to `/mcp` must be before the SDK sees it: one JSON-RPC 2.0 message.

The SDK's streamable HTTP transport validates the body against the union of message models,
so a request whose `id` is not a string or an integer (true, 1.5, {}, [], null) matches the
notification model, which ignores unknown keys, and is answered 202 and dropped; and a
malformed envelope fails every model and is answered -32602 (Invalid params). JSON-RPC 2.0
§5.1 says -32700 for a body that is not JSON and -32600 for one that is not a valid message,
with `id` null when it cannot be told; MCP (basic/transports, 2025-06-18 and 2025-11-25) says
the body is a single request, notification or response, and an input the server cannot
accept gets an HTTP error status, 400. `rejection(body)` tells which, or None for a message
the SDK may have. On top of JSON-RPC, MCP's schema requires: an id is a string or an integer,
never null; `params` is an object (an array is valid JSON-RPC, so it gets -32602, Invalid
params, with the request's id); a response's `result` is an object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pydantic_core

__all__ = ["INVALID_PARAMS", "INVALID_REQUEST", "PARSE_ERROR", "Rejection", "rejection"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Rejection:
    """A JSON-RPC error for a body that is not one valid message; sent with HTTP 400."""

    code: int
    message: str
    id: str | int | None = None

    def body(self) -> bytes:
        error = {"code": self.code, "message": self.message}
        message = {"jsonrpc": "2.0", "id": self.id, "error": error}
        return json.dumps(message, separators=(",", ":")).encode()


def rejection(body: bytes) -> Rejection | None:
    """Why `body` is not one JSON-RPC 2.0 message MCP accepts, or None when it is one."""
    try:  # the SDK's own parser, so what passes here parses the same there; NaN is not JSON
        message = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError as e:  # bad UTF-8 or JSON, a lone surrogate, nesting past 200 levels
        return Rejection(PARSE_ERROR, f"Parse error: {e}")
    if isinstance(message, list):
        return Rejection(
            INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per POST"
        )
    if not isinstance(message, dict):
        return Rejection(INVALID_REQUEST, "Invalid Request: the body must be a JSON-RPC object")
    problem = _problem(message)
    if problem is not None:
        return Rejection(INVALID_REQUEST, f"Invalid Request: {problem}", _id_of(message))
    if isinstance(message.get("params"), list):  # valid JSON-RPC, but no MCP method takes one
        return Rejection(
            INVALID_PARAMS, 'Invalid params: MCP "params" are an object', _id_of(message)
        )
    return None


def _problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if "method" in message:
        return _request_problem(message)
    if "result" in message or "error" in message:
        return _response_problem(message)
    return 'a request or notification needs a "method"'


def _request_problem(message: dict[str, Any]) -> str | None:
    if not isinstance(message["method"], str):
        return '"method" must be a string'
    if "params" in message and not isinstance(message["params"], dict | list):
        return '"params" must be an object or an array'
    if "result" in message or "error" in message:
        return 'a request has no "result" or "error"'
    if "id" in message and not _is_id(message["id"]):
        return '"id" must be a string or an integer'
    return None


def _response_problem(message: dict[str, Any]) -> str | None:
    if ("result" in message) == ("error" in message):
        return 'a response has a "result" or an "error", not both'
    if "result" in message:
        if not _is_id(message.get("id")):
            return '"id" must be a string or an integer'
        if not isinstance(message["result"], dict):
            return '"result" must be an object'
        return None
    if not (_is_id(message.get("id")) or ("id" in message and message["id"] is None)):
        return '"id" must be a string, an integer or null'
    error = message["error"]
    if not (isinstance(error, dict) and _is_int(error.get("code"))
            and isinstance(error.get("message"), str)):  # fmt: skip
        return '"error" must be an object with an integer "code" and a string "message"'
    return None


def _id_of(message: dict[str, Any]) -> str | int | None:
    """The id to answer with: the message's own when it is a valid one, else null (§5)."""
    id_ = message.get("id")
    return id_ if _is_id(id_) else None


def _is_id(value: object) -> bool:
    return isinstance(value, str) or _is_int(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is an int in Python
