"""MCP tools over the gateway (SPEC PR-3, PR-5): route_model and reason.

`route_model` explains a routing decision without calling a model: the route, the layer of the
cascade that chose it (rules, language, task, semantic, context, default) and why, and the
candidates in the order the gateway would try them, each with whether it can be tried now;
`private: true` explains a request sent with `x-nerve-private: true` (local models only).
`reason` asks the route named "reasoning" (else the cascade, "auto") through `Gateway.complete`,
so it gets the fallbacks, breakers and stats of any other call, and reports its reasoning tokens.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from nerve.errors import RequestError, UpstreamError
from nerve.gateway.core import Plan
from nerve.gateway.request import validate_chat_request
from nerve.gateway.stats import Usage

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from nerve.gateway.app import GatewayState
    from nerve.mcp.host import Host

__all__ = ["REASONING_ROUTE", "ReasonOut", "RouteModelOut", "register"]

REASONING_ROUTE = "reasoning"
Status = Literal["ready", "no_api_key", "circuit_open", "cooling_down"]


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # tool_calls, name...: passed through as sent

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class CandidateOut(BaseModel):
    provider: str
    model: str
    status: Status
    detail: str | None = None


class RouteModelOut(BaseModel):
    route: str
    provider: str | None = Field(description="who would be asked first; null if none can be")
    model: str | None
    layer: str = Field(
        description="rules, language, task, semantic, context, default, oversize, or named"
    )
    score: float | None = Field(
        description="1.0 for a rule or task, detector confidence for language, cosine for semantic"
    )
    reason: str
    candidates: list[CandidateOut] = Field(description="in the order they would be tried")


class UsageOut(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = Field(0, description="part of completion_tokens")
    total_tokens: int = 0


class ReasonOut(BaseModel):
    answer: str
    reasoning: str | None = Field(description="the model's visible reasoning, when it sends it")
    route: str
    provider: str
    model: str
    fallback: bool = Field(description="true when a fallback candidate answered")
    reasoning_tokens: int
    usage: UsageOut


def _why(plan: Plan, named: str) -> tuple[str, float | None, str]:
    decision = plan.decision
    if decision is None:
        what = "a route" if not plan.named else "a provider/model"
        return "named", None, f"the request named {what}: {named}"
    return decision.layer, decision.score, f"{decision.layer}: {decision.detail}"


async def _candidates(state: GatewayState, plan: Plan) -> list[CandidateOut]:
    gateway = state.gateway
    breakers = await state.breakers.view()
    out = []
    for target in plan.targets:
        key = str(target)
        provider = gateway.providers.get(target.provider)
        cooling = await state.cooldowns.remaining(key)
        status: Status = "ready"
        detail = None
        if provider is None or provider.missing_key:
            status, detail = "no_api_key", f"provider {target.provider} has no API key"
        elif cooling > 0:
            status, detail = "cooling_down", f"{cooling:.0f}s left after a 429"
        elif breakers.get(key, {}).get("state") == "open":
            status, detail = "circuit_open", "its circuit breaker is open"
        out.append(CandidateOut(provider=target.provider, model=target.model, status=status,
                                detail=detail))  # fmt: skip
    return out


def register(server: MCPServer[Any], app: Host) -> None:
    @server.tool()
    async def route_model(
        text: Annotated[str | None, Field(description="a user message; or give messages")] = None,
        messages: list[Message] | None = None,
        model: Annotated[str, Field(description="auto, a route name or provider/model")] = "auto",
        private: Annotated[
            bool, Field(description="as with the header x-nerve-private: true: local models only")
        ] = False,
    ) -> RouteModelOut:
        """Which route and model nerve's gateway would choose for a chat request, and why
        (the cascade's layer and evidence), with every candidate in order. No model is called."""
        if (text is None) == (messages is None):
            raise RequestError("give either 'text' or 'messages'", param="text")
        chat = [{"role": "user", "content": text}] if text is not None else [
            m.model_dump(exclude_none=True) for m in messages or []
        ]  # fmt: skip
        body = {"model": model, "messages": chat}
        validate_chat_request(body)
        plan = app.gateway.gateway.plan(body, private=private)
        candidates = await _candidates(app.gateway, plan)
        first = next((c for c in candidates if c.status == "ready"), None)
        layer, score, reason = _why(plan, model)
        if first is None:
            reason += "; no candidate can be tried now"
        return RouteModelOut(
            route=plan.route, provider=first.provider if first else None,
            model=first.model if first else None, layer=layer, score=score, reason=reason,
            candidates=candidates,
        )  # fmt: skip

    @server.tool()
    async def reason(
        prompt: Annotated[str, Field(min_length=1, max_length=1_000_000)],
        system: str | None = None,
        max_tokens: Annotated[int | None, Field(ge=1, le=1_000_000)] = None,
        reasoning_effort: Literal["low", "medium", "high"] | None = None,
    ) -> ReasonOut:
        """Ask the reasoning route (the route named "reasoning" if configured, else the
        cascade) and get the answer with its reasoning tokens counted."""
        gateway = app.gateway.gateway
        route = REASONING_ROUTE if REASONING_ROUTE in gateway.routes else "auto"
        chat = [{"role": "system", "content": system}] if system else []
        body: dict[str, Any] = {
            "model": route,
            "messages": [*chat, {"role": "user", "content": prompt}],
        }
        if max_tokens is not None:
            body["max_completion_tokens"] = max_tokens
        if reasoning_effort is not None:
            body["reasoning_effort"] = reasoning_effort
        completion, served = await gateway.complete(body)
        try:
            message = orjson.loads(completion.body)["choices"][0]["message"]
        except (orjson.JSONDecodeError, LookupError, TypeError):
            raise UpstreamError("the answer has no message", code="upstream_bad_json") from None
        thoughts = message.get("reasoning_content") or message.get("reasoning")
        usage = completion.usage or Usage()
        return ReasonOut(
            answer=message.get("content") or "",
            reasoning=thoughts if isinstance(thoughts, str) else None,
            route=served.route, provider=served.target.provider, model=served.target.model,
            fallback=served.fallback, reasoning_tokens=usage.reasoning_tokens,
            usage=UsageOut(**asdict(usage)),
        )  # fmt: skip
