"""The exact-match response cache (SPEC OB-2): a repeated request answered without a model call.

Per route, and per configured key (its `cache` overrides the route's; a client naming
provider/model gets the `default` route's): `cache: {ttl_seconds, any_temperature,
max_entry_bytes}`. An endpoint asks `ResponseCache.lookup(...)` once the request is planned and
its memory recalled, and before admission bills anything:

- The key is a SHA-256 over the tenant (the API key's name, managed or from the config; without
  keys every caller is the one local user), the endpoint (a chat completion, a Messages and a
  Responses answer are different answers), the plan's first callable target (provider/model),
  the stream flag, the `anthropic-version`/`anthropic-beta` headers a passthrough forwards, and
  the body without `stream`, canonical (keys sorted). The body is taken after memory recall:
  the answer depends on the recalled block, so one user's recall never answers another's.
- Skipped (`x-nerve-cache: skip`, `x-nerve-cache-reason`): a sampled request, i.e. one whose
  `temperature` is not 0 — a missing temperature is the provider's default (1), so it is
  sampled too — unless `any_temperature` (embeddings are never sampled); `n` > 1 at temperature
  0 is kept like any body. `Cache-Control: no-cache` skips the lookup and still writes;
  `no-store` looks up but never writes (HTTP's meaning: do not store this exchange; serving a
  stored answer stores nothing). A cache that cannot be reached: skip, reason `unavailable`.
- Kept: a whole answer or a stream that ended cleanly (its final event sent, no error, the
  client still there), served by the target the key names (not a fallback), within
  `max_entry_bytes`, with no tool call (chat `tool_calls`, Messages `tool_use`, Responses
  `*_call` items; read from the upstream's frames, before the guard, so a call the guard
  blocked or flagged counts too). It is written before the answer's last byte goes out, so a
  client that got an answer finds it on its next request.
- A hit (`x-nerve-cache: hit`, `x-nerve-cache-age`) is the answer as it went out the first
  time: the same body, or the same SSE events (the frames as forwarded, nerve's keep-alives
  left out) with the dialect's SSE headers; the usage in it is the original's. It runs through
  the traffic path like any answer (memory stores the exchange; no tool call to judge), takes
  the request-rate limits (`limits.rate`, a key's `rpm` and `max_parallel`: they protect nerve
  and bound how often a key may ask), and is never billed: no tpm, no budget. `/stats` "cache"
  counts hits, misses, skips, what was stored or not and why, bad entries, backend errors, and
  the tokens and cost (at the configured prices) hits saved.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from nerve.asgi import encode_headers, send_json
from nerve.gateway.cache_entry import (
    BadEntry,
    Entry,
    Kind,
    calls_tools,
    decode,
    encode,
    frame_calls_tools,
)
from nerve.gateway.cache_store import CacheDown, CacheStore
from nerve.gateway.dialects.base import STREAM_ENDS
from nerve.gateway.providers.anthropic import CLIENT_HEADERS
from nerve.gateway.router import DEFAULT_ROUTE
from nerve.gateway.stats import Stats, Usage, cost_of, price_of

if TYPE_CHECKING:
    from nerve.access.principal import Principal
    from nerve.config import CacheConfig, Config
    from nerve.gateway.core import Plan, Served
    from nerve.gateway.dialects.base import Dialect, Wire
    from nerve.gateway.traffic import Passage

__all__ = ["CACHE_HEADER", "Lookup", "ResponseCache", "StreamTap", "cache_key", "cache_view"]

log = logging.getLogger("nerve.gateway")
CACHE_HEADER = "x-nerve-cache"
_UNSAMPLED = frozenset({"embeddings"})  # endpoints whose answers no temperature varies


class ResponseCache:
    """The cache settings of one config (a reload builds another) over the process's store."""

    def __init__(self, config: Config, store: CacheStore, stats: Stats) -> None:
        self.store = store
        self.stats = stats
        self._routes = {r.name: r.cache for r in config.routes}
        # A key's own settings (config keys only: managed keys carry no traffic policy).
        self._keys = {k.name: k.cache for k in config.server.api_keys if k.cache}

    @property
    def configured(self) -> bool:
        """Whether any route or key has a cache (else the endpoints skip it for free)."""
        return bool(self._keys) or any(c is not None for c in self._routes.values())

    def lookup(
        self, dialect: Dialect, plan: Plan, principal: Principal, headers: Mapping[str, str],
        body: Mapping[str, Any], target: str | None,
    ) -> Lookup | None:  # fmt: skip
        """This request's way through the cache; None when its route and key have none.
        `target`: the plan's first callable candidate (`Gateway.first_callable`)."""
        route = plan.route if plan.route in self._routes else DEFAULT_ROUTE
        cfg = self._routes.get(route)
        if not principal.managed:
            cfg = self._keys.get(principal.name, cfg)
        if cfg is None:
            return None
        stream = bool(body.get("stream"))
        lookup = Lookup(self, cfg, dialect.wire, stream, target or "")
        said = _directives(headers.get("cache-control", ""))
        if not cfg.any_temperature and dialect.name not in _UNSAMPLED and not _greedy(body):
            return lookup.skip("temperature", writes=False)
        if target is None:
            return lookup.skip("no_model", writes=False)
        tenant = f"{'managed' if principal.managed else 'config'}:{principal.name}"
        try:
            lookup.key = cache_key(tenant, dialect.name, target, stream, body, headers)
        except TypeError:  # a number JSON allows and orjson cannot write back (over 64 bits)
            return lookup.skip("body", writes=False)
        lookup.writes = "no-store" not in said
        if "no-cache" in said:
            return lookup.skip("no-cache", writes=lookup.writes)
        lookup.reads = True
        return lookup

    def count(self, event: str, n: int = 1) -> None:
        self.stats.record_traffic("cache", event, n)


