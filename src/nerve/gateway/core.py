"""The gateway's Python API: plan a request, then walk its candidates until one answers.

Everything that reaches a model goes through `Gateway.complete` or `Gateway.streaming` (`async
with gateway.streaming(body) as held:` forwards `held.stream` and reports `held.end(error)`;
leaving the block finishes the stream once, whatever happened): the HTTP endpoint, the intent
LLM, the assistant and the MCP `reason` tool. A plan is the route and its ordered candidates
(the route's model, then its fallbacks). A candidate is skipped without a network call when its
provider has no key, it is cooling down after a 429, or its breaker is open; a retryable
upstream failure moves on to the next one.

Every recorded call becomes an `Outcome` handed to `Gateway.observers` (GW-12); the gateway's
`Learner` is one of them and, when `learning.enabled`, reorders a route's candidates in `plan`.
`fallback` (x-nerve-fallback) means served by other than the plan's first candidate: with
learning on, a configured fallback the learner put first is not a fallback. Without learning,
equal candidates of a tag target take turns being first (router/targets.py).

A private plan (`plan(..., private=True)`: the client sent `x-nerve-private: true`) keeps only
candidates on `local: true` providers; `auto` goes to the private route, and a named route or
model with no local candidate is refused with a 403 rather than sent elsewhere (SPEC TP-3).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any, TypeVar

import orjson

from nerve.access.principal import LOCAL, Principal
from nerve.config import Config, RouteConfig, Target
from nerve.errors import (
    AllCandidatesFailed,
    Forbidden,
    NotFound,
    UpstreamError,
    UpstreamStatus,
    UpstreamTimeout,
)
from nerve.gateway.learning.learner import Learner
from nerve.gateway.outcome import Outcome
from nerve.gateway.plan import EXPLICIT, Gate, Plan, Served, Streaming, header_value
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.request import validate_chat_request
from nerve.gateway.resilience import BreakersSeam, CooldownsSeam
from nerve.gateway.router import Rotation, Router
from nerve.gateway.router.understand import PRIVATE_HEADER, wants_private
from nerve.gateway.stats import Stats, Usage
from nerve.telemetry import active

__all__ = [
    "EXPLICIT",
    "Gate",
    "Gateway",
    "Plan",
    "Served",
    "Streaming",
    "header_value",
    "wants_private",
]

log = logging.getLogger("nerve.gateway")
T = TypeVar("T")
Call = Callable[[Provider, str], Awaitable[T]]  # ask one candidate: its provider, its model


class Gateway:
    def __init__(
        self,
        config: Config,
        providers: Mapping[str, Provider],
        *,
        breakers: BreakersSeam,
        cooldowns: CooldownsSeam,
        stats: Stats,
        learner: Learner | None = None,
    ) -> None:
        self.config = config
        self.providers = dict(providers)
        self.breakers = breakers
        self.cooldowns = cooldowns
        self.stats = stats
        self.routes: dict[str, RouteConfig] = {r.name: r for r in config.routes}
        self.router = Router(config.routes, max_classify_chars=config.limits.max_classify_chars)
        self._targets = {r.name: tuple(r.targets) for r in config.routes}  # tags expanded
        self.rotation = Rotation(config.routes)
        self._local = {p.name for p in config.providers if p.local}
        if learner is None:
            learner = Learner(config.learning, config.routes)
        else:  # handed over by a reload: keep what it learnt about candidates that remain
            learner.configure(config.learning, config.routes)
        self.learner = learner
        self.observers: list[Callable[[Outcome], None]] = [learner.observe]
        for provider in self.providers.values():
            if provider.missing_key:
                log.warning("provider %s has no API key (%s): its models will be skipped",
                            provider.name, provider.config.missing_key_why)  # fmt: skip

    def plan(
        self, body: Mapping[str, Any], principal: Principal = LOCAL, *, private: bool = False
    ) -> Plan:
        """Resolve `model` of a validated body: "auto", a route name, or "provider/model",
        within what the caller's key allows (403 naming what it does not); `private`: local
        providers only (403 when none of the plan's candidates is local)."""
        plan = self._resolve(body, principal, private)
        decided = plan.decision
        if private:
            plan = self._local_only(plan, f"{PRIVATE_HEADER}: true")
        elif decided is not None and self.routes[decided.route].private:  # and the key said no
            plan = self._local_only(plan, decided.detail.replace("private: ", "", 1))
        allowed = plan.targets
        if principal.models is not None:
            allowed = tuple(t for t in plan.targets if principal.allows_target(str(t)))
            if not allowed:
                raise Forbidden(
                    f"key {principal.name!r} may not use {', '.join(map(str, plan.targets))} "
                    f"(allowed models: {', '.join(principal.models)})",
                    code="model_not_allowed",
                )
        user = body.get("user")
        user = user[:200] if isinstance(user, str) and user else None
        if principal.users is not None:  # spend is counted for the key's users only
            user = principal.user_for(user, "")
        key = principal.name if principal.client.startswith("key:") else None
        return replace(plan, targets=allowed, key=key, user=user)

    def resolve_alias(self, model: str) -> str:
        """`model` itself if it is auto, a route or provider/model; else what the first
        matching `model_aliases` glob names (clients' own names: `claude-*`, `gpt-5-codex`)."""
        if model == "auto" or model in self._targets:
            return model
        provider, _, name = model.partition("/")
        if name and provider in self.providers:
            return model
        for glob, ref in self.config.model_aliases.items():
            if fnmatchcase(model, glob):
                return ref
        return model

    def may_turn_private(self, plan: Plan, private: bool) -> bool:
        """Whether text added to the request (recalled memory) could send `plan` private: it was
        routed by `auto`, not to a private route, and a private route looks for personal data."""
        decided = plan.decision is not None and not self.routes[plan.route].private
        return decided and not private and bool(self.router.when.private)

    def _local_only(self, plan: Plan, why: str) -> Plan:
        local = tuple(t for t in plan.targets if t.provider in self._local)
        if not local:
            what = "the model" if plan.named else f"route {plan.route!r}"
            raise Forbidden(  # refused, never sent elsewhere: private means local only
                f"{why}, and {what} has no model on a provider with local: true "
                f"({', '.join(map(str, plan.targets))}); a private request is served only by "
                "local models (a route with when: {task: private}, or a local provider/model)",
                code="private_needs_local",
            )
        return plan if len(local) == len(plan.targets) else replace(plan, targets=local)

    def _candidates(self, route: str) -> tuple[Target, ...]:
        """The route's candidates for this plan: the learnt order, else equals taking turns."""
        ordered = self.learner.order(route, self._targets[route])
        if self.config.learning.enabled:
            return ordered
        return self.rotation.turn(route) or ordered

    def _resolve(self, body: Mapping[str, Any], principal: Principal, private: bool) -> Plan:
        model = self.resolve_alias(body["model"])
        if model == "auto":
            decision = self.router.decide(body["messages"], private=private)
            route = decision.route
            if not principal.allows_route(route):
                # `auto` routes within the key's routes: the first it allows, in config order.
                route = next((r for r in self.routes if principal.allows_route(r)), route)
                principal.check_route(route)
            return Plan(route, self._candidates(route), decision)
        if model in self._targets:
            principal.check_route(model)
            return Plan(model, self._candidates(model), None)
        provider, _, name = model.partition("/")
        if name and provider in self.providers:
            target = Target(provider=provider, model=name)
            if principal.models is None and principal.routes is not None:
                # A key limited to routes may name a target only of one of those routes.
                ok = any(target in self._targets[r] for r in self.routes
                         if principal.allows_route(r))  # fmt: skip
                if not ok:
                    raise Forbidden(
                        f"key {principal.name!r} may not use {model!r}: it is not a model of "
                        f"the routes it may use ({', '.join(principal.routes)})",
                        code="model_not_allowed",
                    )
            return Plan(EXPLICIT, (target,), None)
        aliases = ", ".join(self.config.model_aliases) or "none; add model_aliases to the config"
        raise NotFound(
            f"unknown model {model!r}: use 'auto', a route ({', '.join(self.routes)}), "
            f"provider/model with a provider among: {', '.join(self.providers)}, "
            f"or a name matching an alias ({aliases})",
            param="model",
            code="model_not_found",
        )

    def _validated_plan(self, body: dict[str, Any]) -> Plan:
        validate_chat_request(body)
        return self.plan(body)

    async def complete(
        self, body: dict[str, Any], plan: Plan | None = None, gate: Gate | None = None,
        *, call: Call[Completion] | None = None,
    ) -> tuple[Completion, Served]:  # fmt: skip
        """One answer from the first candidate that gives one. `call` asks a candidate (the
        endpoints' dialects pass theirs); by default, a chat completion of `body`."""
        plan = plan or self._validated_plan(body)
        call = call or (lambda p, m: p.complete(body, m))
        completion, served = await self._walk(plan, call, gate)
        self._record(served, ok=True, usage=completion.usage)
        return completion, served

    async def ask(
        self, messages: list[dict[str, Any]], *, model: str = "auto", **extra: Any
    ) -> str:
        """The answer's text for in-process callers (intent LLM, assistant): no HTTP to itself."""
        completion, _ = await self.complete({"model": model, "messages": messages, **extra})
        try:
            content = orjson.loads(completion.body)["choices"][0]["message"]["content"]
        except (orjson.JSONDecodeError, LookupError, TypeError):
            raise UpstreamError(
                "the answer has no message content", code="upstream_bad_json"
            ) from None
        return content if isinstance(content, str) else ""

    async def stream(
        self, body: dict[str, Any], plan: Plan | None = None, gate: Gate | None = None,
        *, call: Call[Stream] | None = None,
    ) -> tuple[Stream, Served]:  # fmt: skip
        """Open a stream on the first candidate that sends its first frame.

        The caller forwards the frames, then calls `finish_stream` exactly once.
        """
        plan = plan or self._validated_plan(body)
        return await self._walk(plan, call or (lambda p, m: p.open_stream(body, m)), gate)

    def first_callable(self, plan: Plan) -> str | None:
        """The first candidate `_walk` will gate (one whose provider has a key)."""
        for target in plan.targets:
            if not self.providers[target.provider].missing_key:
                return str(target)
        return None

    @contextlib.asynccontextmanager
    async def streaming(
        self, body: dict[str, Any], plan: Plan | None = None, gate: Gate | None = None,
        *, call: Call[Stream] | None = None,
    ) -> AsyncIterator[Streaming]:  # fmt: skip
        """`stream`, then `finish_stream` exactly once when the block is left: with what the
        block reported through `held.end`, else the exception that left it (a cancel: the
        client went away)."""
        stream, served = await self.stream(body, plan, gate, call=call)
        held = Streaming(stream, served)
        try:
            yield held
        except BaseException as e:
            if not held.ended:  # a cancel, or a failure before the forwarding could say
                held.end(e if isinstance(e, Exception) else ConnectionAbortedError("cancelled"))
            raise
        finally:
            await self.finish_stream(stream, served, held.error)

    async def finish_stream(self, stream: Stream, served: Served, error: Exception | None) -> None:
        await stream.close()
        if isinstance(error, ConnectionAbortedError):
            # The client left: not the provider's fault, and the usage never arrived.
            self.stats.record_rejection("client_disconnected")
            served.failed(error)
            return
        if isinstance(error, UpstreamError):
            await self.breakers.record_failure(str(served.target))
        usage = stream.usage[-1] if stream.usage else None
        self._record(served, ok=error is None, usage=usage, error=error)

    async def _walk(self, plan: Plan, call: Call[T], gate: Gate | None = None) -> tuple[T, Served]:
        attempts: list[tuple[str, str]] = []
        calls = timeouts = 0  # the candidates actually called, and how many of them timed out
        for index, target in enumerate(plan.targets):
            key = str(target)
            provider = self.providers[target.provider]
            if provider.missing_key:
                attempts.append((key, "skipped: no API key"))
                continue
            if gate is not None and gate.target == key:
                cooling, admitted, gate = gate.cooling, gate.admitted, None
            else:
                cooling, admitted = await self.breakers.gate(key, self.cooldowns)
            if cooling > 0:
                attempts.append((key, f"skipped: cooling down {cooling:.0f}s after 429"))
                continue
            if not admitted:
                attempts.append((key, "skipped: circuit open"))
                continue
            layer = plan.decision.layer if plan.decision else None
            served = Served(plan.route, target, index > 0, time.perf_counter(), attempts, layer,
                            plan.key, plan.user)  # fmt: skip
            if active.tracing is not None:  # SPEC OB-1: a CLIENT span per attempt
                served.span = active.tracing.attempt(served, provider.config)
            try:
                result = await call(provider, target.model)
            except UpstreamError as e:
                if isinstance(e, UpstreamStatus) and e.upstream_status == 404 and plan.named:
                    e.the_clients()  # a mistyped provider/model: the client's, not the provider's
                if not e.retryable:
                    await self.breakers.release(key)
                    served.failed(e)
                    raise
                await self._failed(served, e)
                attempts.append((key, e.message))
                calls, timeouts = calls + 1, timeouts + isinstance(e, UpstreamTimeout)
                continue
            except BaseException as e:
                await self.breakers.release(key)
                served.failed(e)
                raise
            await self.breakers.record_success(key)
            if served.span is not None:
                served.span.returned(result)
            if served.fallback:
                log.warning(
                    "FALLBACK route=%s served by %s after: %s",
                    plan.route,
                    key,
                    "; ".join(f"{k} ({why})" for k, why in attempts),
                )
            return result, served
        raise AllCandidatesFailed(plan.route, attempts, timed_out=0 < calls == timeouts)

    async def _failed(self, served: Served, error: UpstreamError) -> None:
        key = str(served.target)
        await self.breakers.record_failure(key)
        if isinstance(error, UpstreamStatus) and error.upstream_status == 429:
            await self.cooldowns.cool(key, error.retry_after)
        log.warning("ERROR route=%s %s: %s", served.route, key, error.message)
        self._record(served, ok=False, usage=None, error=error)

    def _record(
        self, served: Served, *, ok: bool, usage: Usage | None, error: Exception | None = None
    ) -> None:
        latency = time.perf_counter() - served.started
        cost = self.stats.record(
            route=served.route,
            provider=served.target.provider,
            model=served.target.model,
            ok=ok,
            latency_s=latency,
            usage=usage,
            fallback=served.fallback and ok,
            error=type(error).__name__ if error else None,
            key=served.key,
            user=served.user,
        )
        outcome = Outcome(
            route=served.route,
            target=str(served.target),
            ok=ok,
            latency_s=latency,
            usage=usage,
            cost_usd=cost,
            fallback=served.fallback,
            error=f"{type(error).__name__}: {error}" if error else None,
            attempts=tuple(served.attempts),
            decided_by=served.decided_by,
            at=time.time(),
        )
        for observer in self.observers:
            try:
                observer(outcome)
            except Exception:
                log.exception("an outcome observer failed: %r", observer)
        if served.span is not None:
            served.span.done(outcome, error)
