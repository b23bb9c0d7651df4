"""The admin panel's Access page: API keys as objects (SPEC KY-2, KY-3, UX-1).

    GET  /admin/api/access                 every key (config file's and managed), never the key
                                           itself; each with its spend when the server meters it
    POST /admin/api/access                 {name, routes, models, users, rpm, tpm, max_parallel,
                                           budget: "20/month" | {usd, period}} → {key, record}:
                                           the key, shown this once, and what is kept of it
    POST /admin/api/access/{name}/revoke   refused by every server on the store within a second

(`/admin/api/keys` is the provider keys' page, config_api.py.) Managed keys live in the store
(`panel.keys`, nerve.access.keystore); making and revoking them is nerve.access.keys, shared
with `nerve keys create|list|revoke`. Spend comes from `host.access` when the server has one:
`await host.access.spend(names)` → one dict per metered key, `{key, usd, held_usd, period,
period_start, resets_at}` (nerve.access.ledger.Spend); without it, each key's `spend` is null.
"""

from __future__ import annotations

from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.access.keys import key_views, new_key, revoke_key
from nerve.admin.http import Handler, read_json
from nerve.admin.panel import AdminPanel
from nerve.errors import NerveError

__all__ = ["SpendSource", "access_routes"]


class SpendSource(Protocol):
    """What the Access page asks of `host.access`: each named key's spend this period."""

    async def spend(self, names: list[str]) -> list[dict[str, Any]]: ...


async def _spend(source: SpendSource | None, views: list[dict[str, Any]]) -> str | None:
    """Put each key's spend (and budget left) on its view; return why spend is unknown, if so."""
    for view in views:
        view["spend"] = None
    if source is None:
        return None
    try:
        found = await source.spend([v["name"] for v in views if v["revoked_at"] is None])
    except NerveError as e:  # the ledger is down (Redis, the store): the list still shows
        return e.message
    by_name = {row["key"]: row for row in found}
    for view in views:
        row = by_name.get(view["name"])
        if row is None:
            continue
        budget = view["budget"]
        left = budget["usd"] - row["usd"] - row.get("held_usd", 0.0) if budget else None
        view["spend"] = {**row, "left_usd": max(0.0, left) if left is not None else None}
    return None


def access_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host, events, store = panel.host, panel.events, panel.keys

    def config_names() -> set[str]:
        return {k.name for k in host.config.server.api_keys}

    async def list_keys(request: Request) -> Response:
        views = key_views(host.config.server.api_keys, await store.all())
        source: SpendSource | None = getattr(host, "access", None)
        error = await _spend(source, views)
        return JSONResponse({"keys": views, "metered": source is not None, "spend_error": error})

    async def create(request: Request) -> Response:
        secret, record = new_key(await read_json(request), taken=config_names())
        await store.add(record)
        client = panel.client(request.scope)
        await events.record("KEY_CREATE", name=record.principal.name, client=client)
        return JSONResponse({"key": secret, "record": record.view()}, status_code=201)

    async def revoke(request: Request) -> Response:
        name = request.path_params["name"]
        await revoke_key(store, name, taken=config_names())
        await events.record("KEY_REVOKE", name=name, client=panel.client(request.scope))
        return JSONResponse({"revoked": name})

    return [
        ("/admin/api/access", list_keys, ["GET"]),
        ("/admin/api/access", create, ["POST"]),
        ("/admin/api/access/{name}/revoke", revoke, ["POST"]),
    ]
