"""Provider presets are data: a vendor is a row, not a class (one class per wire protocol)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PRESETS", "Preset"]


@dataclass(frozen=True)
class Preset:
    protocol: Literal["openai", "anthropic"]
    base_url: str
    key_env: str | None  # environment variable holding the key; None for keyless local servers
    responses: bool = False  # it serves the Responses API too (/v1/responses passes through)


PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", True),
    "anthropic": Preset("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "openrouter": Preset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "sarvam": Preset("openai", "https://api.sarvam.ai/v1", "SARVAM_API_KEY"),
    "ollama": Preset("openai", "http://127.0.0.1:11434/v1", None),
    "vllm": Preset("openai", "http://127.0.0.1:8000/v1", None),
}
