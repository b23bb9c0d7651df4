"""MCP tools over voice (SPEC VO-1, VO-2): transcribe, synthesize.

Thin adapters over `NerveApp.voice` (`Voice`), the calls `/api/voice/*` make; audio travels as
base64 WAV. A missing speech engine is an `is_error` result naming what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from nerve.voice import decode_audio

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from nerve.mcp.host import Host

__all__ = ["SynthesizeOut", "TranscribeOut", "register"]

Language = Annotated[
    str | None, Field(max_length=35, description="en, hi, ta, te, kn, ml, bn…; null: detect")
]


class TranscribeOut(BaseModel):
    text: str
    language: str | None
    engine: str
    duration_s: float | None = Field(None, description="length of the recording")


class SynthesizeOut(BaseModel):
    audio_base64: str = Field(description="a WAV file, base64")
    format: Literal["wav"]
    sample_rate: int
    engine: str
    duration_s: float | None = None
    language: str | None = None
    voice: str | None = None


def register(server: MCPServer[Any], app: Host) -> None:
    @server.tool()
    async def transcribe(
        audio_base64: Annotated[str, Field(min_length=1, description="a WAV file, base64")],
        language: Language = None,
    ) -> TranscribeOut:
        """Speech to text: a WAV recording (base64) → {text, language, engine}."""
        audio = decode_audio(audio_base64)
        heard = await app.voice.transcribe(audio, language, field="audio_base64")
        return TranscribeOut.model_validate(heard)

    @server.tool()
    async def synthesize(
        text: Annotated[str, Field(min_length=1)],
        language: Language = None,
        voice: Annotated[
            str | None, Field(max_length=80, description="an engine (espeak), engine:voice…")
        ] = None,
    ) -> SynthesizeOut:
        """Text to speech: → {audio_base64 (WAV), format, sample_rate, engine}. Indian languages
        (hi, ta, te, kn, ml, bn) and English, offline."""
        spoken = await app.voice.synthesize(text, language, voice)
        return SynthesizeOut.model_validate(spoken)
