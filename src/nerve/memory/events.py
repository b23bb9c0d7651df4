"""The ten perception events (SPEC ME-4), each with a validated payload.

An agent reports what it does while it works: files read and searched, tools and commands run,
files written and edited, errors and warnings, tasks set and finished. Each event becomes a
searchable episodic record of kind "event"; its importance comes from its type (an error
matters more than a file read) unless the caller gives one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nerve.errors import RequestError
from nerve.memory.fields import WHOLE

__all__ = [
    "EVENT_IMPORTANCE",
    "EVENT_TYPES",
    "PAYLOADS",
    "EventType",
    "payload_rules",
    "validate_event",
]

EventType = Literal[
    "eye_read", "eye_search", "body_tool", "body_bash", "tongue_write", "tongue_edit",
    "nose_error", "nose_warning", "outcome_task", "outcome_done",
]  # fmt: skip


class _Payload(BaseModel):
    # Agents may add context: it is kept and searched. Strict: a score of true is not 1.
    model_config = ConfigDict(extra="allow", strict=True)


Count = Annotated[int, WHOLE]


class EyeRead(_Payload):
    path: str = Field(min_length=1)
    summary: str | None = None


class EyeSearch(_Payload):
    query: str = Field(min_length=1)
    results: Annotated[int, Field(ge=0), WHOLE] | None = None


class BodyTool(_Payload):
    tool: str = Field(min_length=1)
    input: Any = None
    success: bool = True


class BodyBash(_Payload):
    command: str = Field(min_length=1)
    output: str | None = None
    exit_code: Count | None = None
    duration_s: float | None = Field(None, ge=0)


class TongueWrite(_Payload):
    path: str = Field(min_length=1)
    content: str | None = None


class TongueEdit(_Payload):
    path: str = Field(min_length=1)
    diff: str | None = None
    summary: str | None = None


class NoseError(_Payload):
    message: str = Field(min_length=1)
    error_type: str | None = None
    context: str | None = None


class NoseWarning(_Payload):
    message: str = Field(min_length=1)
    context: str | None = None


class OutcomeTask(_Payload):
    task: str = Field(min_length=1)
    scope: str | None = None


class OutcomeDone(_Payload):
    score: float = Field(ge=0.0, le=1.0)
    task: str | None = None
    summary: str | None = None


PAYLOADS: dict[str, type[_Payload]] = {
    "eye_read": EyeRead, "eye_search": EyeSearch, "body_tool": BodyTool, "body_bash": BodyBash,
    "tongue_write": TongueWrite, "tongue_edit": TongueEdit, "nose_error": NoseError,
    "nose_warning": NoseWarning, "outcome_task": OutcomeTask, "outcome_done": OutcomeDone,
}  # fmt: skip
EVENT_TYPES: tuple[str, ...] = tuple(PAYLOADS)

# What an event of each type is worth remembering, before the caller says otherwise.
EVENT_IMPORTANCE: dict[str, float] = {
    "eye_read": 0.3, "eye_search": 0.3, "body_tool": 0.4, "body_bash": 0.4,
    "tongue_write": 0.6, "tongue_edit": 0.6, "nose_error": 0.8, "nose_warning": 0.5,
    "outcome_task": 0.9, "outcome_done": 0.8,
}  # fmt: skip


def payload_rules(schema: dict[str, Any]) -> None:
    """The JSON schema of a body with `type` and `payload`, made one variant per type, each with
    its payload's rules (a `oneOf`: generators and validators handle it far faster than the
    same rules as `if`/`then`)."""
    variants = []
    for name, model in PAYLOADS.items():
        properties = dict(schema["properties"])
        properties["type"] = {"const": name}
        properties["payload"] = {"allOf": [properties["payload"], model.model_json_schema()]}
        variants.append({**schema, "properties": properties, "title": f"{name} event"})
    for key in ("properties", "required", "additionalProperties", "type"):
        schema.pop(key, None)
    schema["oneOf"] = variants


def validate_event(event_type: str, payload: Any) -> dict[str, Any]:
    """The payload as clean JSON data, or a RequestError naming the bad field."""
    model = PAYLOADS.get(event_type)
    if model is None:
        raise RequestError(
            f"unknown event type {event_type!r}; known: {', '.join(EVENT_TYPES)}", param="type"
        )
    if not isinstance(payload, dict):
        raise RequestError("'payload' must be an object", param="payload")
    try:
        return model.model_validate(payload).model_dump(mode="json", exclude_none=True)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise RequestError(
            f"'payload.{field}' of a {event_type} event: {err['msg']}", param=f"payload.{field}"
        ) from None
