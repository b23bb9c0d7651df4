"""Gateway statistics (SPEC GW-13): calls, tokens, cost, latency percentiles, Prometheus text.

The gateway calls `record()` once per upstream attempt, on the hot path, so it only adds numbers;
sorting happens when a snapshot is read. Series are kept overall and per route, provider,
"provider/model", (route, provider) and (route, provider, model). Latency percentiles come from a
ring buffer of the last 1024 latencies per series. Only answered calls are sampled: a refused
connection would flatter p50 and a timeout would swamp p95; failures still count as calls/errors.
A table holds at most 1000 series; names beyond that are counted under "(other)", so client-chosen
model names cannot grow memory without bound. With Redis (GW-19) the local Stats is a delta
buffer: `drain()` hands its counters over, and `from_counters()` views every replica's sum.
Each call also goes into `timeseries` (timeseries.py): the minutes the admin panel charts.
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from nerve.clock import Clock
from nerve.gateway.timeseries import TimeSeries

if TYPE_CHECKING:  # annotations only: this layer never reads config itself
    from nerve.config import Price

__all__ = ["Counters", "Series", "Stats", "Usage", "cost_of", "price_of"]

_RING = 1024
_MAX_SERIES = 1000
_OTHER = "(other)"
_QUANTILES = (0.5, 0.95, 0.99)
_BREAKER_GAUGE = {"closed": 0, "half_open": 1, "half-open": 1, "open": 2}
K = TypeVar("K")
_Extra = Mapping[str, Any] | None


def _count(value: Any) -> int:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return int(value) if ok and value > 0 else 0


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call, in OpenAI's terms."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # part of completion_tokens, as OpenAI counts them
    total_tokens: int = 0

    @classmethod
    def from_openai(cls, usage: Mapping[str, Any] | None) -> Usage | None:
        if not isinstance(usage, Mapping):
            return None
        prompt = _count(usage.get("prompt_tokens"))
        completion = _count(usage.get("completion_tokens"))
        details = usage.get("completion_tokens_details")
        reasoning = _count(details.get("reasoning_tokens")) if isinstance(details, Mapping) else 0
        total = _count(usage.get("total_tokens")) or prompt + completion
        return cls(prompt, completion, reasoning, total)


class Series:
    """One series' counters. INTS and FLOATS name the summable fields (for shipping them)."""

    __slots__ = ("calls", "completion", "cost", "errors", "fallbacks", "last_error", "lat_n",
                 "lat_sum", "prompt", "reasoning", "ring", "total")  # fmt: skip
    INTS = ("calls", "errors", "fallbacks", "lat_n", "prompt", "completion", "reasoning", "total")
    FLOATS = ("cost", "lat_sum")

    def __init__(self) -> None:
        self.calls = self.errors = self.fallbacks = self.lat_n = 0
        self.prompt = self.completion = self.reasoning = self.total = 0
        self.cost = self.lat_sum = 0.0
        self.last_error: str | None = None
        self.ring = array("d")

    def add(self, ok: bool, latency_s: float, usage: Usage | None, cost: float, fallback: bool,
            error: str | None) -> None:  # fmt: skip
        self.calls += 1
        self.fallbacks += fallback
        self.cost += cost
        if usage is not None:
            self.prompt += usage.prompt_tokens
            self.completion += usage.completion_tokens
            self.reasoning += usage.reasoning_tokens
            self.total += usage.total_tokens
        if not ok:
            self.errors += 1
            self.last_error = error
            return
        self.lat_n += 1
        self.lat_sum += latency_s
        if len(self.ring) < _RING:
            self.ring.append(latency_s)
        else:
            self.ring[(self.lat_n - 1) % _RING] = latency_s

    def merge(self, other: Series) -> None:
        """Add `other`'s counts; its samples go before ours, the ring keeps the last 1024."""
        for name in (*self.INTS, *self.FLOATS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.last_error = self.last_error or other.last_error
        ring = other.ring + self.ring
        self.ring = ring[-_RING:] if len(ring) > _RING else ring

    def quantiles(self) -> list[float | None]:
        """Nearest-rank quantiles of the ring, in seconds; None when nothing was sampled."""
        ordered, n = sorted(self.ring), len(self.ring)
        return [ordered[max(0, math.ceil(q * n) - 1)] if n else None for q in _QUANTILES]

    def latency_ms(self) -> dict[str, float | None]:
        ms = [None if v is None else round(v * 1000, 3) for v in self.quantiles()]
        return dict(zip(("p50", "p95", "p99"), ms, strict=True))

    def tokens(self) -> dict[str, int]:
        counts = (self.prompt, self.completion, self.reasoning, self.total)
        return dict(zip(("prompt", "completion", "reasoning", "total"), counts, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "errors": self.errors,
            "success_rate": round(1 - self.errors / self.calls, 4) if self.calls else None,
            "fallbacks": self.fallbacks,
            "tokens": self.tokens(),
            "cost_usd": self.cost,
            "cost_per_1k_tokens": self.cost / self.total * 1000 if self.total else None,
            "latency_ms": self.latency_ms(),
            "last_error": self.last_error,
        }


@dataclass(slots=True)
class Counters:
    """What a Stats counted, by table (all, route, provider, model, route_provider, target; keys
    are names or tuples of names, () for all) and named counts: rejections by reason, and the
    traffic path's events as `part:event` (`guard:blocked`): for shipping elsewhere."""

    tables: dict[str, dict[Any, Series]]
    rejections: dict[str, int]


def _at(table: dict[K, Series], key: K, other: K) -> Series:
    series = table.get(key)
    if series is None:  # a new name: past the cap it joins "(other)"
        series = table.setdefault(key if len(table) < _MAX_SERIES else other, Series())
    return series


def price_of(prices: Mapping[str, Price], provider: str, model: str) -> Price | None:
    """The price of `provider/model`: listed as the target, else as the bare model name."""
    price = prices.get(f"{provider}/{model}")
    return prices.get(model) if price is None else price


def cost_of(price: Price | None, usage: Usage | None) -> float:
    """USD for `usage` at `price` (per million tokens); 0 when either is unknown."""
    if price is None or usage is None:
        return 0.0
    return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6


class Stats:
    def __init__(
        self, *, prices: Mapping[str, Price] | None = None, clock: Clock = time.monotonic
    ) -> None:
        self._prices = dict(prices or {})
        self._clock = clock
        self._started = clock()
        # Minutes over time for the admin charts: on the wall clock, as Redis needs (state.py).
        self.timeseries = TimeSeries(clock=time.time if clock is time.monotonic else clock)
        self._clear()

    def set_prices(self, prices: Mapping[str, Price]) -> None:
        """Prices from a reloaded config; they apply to calls recorded from now on."""
        self._prices = dict(prices)

    @property
    def prices(self) -> Mapping[str, Price]:
        return self._prices

    @classmethod
    def from_counters(
        cls, counters: Counters, *, clock: Clock, started: float, since: float
    ) -> Stats:
        """A read-only view of counters gathered elsewhere (e.g. every replica's, from Redis)."""
        stats = cls(clock=clock)
        stats._started, stats._since = started, since
        stats.absorb(counters)
        return stats

    def drain(self) -> Counters:
        """Hand over everything counted so far and count from zero (a delta buffer's flush)."""
        counters = self.counters()
        self._empty()
        return counters

    def counters(self) -> Counters:
        return Counters(
            {
                "all": {(): self._all},
                "route": self._routes,
                "provider": self._providers,
                "model": self._models,
                "route_provider": self._route_providers,
                "target": self._targets,
                "key": self._keys,
                "user": self._users,
            },
            self._rejections,
        )

    def absorb(self, counters: Counters) -> None:
        """Add counters back in (a flush that failed), under the same caps as record()."""
        mine = self.counters().tables
        for name, table in counters.tables.items():
            for key, series in table.items():
                if name == "all":
                    self._all.merge(series)
                else:
                    other = _OTHER if isinstance(key, str) else (_OTHER,) * len(key)
                    _at(mine[name], key, other).merge(series)
        for reason, n in counters.rejections.items():
            self._rejections[reason] = self._rejections.get(reason, 0) + n

    def _clear(self) -> None:
        self._since = self._clock()
        self._empty()

    def _empty(self) -> None:
        self._all = Series()
        self._routes: dict[str, Series] = {}
        self._providers: dict[str, Series] = {}
        self._models: dict[str, Series] = {}
        self._route_providers: dict[tuple[str, str], Series] = {}
        self._targets: dict[tuple[str, str, str], Series] = {}
        self._keys: dict[str, Series] = {}  # by API key name (never the key)
        self._users: dict[str, Series] = {}  # by the request's `user` field
        self._rejections: dict[str, int] = {}

    def record(self, *, route: str, provider: str, model: str, ok: bool, latency_s: float,
               usage: Usage | None, fallback: bool, error: str | None = None,
               key: str | None = None, user: str | None = None) -> float:  # fmt: skip
        target = f"{provider}/{model}"
        cost = cost_of(price_of(self._prices, provider, model), usage)
        tokens = usage.total_tokens if usage is not None else 0
        self.timeseries.add(route, target, ok, latency_s, tokens, cost, fallback)  # the charts
        for series in (
            self._all,
            _at(self._routes, route, _OTHER),
            _at(self._providers, provider, _OTHER),
            _at(self._models, target, _OTHER),
            _at(self._route_providers, (route, provider), (_OTHER, _OTHER)),
            _at(self._targets, (route, provider, model), (_OTHER, _OTHER, _OTHER)),
        ):
            series.add(ok, latency_s, usage, cost, fallback, error)
        if key is not None:
            _at(self._keys, key, _OTHER).add(ok, latency_s, usage, cost, fallback, error)
        if user is not None:
            _at(self._users, user, _OTHER).add(ok, latency_s, usage, cost, fallback, error)
        return cost

    def record_rejection(self, reason: str) -> None:
        self._rejections[reason] = self._rejections.get(reason, 0) + 1

    def record_traffic(self, part: str, event: str, n: int = 1) -> None:
        """A traffic-path event (`guard:blocked`), kept beside the rejections: replicas share it."""
        name = f"{part}:{event}"
        self._rejections[name] = self._rejections.get(name, 0) + n

    def _named(self) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """The named counts split: rejections by reason, and traffic events by part."""
        rejections: dict[str, int] = {}
        traffic: dict[str, dict[str, int]] = {}
        for name, n in self._rejections.items():
            part, sep, event = name.partition(":")
            if sep:
                traffic.setdefault(part, {})[event] = n
            else:
                rejections[name] = n
        return rejections, traffic

    def snapshot(self, *, breakers: _Extra = None, cooldowns: _Extra = None) -> dict[str, Any]:
        now, s = self._clock(), self._all
        rejections, traffic = self._named()
        return {
            "uptime_s": round(now - self._started, 3),
            "since_reset_s": round(now - self._since, 3),
            "calls": s.calls,
            "errors": s.errors,
            "fallbacks": s.fallbacks,
            "fallback_rate": round(s.fallbacks / s.calls, 4) if s.calls else 0.0,
            "tokens": s.tokens(),
            "by_route": {k: v.to_dict() for k, v in self._routes.items()},
            "by_provider": {k: v.to_dict() for k, v in self._providers.items()},
            "by_model": {k: v.to_dict() for k, v in self._models.items()},
            "by_key": {k: v.to_dict() for k, v in self._keys.items()},
            "by_user": {k: v.to_dict() for k, v in self._users.items()},
            "latency_ms": s.latency_ms(),
            "cost_usd": s.cost,
            "rejections": rejections,
            "traffic": traffic,  # what the guard and memory did on the path (SPEC TP)
            "breakers": dict(breakers) if breakers is not None else None,
            "cooldowns": dict(cooldowns) if cooldowns is not None else None,
        }

    def reset(self, *, breakers: _Extra = None, cooldowns: _Extra = None) -> dict[str, Any]:
        """Return the snapshot being cleared, then count from zero (uptime keeps running)."""
        previous = self.snapshot(breakers=breakers, cooldowns=cooldowns)
        self._clear()
        return previous

    def cost_performance(self) -> dict[str, Any]:
        routes: dict[str, Any] = {
            k: {**v.to_dict(), "providers": {}} for k, v in self._routes.items()
        }
        for (route, provider), series in self._route_providers.items():
            entry = routes.setdefault(route, {"providers": {}})
            entry["providers"][provider] = series.to_dict()
        return {"since_reset_s": round(self._clock() - self._since, 3), "routes": routes}

    def prometheus(self, *, breakers: Mapping[str, str] | None = None) -> str:
        """Prometheus text exposition format 0.0.4. Counters restart from 0 after reset()."""
        lines: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            lines.extend((f"# HELP {name} {text}", f"# TYPE {name} {kind}"))

        def sample(name: str, value: float, **labels: str) -> None:
            lines.append(f"{name}{_labels(labels)} {_number(value)}")

        family("nerve_requests_total", "counter", "Upstream calls by outcome.")
        for (route, provider, model), s in self._targets.items():
            for outcome, n in (("ok", s.calls - s.errors), ("error", s.errors)):
                labels = {"route": route, "provider": provider, "model": model, "outcome": outcome}
                sample("nerve_requests_total", n, **labels)
        family("nerve_tokens_total", "counter", "Tokens by kind; reasoning is part of completion.")
        for (route, provider), s in self._route_providers.items():
            for kind, n in (("prompt", s.prompt), ("completion", s.completion)):
                sample("nerve_tokens_total", n, route=route, provider=provider, kind=kind)
            sample(
                "nerve_tokens_total", s.reasoning, route=route, provider=provider, kind="reasoning"
            )
        family("nerve_cost_usd_total", "counter", "Estimated cost in US dollars.")
        for (route, provider), s in self._route_providers.items():
            sample("nerve_cost_usd_total", s.cost, route=route, provider=provider)
        name = "nerve_request_latency_seconds"
        family(name, "summary", f"Latency of answered calls; quantiles over the last {_RING}.")
        for route, s in self._routes.items():
            for q, v in zip(_QUANTILES, s.quantiles(), strict=True):
                sample(name, math.nan if v is None else v, route=route, quantile=str(q))
            sample(f"{name}_sum", s.lat_sum, route=route)
            sample(f"{name}_count", s.lat_n, route=route)
        family("nerve_fallbacks_total", "counter", "Calls served by a fallback target.")
        for route, s in self._routes.items():
            sample("nerve_fallbacks_total", s.fallbacks, route=route)
        rejections, traffic = self._named()
        family("nerve_rejections_total", "counter", "Requests refused before routing, by reason.")
        for reason, n in rejections.items():
            sample("nerve_rejections_total", n, reason=reason)
        family("nerve_traffic_events_total", "counter", "What the guard and memory did.")
        for part, events in traffic.items():
            for event, n in events.items():
                sample("nerve_traffic_events_total", n, part=part, event=event)
        family("nerve_breaker_state", "gauge", "Circuit breaker: 0 closed, 1 half-open, 2 open.")
        for key, state in (breakers or {}).items():
            if state in _BREAKER_GAUGE:
                sample("nerve_breaker_state", _BREAKER_GAUGE[state], key=key)
        family("nerve_uptime_seconds", "gauge", "Seconds since the gateway started.")
        sample("nerve_uptime_seconds", self._clock() - self._started)
        return "\n".join(lines) + "\n"


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)
