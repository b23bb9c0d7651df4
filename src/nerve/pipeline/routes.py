"""REST routes of the pipeline (SPEC PR-1, PR-2, LG-2, SF-4): process, safety check, language.

Each route is a thin adapter: validate the body (pydantic; a bad field is a 400 naming it), call
the same Python function the CLI and MCP call, return its dict. `/api/process` remembers what
it was asked for a user, so its text and user id follow memory's rules (memory/fields.py): a
blank user id or a NUL is refused up front, not dropped by the memory step after a 200. And
whose data it is: a key limited to some users (server.api_keys `users`) may only name
those (else a 403 naming the user), and a request that names none acts for the key's first user
("anonymous" for a key without a `users` limit, and without keys).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from nerve.access import principal_of
from nerve.language import detect
from nerve.memory.fields import TEXT, UserId
from nerve.pipeline.process import MAX_TEXT_CHARS, Pipeline
from nerve.safety import Kind, Scope, ScopeError
from nerve.safety.record import record
from nerve.safety.scope import MAX_ROOTS, Dialect, Mode

__all__ = ["pipeline_router"]


class _Body(BaseModel):
    # Strict: a JSON false is not 0, a 1 is not true (what the schema's types say).
    model_config = ConfigDict(extra="forbid", strict=True)


class ProcessBody(_Body):
    # What is asked is remembered for the user: its text and user id follow memory's rules.
    text: Annotated[
        str, Field(max_length=MAX_TEXT_CHARS, description="What the user or agent asked."), TEXT
    ]
    user_id: Annotated[
        UserId,
        Field(description="Whose request it is; default: the key's first user, else anonymous."),
    ] | None = None  # fmt: skip
    execute: bool = Field(True, description="Run the intent's handler when safety allows it.")


# An absolute path with no NUL byte: in the schema, so clients (and schema fuzzers) know.
_ABSOLUTE = r"^/[^\x00]*$"


class SafetyBody(_Body):
    kind: Kind
    content: str = Field(max_length=MAX_TEXT_CHARS)
    cwd: str | None = Field(
        None, max_length=4096, pattern=_ABSOLUTE,
        description="Where the command runs (absolute); relative paths "
        "resolve against it, and it is the workspace when `roots` is not given.",
    )  # fmt: skip
    roots: list[Annotated[str, Field(max_length=4096, pattern=_ABSOLUTE)]] = Field(
        [], max_length=MAX_ROOTS, description="The workspace: absolute directories the agent may "
        "change. Inside is the user's business; deleting or overwriting outside is refused.",
    )  # fmt: skip
    mode: Mode = Field("default", description="read_only: SQL may only read (SELECT, SHOW, ...).")
    dialect: Dialect = Field("any", description="SQL dialect; any = the strictest reading.")

    @field_validator("cwd", "roots", mode="before")
    @classmethod
    def _absolute(cls, value: Any, info: Any) -> Any:
        well_typed = isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(item, str) for item in value)
        )
        if not well_typed:
            return value  # the type check says what is wrong
        try:  # the verdict API's own words, before the schema's pattern speaks
            Scope.of(**{info.field_name: value})
        except ScopeError as exc:
            raise ValueError(str(exc).split(": ", 1)[-1]) from None
        return value

    def scope(self) -> Scope:
        return Scope.of(self.cwd, self.roots, self.mode, self.dialect)


class LanguageBody(_Body):
    text: str = Field(max_length=MAX_TEXT_CHARS)


def pipeline_router(pipeline: Callable[[], Pipeline]) -> APIRouter:
    """`pipeline` is resolved per request: the server builds it when it starts."""
    router = APIRouter(prefix="/api")

    @router.post("/process", summary="Language → intent → safety → execute")
    async def process(body: ProcessBody, request: Request) -> dict[str, Any]:
        user_id = principal_of(request.scope).user_for(body.user_id, "anonymous")
        result = await pipeline().process(body.text, user_id, execute=body.execute)
        return result.to_dict()

    @router.post("/safety/check", summary="One safety verdict")
    async def safety_check(body: SafetyBody) -> dict[str, Any]:
        verdict = await pipeline().safety.check(body.kind, body.content, scope=body.scope())
        record(verdict, source="api", check=body.kind, subject=body.content)
        return verdict.to_dict()

    @router.post("/language/detect", summary="Languages, code-switching, normalized text")
    async def language_detect(body: LanguageBody) -> dict[str, Any]:
        return detect(body.text).to_dict()

    return router
