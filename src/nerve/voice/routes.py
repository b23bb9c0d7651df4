"""REST routes of voice (SPEC VO-1, VO-2): synthesize and transcribe.

    POST /api/voice/synthesize  {text, language?, voice?}      → {audio_base64, format: wav, ...}
    POST /api/voice/transcribe  {audio_base64, language?}      → {text, language, engine, ...}
    POST /api/voice/transcribe  multipart: file=<WAV>, language? (the same answer)

Thin adapters over `Voice`; the body size is capped by limits.max_body_bytes (413).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile

from nerve.errors import RequestError
from nerve.voice.service import Voice

__all__ = ["decode_audio", "voice_router"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SynthesizeBody(_Body):
    text: str = Field(description="What to say (voice.max_text_chars at most).")
    language: str | None = Field(None, max_length=35, description="en, hi, ta, te, kn, ml, bn…")
    voice: str | None = Field(
        None, max_length=80, description="An engine (espeak), engine:voice, or a voice name."
    )


class TranscribeBody(_Body):
    audio_base64: str = Field(description="A WAV file, base64 (a data: URL prefix is allowed).")
    language: str | None = Field(None, max_length=35)


_TRANSCRIBE_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": TranscribeBody.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "language": {"type": "string"},
                    },
                }
            },
        },
    }
}


def voice_router(voice: Callable[[], Voice]) -> APIRouter:
    """`voice` is resolved per request (a config reload may replace it)."""
    router = APIRouter(prefix="/api/voice")

    @router.post("/synthesize", summary="Text → speech (WAV, base64)")
    async def synthesize(body: SynthesizeBody) -> dict[str, Any]:
        return await voice().synthesize(body.text, body.language, body.voice)

    @router.post("/transcribe", summary="Speech (WAV) → text", openapi_extra=_TRANSCRIBE_DOC)
    async def transcribe(request: Request) -> dict[str, Any]:
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            async with request.form(max_files=1, max_fields=4) as form:
                upload, language = form.get("file"), form.get("language")
                if not isinstance(upload, UploadFile):
                    raise RequestError("'file': send the WAV as a file field named 'file'",
                                       param="file")  # fmt: skip
                if language is not None and not isinstance(language, str):
                    raise RequestError("'language': must be a text field", param="language")
                audio = await upload.read()
            return await voice().transcribe(audio, language or None, field="file")
        body = _parse(await request.body())
        return await voice().transcribe(
            decode_audio(body.audio_base64), body.language, field="audio_base64"
        )

    return router


def _parse(raw: bytes) -> TranscribeBody:
    try:
        return TranscribeBody.model_validate_json(raw or b"{}")
    except ValidationError as e:
        first = e.errors()[0]
        param = ".".join(str(p) for p in first["loc"]) or None
        message = f"'{param}': {first['msg']}" if param else f"the body: {first['msg']}"
        raise RequestError(message, param=param) from None


def decode_audio(text: str) -> bytes:
    """Base64 (whitespace and a data: URL prefix allowed) → bytes; else a RequestError."""
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise RequestError("'audio_base64': not valid base64", param="audio_base64") from None
