"""Active health probes (SPEC GW-14): every configured target, every `probes.interval_seconds`.

A probe is the cheapest call a provider answers: its model list. A success may close the
target's half-open breaker but does not clear a closed one's consecutive call failures (a
provider whose `/models` answers while its chat fails must still be cut off); a failure counts
against it. Targets whose provider has no key, or whose breaker is open, are not called.
Results appear in /stats and /health.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from nerve.config import Target
from nerve.errors import UpstreamError
from nerve.gateway.core import Gateway

__all__ = ["Prober"]

log = logging.getLogger("nerve.gateway")


class Prober:
    def __init__(self, gateway: Gateway, targets: Sequence[Target], *, interval: float) -> None:
        self.gateway = gateway
        self.targets = list(dict.fromkeys(targets))  # each target once, in config order
        self.interval = interval
        self.results: dict[str, dict[str, Any]] = {}

    async def probe_once(self) -> dict[str, dict[str, Any]]:
        outcomes = await asyncio.gather(*(self._probe(t) for t in self.targets))
        self.results = dict(zip((str(t) for t in self.targets), outcomes, strict=True))
        return self.results

    async def run(self) -> None:
        """Probe every `interval` seconds, the first time one interval after start."""
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.probe_once()
            except Exception:  # a bug here must not stop future probes
                log.exception("health probes failed")

    async def _probe(self, target: Target) -> dict[str, Any]:
        key = str(target)
        provider = self.gateway.providers[target.provider]
        at = time.time()
        if provider.missing_key:
            return {"ok": None, "skipped": "no API key", "at": at}
        if not await self.gateway.breakers.allow(key):
            return {"ok": None, "skipped": "circuit open", "at": at}
        started = time.perf_counter()
        try:
            await provider.probe()
        except UpstreamError as e:
            await self.gateway.breakers.record_failure(key)
            return {"ok": False, "error": e.message, "at": at,
                    "latency_ms": round((time.perf_counter() - started) * 1000, 2)}  # fmt: skip
        except BaseException:
            await self.gateway.breakers.release(key)
            raise
        await self.gateway.breakers.record_success(key, probe=True)
        return {"ok": True, "at": at,
                "latency_ms": round((time.perf_counter() - started) * 1000, 2)}  # fmt: skip
