"""The intent result, its closed vocabularies, and the model answer's schema (IN-1, IN-2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ACTIONS", "FORMATS", "INTENTS", "Intent", "ModelAnswer", "normalize_format"]

INTENTS = (
    "convert_format",
    "summarize",
    "generate_report",
    "delete_data",
    "query_data",
    "send_message",
    "explain",
    "chat",  # not a command: greetings, thanks, praise, opinions, a question about the listener
    "unknown",
)

IntentName = Literal[
    "convert_format",
    "summarize",
    "generate_report",
    "delete_data",
    "query_data",
    "send_message",
    "explain",
    "chat",
    "unknown",
]

# `parameters["action"]` hints for the safety layer's risk table. Recognised by rules only, so
# they never depend on a model noticing them.
ACTIONS = (
    "drop_database",  # critical
    "drop_table",
    "truncate_table",
    "delete_all_data",
    "erase_all",  # wipe or format a disk, erase everything
    "delete_files",  # rm -rf
    "destroy",  # tear down infrastructure
    "system_shutdown",  # critical
    "system_reboot",
)

# Canonical file formats; every spelling a user may write maps onto one of them.
FORMATS: dict[str, str] = {
    "csv": "csv",
    "tsv": "csv",
    "json": "json",
    "jsonl": "json",
    "excel": "xlsx",
    "xlsx": "xlsx",
    "xls": "xlsx",
    "spreadsheet": "xlsx",
    "pdf": "pdf",
    "xml": "xml",
    "yaml": "yaml",
    "yml": "yaml",
    "txt": "txt",
    "text": "txt",
    "text file": "txt",
    "plain text": "txt",
    "docx": "docx",
    "doc": "docx",
    "word": "docx",
    "word document": "docx",
    "word file": "docx",
    "markdown": "markdown",
    "md": "markdown",
    "html": "html",
    "htm": "html",
    "webpage": "html",
}


def normalize_format(name: str) -> str:
    """'Excel' → 'xlsx'; an unknown spelling is returned lower-cased."""
    key = " ".join(name.lower().strip(" .").split())
    return FORMATS.get(key, key)


@dataclass(frozen=True, slots=True)
class Intent:
    """What a request asks for; `source` says whether the model or the rules answered."""

    intent: str
    parameters: dict[str, Any]
    confidence: float
    source: Literal["rules", "llm"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "parameters": dict(self.parameters),
            "confidence": self.confidence,
            "source": self.source,
        }


class ModelAnswer(BaseModel):
    """What the model must answer; its JSON schema is the `response_format` sent to it."""

    model_config = ConfigDict(extra="forbid", title="intent")

    intent: IntentName = Field(description="one of the listed intents")
    parameters: dict[str, Any] = Field(description="what the request names, e.g. output_format")
    # strict: `true` or "0.9" is not a confidence
    confidence: float = Field(strict=True, ge=0.0, le=1.0, description="0..1, how sure it is")
