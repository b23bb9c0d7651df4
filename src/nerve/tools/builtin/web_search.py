"""`web_search`: the Brave Search API (GET /res/v1/web/search, key in $BRAVE_API_KEY).

`assistant.web_search.base_url` points it elsewhere (tests: a fake on loopback). Results come
back trimmed to title, url and description, which is what the model needs to cite.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from nerve.tools.base import tool
from nerve.tools.builtin._web import api_key, base_url, get_json
from nerve.tools.result import ToolContext, ToolError

__all__ = ["DEFAULT_BASE_URL", "KEY_ENV", "web_search"]

DEFAULT_BASE_URL = "https://api.search.brave.com"
KEY_ENV = "BRAVE_API_KEY"


@tool(description="Search the web (Brave Search) and return the top results.")
async def web_search(
    ctx: ToolContext,
    query: Annotated[str, Field(min_length=1, max_length=400, description="what to search for")],
    count: Annotated[int, Field(ge=1, le=20, description="how many results (1-20)")] = 5,
) -> dict[str, Any]:
    key = api_key(ctx, KEY_ENV, "web_search")
    base = base_url(ctx.services.config.assistant.web_search.base_url, DEFAULT_BASE_URL)
    status, body = await get_json(
        ctx, f"{base}/res/v1/web/search",
        params={"q": query, "count": str(count)},
        headers={"X-Subscription-Token": key, "Accept": "application/json"},
        service="Brave Search",
    )  # fmt: skip
    if status != 200 or not isinstance(body, dict):
        raise ToolError(f"Brave Search answered {status}: {_error_detail(body)}")
    found = (body.get("web") or {}).get("results") or []
    results = [
        {"title": r.get("title"), "url": r.get("url"), "description": r.get("description")}
        for r in found[:count] if isinstance(r, dict)
    ]  # fmt: skip
    return {"query": query, "results": results}


def _error_detail(body: Any) -> str:
    """Brave errors look like {"type": "ErrorResponse", "error": {"detail", "code", ...}}."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return str(err.get("detail") or err.get("code") or "unknown error")
    return "an unexpected answer"
