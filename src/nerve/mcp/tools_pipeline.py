"""MCP tools over the pipeline (SPEC PR-1, SF-4): process, check_safety, safe_execute.

The same calls as `POST /api/process` and `POST /api/safety/check`; a blocked request is a
result (the verdict), never an error. Over /mcp, `user_id` is checked against the key's `users`
and defaults to its first user, as `/api/process` does (`Principal.user_for`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nerve.mcp.host import caller
from nerve.memory.fields import TEXT
from nerve.memory.fields import UserId as MemoryUser
from nerve.pipeline.process import MAX_TEXT_CHARS, ProcessResult
from nerve.safety import BlockedBy, Category, Kind, RiskLevel, Scope
from nerve.safety.record import record
from nerve.safety.scope import Dialect, Mode

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from nerve.mcp.host import Host

__all__ = ["ProcessOut", "SafeExecuteOut", "VerdictOut", "register"]

# What is processed is remembered for the user: text and user id follow memory's rules.
Text = Annotated[
    str, Field(max_length=MAX_TEXT_CHARS, description="What the user or agent asked."), TEXT
]
UserId = Annotated[
    MemoryUser,
    Field(description="Whose request it is; default: the key's first user, else anonymous."),
]


class VerdictOut(BaseModel):
    allowed: bool
    risk_level: RiskLevel
    reason: str
    blocked_by: BlockedBy | None = Field(description="rule, risk or llm; null when allowed")
    category: Category | None = Field(
        None,
        description="the kind of harm its rule found (destructive, workspace, system, "
        "persistence, credentials, exfiltration, read_only, code); null when none was named",
    )


class LanguageOut(BaseModel):
    languages: list[str]
    confidence: float
    is_code_switched: bool
    original_text: str
    normalized_text: str


class IntentOut(BaseModel):
    intent: str
    parameters: dict[str, Any]
    confidence: float
    source: Literal["rules", "llm"]


class ProcessOut(BaseModel):
    language: LanguageOut
    intent: IntentOut
    safety: VerdictOut
    execution: dict[str, Any] | None = Field(
        description="status ok|failed|no_handler|blocked, or null when not asked to execute"
    )

    @classmethod
    def of(cls, result: ProcessResult) -> ProcessOut:
        return cls.model_validate(result.to_dict())


class SafeExecuteOut(ProcessOut):
    allowed: bool = Field(description="whether safety allowed it (false: safety has the reason)")
    executed: bool = Field(description="whether a handler ran it successfully")


def register(server: MCPServer[Any], app: Host) -> None:
    @server.tool()
    async def process(
        ctx: Context[Any, Any], text: Text, user_id: UserId | None = None, execute: bool = False
    ) -> ProcessOut:
        """Understand a request: language → intent → safety verdict; with execute=true, also run
        the intent's handler when safety allows it. Code-switched romanized Indian languages
        (Hinglish, Tanglish...) are understood."""
        user = caller(ctx).user_for(user_id, "anonymous")
        return ProcessOut.of(await app.pipeline.process(text, user, execute=execute))

    @server.tool()
    async def check_safety(
        kind: Annotated[Kind, Field(description="shell, sql, text (a request) or action")],
        content: Annotated[str, Field(max_length=MAX_TEXT_CHARS)],
        cwd: Annotated[
            str | None,
            Field(description="where the command runs (absolute path); the workspace if no roots"),
        ] = None,
        roots: Annotated[
            list[str] | None,
            Field(description="the workspace: absolute directories the agent may change"),
        ] = None,
        mode: Annotated[
            Mode, Field(description="read_only: SQL may only read (SELECT, SHOW, EXPLAIN...)")
        ] = "default",
        dialect: Annotated[Dialect, Field(description="SQL dialect; any = strictest")] = "any",
    ) -> VerdictOut:
        """Judge a shell command, SQL statement, request text or action before running it:
        {allowed, risk_level, reason, blocked_by, category}. Pass `cwd` (and `roots`) so paths
        are judged against the workspace: deleting inside it is the user's business, outside it
        is refused. Microseconds; no model call unless an LLM judge is configured."""
        scope = Scope.of(cwd, roots or (), mode, dialect)  # ScopeError: the caller's mistake
        verdict = await app.pipeline.safety.check(kind, content, scope=scope)
        record(verdict, source="mcp", check=kind, subject=content)
        return VerdictOut.model_validate(verdict.to_dict())

    @server.tool()
    async def safe_execute(
        ctx: Context[Any, Any], text: Text, user_id: UserId | None = None
    ) -> SafeExecuteOut:
        """Process a request and execute it only if safety allows it. A blocked request is not
        an error: the result says allowed=false and carries the verdict in `safety`."""
        user = caller(ctx).user_for(user_id, "anonymous")
        result = await app.pipeline.process(text, user, execute=True)
        executed = bool(result.execution and result.execution.get("executed"))
        out = ProcessOut.of(result).model_dump()
        return SafeExecuteOut(**out, allowed=result.safety.allowed, executed=executed)
