"""Fan-out over the gateway (SPEC GW-11): one request to many models, perspectives + synthesis,
and single-route dispatch.

Everything goes through `Gateway.complete`, so each call gets the cascade, fallbacks, breakers
and stats of any other request; a failing model is reported in its own slot, never failing the
others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import orjson

from nerve.errors import NerveError
from nerve.gateway.core import Gateway, Served
from nerve.gateway.providers import Completion

__all__ = ["DEFAULT_PERSONAS", "analysis", "parallel", "task"]

DEFAULT_PERSONAS = (
    "a pragmatic engineer who looks for the simplest thing that works",
    "a sceptical reviewer who looks for risks, failure modes and missing evidence",
    "a product thinker who looks at what the user actually needs",
)


async def _one(gateway: Gateway, body: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        completion, served = await gateway.complete(body)
    except NerveError as e:
        return {
            "model": body["model"], "ok": False, "status": e.status, "error": e.message,
            "latency_ms": round((time.perf_counter() - started) * 1000, 2),
        }  # fmt: skip
    return _answer(body["model"], completion, served, started)


def _answer(model: str, completion: Completion, served: Served, started: float) -> dict[str, Any]:
    answer = orjson.loads(completion.body)
    message = (answer.get("choices") or [{}])[0].get("message") or {}
    return {
        "model": model, "ok": True, "route": served.route,
        "provider": served.target.provider, "served_by": served.target.model,
        "fallback": served.fallback, "content": message.get("content"),
        "tool_calls": message.get("tool_calls"), "usage": answer.get("usage"),
        "latency_ms": round((time.perf_counter() - started) * 1000, 2),
    }  # fmt: skip


async def parallel(gateway: Gateway, body: dict[str, Any], models: Sequence[str]) -> dict[str, Any]:
    """`body` without `model`, sent to every model at once; results in the order asked."""
    results = await asyncio.gather(*(_one(gateway, {**body, "model": m}) for m in models))
    ok = sum(r["ok"] for r in results)
    return {"results": results, "succeeded": ok, "failed": len(results) - ok}


async def task(gateway: Gateway, body: dict[str, Any]) -> dict[str, Any]:
    """Dispatch to one route (or model) and return the answer with who served it; a failure is
    the gateway's own error (404 unknown route, 502 all candidates failed...)."""
    started = time.perf_counter()
    completion, served = await gateway.complete(body)
    return _answer(body["model"], completion, served, started)


async def analysis(
    gateway: Gateway,
    messages: list[dict[str, Any]],
    *,
    model: str = "auto",
    personas: Sequence[str] = DEFAULT_PERSONAS,
) -> dict[str, Any]:
    """Each persona answers concurrently, then one call synthesises what they said."""
    views = await asyncio.gather(*(
        _one(gateway, {"model": model, "messages": [
            {"role": "system", "content": f"Answer as {persona}. Be concise and concrete."},
            *messages,
        ]}) for persona in personas
    ))  # fmt: skip
    heard = [(p, v["content"]) for p, v in zip(personas, views, strict=True) if v["ok"]]
    if not heard:
        failed = NerveError("every perspective failed: " + "; ".join(v["error"] for v in views),
                            code="analysis_failed")  # fmt: skip
        failed.status = views[0]["status"]  # what went wrong (a 4xx, 502, 504), not a 500
        failed.type = "upstream_error" if failed.status >= 500 else "invalid_request_error"
        raise failed
    brief = "\n\n".join(f"Perspective of {p}:\n{c}" for p, c in heard)
    synthesis = await _one(gateway, {"model": model, "messages": [
        {"role": "system", "content": "Combine these perspectives into one balanced answer: "
                                      "where they agree, where they differ, what to do."},
        *messages,
        {"role": "user", "content": brief},
    ]})  # fmt: skip
    return {
        "perspectives": [{"persona": p, **v} for p, v in zip(personas, views, strict=True)],
        "synthesis": synthesis,
    }
