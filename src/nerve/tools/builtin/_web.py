"""GET a JSON API for web_search and weather: the shared session when the server gives one.

Errors become `ToolError`s that never include the URL (a key may ride in its query string).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import aiohttp

from nerve.tools.result import ToolContext, ToolError

__all__ = ["TIMEOUT_S", "api_key", "base_url", "get_json"]

TIMEOUT_S = 15.0


def api_key(ctx: ToolContext, env: str, tool_name: str) -> str:
    key = ctx.services.environ.get(env, "").strip()
    if not key:
        raise ToolError(f"{tool_name} is not configured: set the {env} environment variable")
    return key


def base_url(configured: str | None, default: str) -> str:
    return (configured or default).rstrip("/")


async def get_json(
    ctx: ToolContext,
    url: str,
    *,
    params: Mapping[str, str],
    headers: Mapping[str, str],
    service: str,
) -> tuple[int, Any]:
    """(status, decoded body or None); a network failure or timeout is a ToolError."""
    try:
        async with asyncio.timeout(TIMEOUT_S):
            if ctx.services.http is not None:
                return await _get(ctx.services.http, url, params, headers)
            async with aiohttp.ClientSession() as session:
                return await _get(session, url, params, headers)
    except TimeoutError:
        raise ToolError(f"{service} did not answer within {TIMEOUT_S:g} s") from None
    except aiohttp.ClientError as exc:
        raise ToolError(f"{service} could not be reached ({type(exc).__name__})") from None


async def _get(
    session: aiohttp.ClientSession,
    url: str,
    params: Mapping[str, str],
    headers: Mapping[str, str],
) -> tuple[int, Any]:
    async with session.get(url, params=params, headers=headers) as resp:
        try:
            body = await resp.json(content_type=None)
        except ValueError:
            body = None
        return resp.status, body