class Lookup:
    """One request's way through the cache: `fetch`, then `keep` (a whole answer), `tap` (a
    stream's frames) or `replay` (a hit); `headers` says what happened."""

    __slots__ = ("cache", "cfg", "key", "reads", "reason", "state", "stream", "target", "wire",
                 "writes")  # fmt: skip

    def __init__(
        self, cache: ResponseCache, cfg: CacheConfig, wire: Wire | None, stream: bool, target: str
    ) -> None:
        self.cache = cache
        self.cfg = cfg
        self.wire: Wire | None = wire
        self.stream = stream
        self.target = target
        self.key = ""
        self.reads = self.writes = False
        self.state = "miss"
        self.reason: str | None = None

    def skip(self, reason: str, *, writes: bool) -> Lookup:
        self.state, self.reason, self.writes = "skip", reason, writes
        self.cache.count("skip")
        return self

    def headers(self) -> dict[str, str]:
        if self.reason is None or self.state != "skip":
            return {CACHE_HEADER: self.state}
        return {CACHE_HEADER: self.state, "x-nerve-cache-reason": self.reason}

    async def fetch(self) -> Entry | None:
        """The stored answer (a hit), or None (a miss, or a skip)."""
        if not self.reads:
            return None
        cache = self.cache
        try:
            raw = await cache.store.get(self.key)
        except CacheDown:
            self.skip("unavailable", writes=False)
            return None
        entry = None if raw is None else self._decoded(raw)
        if entry is None:
            cache.count("miss")
            return None
        self.state = "hit"
        cache.count("hit")
        usage = entry.usage
        if usage is not None:
            cache.count("tokens_saved", usage.total_tokens)
            provider, _, model = self.target.partition("/")
            saved = cost_of(price_of(cache.stats.prices, provider, model), usage)
            cache.count("saved_usd_nano", round(saved * 1e9))  # counters are whole numbers
        return entry

    def _decoded(self, raw: bytes) -> Entry | None:
        store = self.cache.store
        try:
            entry = decode(self.key, raw, now=store.clock(), max_bytes=self.cfg.max_entry_bytes)
            if (entry.kind == "sse") != self.stream:
                raise BadEntry(f"a {entry.kind} entry for a request with stream {self.stream}")
        except BadEntry as e:  # never served; the answer of this miss overwrites it
            log.warning("CACHE BAD entry %s… in %s ignored: %s", self.key[:12],
                        store.backend.where, e)  # fmt: skip
            self.cache.count("bad_entries")
            return None
        return entry

    async def keep(
        self, served: Served, raw: bytes, answer: bytes, usage: Usage | None,
        guarded: Mapping[str, str],
    ) -> None:  # fmt: skip
        """A whole answer: `raw` as the upstream gave it, `answer` as the client gets it."""
        if not self.writes:
            return
        why = self._unfit(served) or ("guarded" if guarded else None)
        if why is None and calls_tools(self.wire, raw):
            why = "tool_calls"
        await self._put("json", answer, served, usage, why)

    def tap(self) -> StreamTap | None:
        """What reads a stream's frames for the cache; None when it will not keep them."""
        return StreamTap(self) if self.writes and self.stream else None

    def _unfit(self, served: Served) -> str | None:
        return None if str(served.target) == self.target else "fallback"

    async def _put(
        self, kind: Kind, payload: bytes, served: Served, usage: Usage | None, why: str | None
    ) -> None:
        if why is None and len(payload) > self.cfg.max_entry_bytes:
            why = "too_large"
        if why is not None:
            self.cache.count(f"not_stored:{why}")
            return
        store = self.cache.store
        now = store.clock()
        entry = Entry(kind, payload, served.headers(), usage, now, now + self.cfg.ttl_seconds)
        try:
            await store.put(self.key, encode(self.key, entry), entry.expires)
        except CacheDown:
            return  # logged and counted by the store; the answer goes out all the same
        self.cache.count("stored")

    async def replay(
        self, entry: Entry, send: Any, passage: Passage | None, sse_headers: list[Any]
    ) -> None:
        """Send a hit: the stored answer through the traffic path, with this request's headers."""
        age = max(0, int(self.cache.store.clock() - entry.created))
        headers = {**entry.headers, **self.headers(), "x-nerve-cache-age": str(age)}
        if passage is not None:
            headers.update(passage.headers())
        if entry.kind == "json":
            body = entry.payload
            if passage is not None:
                body, guarded = await passage.answer(body)
                headers.update(guarded)
            await send_json(send, 200, body, headers)
            return
        start = {"type": "http.response.start", "status": 200,
                 "headers": sse_headers + encode_headers(headers)}  # fmt: skip
        await send(start)
        chunks = [entry.payload]
        if passage is not None:
            chunks = [*await passage.frames(entry.payload), *passage.end(None)]
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class StreamTap:
    """A stream's frames on their way: `upstream(frame)` as the provider sent each (for tool
    calls), `sent(frame)` as the client got it (what a hit replays), `done` once it ended."""

    __slots__ = ("lookup", "over", "parts", "size", "tools")

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.parts: list[bytes] = []
        self.size = 0
        self.tools = self.over = False

    def upstream(self, frame: bytes) -> None:
        if not self.tools and frame_calls_tools(self.lookup.wire, frame):
            self.tools = True

    def sent(self, frame: bytes) -> None:
        if self.over:
            return
        self.size += len(frame)
        if self.size > self.lookup.cfg.max_entry_bytes:
            self.over, self.parts = True, []  # it will not be kept: hold nothing more
        else:
            self.parts.append(frame)

    async def done(self, served: Served, usage: Usage | None) -> None:
        """The stream ended without an error and the client is still there: keep it if fit."""
        lookup = self.lookup
        why = lookup._unfit(served)
        if why is None:
            if self.tools:
                why = "tool_calls"
            elif self.over:
                why = "too_large"
            elif not self.parts or STREAM_ENDS[lookup.wire] not in self.parts[-1]:
                why = "unfinished"  # no final event: not an answer to replay
        await lookup._put("sse", b"".join(self.parts), served, usage, why)


