"""The safety chokepoint: layer 1 rules → layer 2 intent risk → layer 3 optional LLM judge.

`check_rules` is layer 1 alone: synchronous, zero tokens, tens of microseconds, never raises.
`SafetyEngine.check` runs the three layers (SF-1..SF-3) and returns a Verdict (SF-4); it never
raises either — an internal failure becomes a blocking verdict. The judge is injected as a
coroutine function, so this package never imports the gateway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from nerve.safety.actions import check_action, check_text
from nerve.safety.risk import intent_risk
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.shell import check_shell
from nerve.safety.sql import analyze_sql
from nerve.safety.verdict import Finding, Kind, RiskLevel, Verdict, higher, risk_rank
from nerve.telemetry import describe, traced

__all__ = ["Judge", "SafetyEngine", "check_rules"]

Judge = Callable[[Kind, str], Awaitable[tuple[bool, str]]]

# No real command or statement is this long; analysing megabytes would be a denial of service.
_MAX_CODE = 64_000
_MAX_TEXT = 512_000


def _sql_or_shell(content: str, scope: Scope) -> Finding:
    found, is_sql = analyze_sql(content, scope)
    if not is_sql and not found.blocks:  # not SQL (mysqladmin drop db): judge it as a command
        found = higher(found, check_shell(content, scope))
    return found


_ANALYSERS: dict[str, Callable[[str, Scope], Finding]] = {
    "shell": check_shell,
    "sql": _sql_or_shell,
    "text": lambda content, _scope: check_text(content),
    "action": lambda content, _scope: check_action(content),
}


def _finding(kind: str, content: object, scope: Scope) -> Finding:
    analyse = _ANALYSERS.get(kind) if isinstance(kind, str) else None
    if analyse is None:
        return Finding("high", f"unknown kind {kind!r}: expected shell, sql, text or action")
    if not isinstance(content, str):
        return Finding("high", f"content must be a string, not {type(content).__name__}")
    if len(content) > (_MAX_TEXT if kind == "text" else _MAX_CODE):
        return Finding("high", f"{kind} input of {len(content):,} characters is too long to judge")
    if not content.strip():
        return Finding("low", "empty input")
    return analyse(content, scope)


def check_rules(kind: Kind, content: str, scope: Scope = DEFAULT_SCOPE) -> Verdict:
    """Layer 1 (SF-1): rule-based verdict; high and critical risks block, nothing raises.
    `scope` gives the workspace paths are judged against and the SQL mode and dialect."""
    try:
        found = _finding(kind, content, scope)
    except Exception as exc:  # a bug must not open the gate: fail closed, say why
        found = Finding("high", f"could not be analysed ({type(exc).__name__})")
    if found.blocks:
        return Verdict(False, found.risk, found.reason, "rule", found.category)
    return Verdict(True, found.risk, found.reason, None, found.category)


def _max(a: RiskLevel, b: RiskLevel) -> RiskLevel:
    return a if risk_rank(a) >= risk_rank(b) else b


class SafetyEngine:
    """Three layers; strict mode also blocks medium risk and an unavailable judge."""

    def __init__(
        self, *, strict: bool = False, judge: Judge | None = None, judge_timeout: float = 10.0
    ) -> None:
        self.strict = strict
        self.judge = judge
        self.judge_timeout = judge_timeout

    @traced("safety.check", describe.verdict)  # a span per verdict while tracing (SPEC OB-1)
    async def check(
        self,
        kind: Kind,
        content: str,
        *,
        intent: str | None = None,
        scope: Scope = DEFAULT_SCOPE,
    ) -> Verdict:
        try:
            return await self._check(kind, content, intent, scope)
        except Exception as exc:  # never raise into the agent loop
            return Verdict(False, "high", f"safety check failed ({type(exc).__name__})", "rule")

    async def _check(self, kind: Kind, content: str, intent: str | None, scope: Scope) -> Verdict:
        rules = check_rules(kind, content, scope)
        if not rules.allowed:
            return rules
        risk: RiskLevel = rules.risk_level
        reasons = [rules.reason] if risk != "low" else []
        if risk == "medium" and self.strict:
            return Verdict(
                False,
                risk,
                f"strict mode blocks medium risk: {rules.reason}",
                "rule",
                rules.category,
            )
        if intent is not None:
            level = intent_risk(intent)
            if risk_rank(level) >= 2 or (level == "medium" and self.strict):
                mode = "strict mode blocks " if level == "medium" else ""
                return Verdict(False, level, f"{mode}intent '{intent}' is {level} risk", "risk")
            risk = _max(risk, level)
            reasons.append(f"intent '{intent}' is {level} risk")
        if self.judge is None:
            return Verdict(True, risk, "; ".join(reasons) or "no risk found", None)
        return await self._judge(self.judge, kind, content, risk, reasons)

    async def _judge(
        self, judge: Judge, kind: Kind, content: str, risk: RiskLevel, reasons: list[str]
    ) -> Verdict:
        try:
            async with asyncio.timeout(self.judge_timeout):  # not wait_for: it can drop a cancel
                answer: Any = await judge(kind, content)
            safe, why = answer
            if not isinstance(safe, bool):
                raise TypeError("the judge must answer (bool, str)")
        except Exception as exc:
            problem = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
            note = f"LLM judge unavailable ({problem})"
            if self.strict:
                return Verdict(False, _max(risk, "medium"), f"{note}: strict mode blocks", "llm")
            return Verdict(True, risk, "; ".join([*reasons, f"{note}: allowed on rules"]), None)
        if not safe:
            return Verdict(False, _max(risk, "high"), f"LLM judge: {why}", "llm")
        return Verdict(True, risk, "; ".join([*reasons, f"LLM judge: {why or 'safe'}"]), None)
