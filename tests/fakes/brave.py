"""A fake Brave Search API on loopback, speaking its wire format (GET /res/v1/web/search).

Auth by the `X-Subscription-Token` header; `q` required, `count` 1-20 (else 422 as Brave does);
errors in Brave's `ErrorResponse` shape. `results` maps a query to its hits; any other query gets
`count` generated ones. Everything else about the response mirrors a real answer's layout.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from aiohttp import web

from tests.fakes.loopback import Loopback

__all__ = ["FakeBrave"]


def _error(status: int, code: str, detail: str) -> web.Response:
    body = {
        "type": "ErrorResponse",
        "error": {"id": str(uuid.uuid4()), "status": status, "code": code, "detail": detail,
                  "meta": {}},
        "time": int(time.time()),
    }  # fmt: skip
    return web.json_response(body, status=status)


def _hit(title: str, url: str, description: str) -> dict[str, Any]:
    return {
        "type": "search_result", "subtype": "generic", "title": title, "url": url,
        "description": description, "is_source_local": False, "is_source_both": False,
        "language": "en", "family_friendly": True,
        "profile": {"name": url.split("/")[2], "url": url, "long_name": url.split("/")[2]},
        "meta_url": {"scheme": "https", "netloc": url.split("/")[2], "path": "› " + title},
    }  # fmt: skip


class FakeBrave(Loopback):
    name = "brave"

    def __init__(self, key: str = "brave-test-key") -> None:
        super().__init__()
        self.key = key
        self.results: dict[str, list[tuple[str, str, str]]] = {}  # query → (title, url, desc)

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/res/v1/web/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        self.seen(request)
        if request.headers.get("X-Subscription-Token") != self.key:
            return _error(401, "SUBSCRIPTION_TOKEN_INVALID",
                          "The provided subscription token is invalid.")  # fmt: skip
        q = request.query.get("q", "")
        if not q:
            return _error(422, "VALIDATION", "Unable to validate request parameter(s)")
        try:
            count = int(request.query.get("count", "20"))
        except ValueError:
            count = 0
        if not 1 <= count <= 20:
            return _error(422, "VALIDATION", "count: Input should be less than or equal to 20")
        made = [
            (f"Result {i} for {q}", f"https://example.org/{i}", f"About {q}, part {i}.")
            for i in range(1, 21)
        ]
        hits = [_hit(*h) for h in self.results.get(q, made)[:count]]
        return web.json_response({
            "query": {"original": q, "show_strict_warning": False, "is_navigational": False,
                      "is_news_breaking": False, "spellcheck_off": True, "country": "us",
                      "bad_results": False, "should_fallback": False, "postal_code": "",
                      "city": "", "header_country": "", "more_results_available": True,
                      "state": ""},
            "mixed": {"type": "mixed", "main": [{"type": "web", "index": i, "all": False}
                                                for i in range(len(hits))], "top": [], "side": []},
            "type": "search",
            "web": {"type": "search", "results": hits, "family_friendly": True},
        })  # fmt: skip