def cache_key(
    tenant: str, endpoint: str, target: str, stream: bool, body: Mapping[str, Any],
    headers: Mapping[str, str],
) -> str:  # fmt: skip
    material = {
        "v": 1,
        "tenant": tenant,
        "endpoint": endpoint,
        "target": target,
        "stream": stream,
        "headers": {name: headers[name] for name in CLIENT_HEADERS if name in headers},
        "body": {k: v for k, v in body.items() if k != "stream"},
    }
    return hashlib.sha256(orjson.dumps(material, option=orjson.OPT_SORT_KEYS)).hexdigest()


def cache_view(events: Mapping[str, int]) -> dict[str, Any]:
    """`/stats` "cache": the traffic path's cache counters (every replica's with Redis)."""
    hits, misses = events.get("hit", 0), events.get("miss", 0)
    prefix = "not_stored:"
    return {
        "hits": hits,
        "misses": misses,
        "skips": events.get("skip", 0),
        "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None,
        "stored": events.get("stored", 0),
        "not_stored": {k[len(prefix) :]: n for k, n in events.items() if k.startswith(prefix)},
        "bad_entries": events.get("bad_entries", 0),
        "errors": events.get("errors", 0),
        "tokens_saved": events.get("tokens_saved", 0),
        "cost_saved_usd": round(events.get("saved_usd_nano", 0) / 1e9, 9),
    }


def _greedy(body: Mapping[str, Any]) -> bool:
    """Whether the request asks for the one most likely answer (temperature 0)."""
    t = body.get("temperature")
    return isinstance(t, int | float) and not isinstance(t, bool) and t == 0


def _directives(value: str) -> set[str]:
    """Cache-Control's directives, lower-cased, without their arguments."""
    return {part.split("=", 1)[0].strip().lower() for part in value.split(",")} if value else set()
