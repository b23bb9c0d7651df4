"""SPEC PR-3, VO-1, VO-2: synthesize and transcribe over MCP, with the real offline engines; a
missing engine or bad audio is an is_error result saying what to do."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import Config, parse_config
from nerve.voice import Voice
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import ROUTES, Call, text_of

SELECTED = Voice.from_config(parse_config({}, environ={})).engines()
ENGLISH_BOTH_WAYS = SELECTED["tts"]["selected"]["en"] and SELECTED["stt"]["selected"]["en"]


def _content(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    out: dict[str, Any] = result.structured_content
    return out


@pytest.mark.skipif(
    not ENGLISH_BOTH_WAYS, reason="no English TTS + STT: pip install 'nerve[voice]'"
)
async def test_synthesize_then_transcribe_round_trips_english(call: Call) -> None:
    spoken = _content(await call("synthesize", text="The meeting starts at nine tomorrow."))
    assert spoken["format"] == "wav" and spoken["sample_rate"] > 0
    assert spoken["engine"] == SELECTED["tts"]["selected"]["en"]
    heard = _content(await call("transcribe", audio_base64=spoken["audio_base64"], language="en"))
    assert heard["engine"] == SELECTED["stt"]["selected"]["en"]
    words = heard["text"].lower()
    assert "meeting" in words and "tomorrow" in words


async def test_audio_that_is_not_base64_or_not_wav_is_an_error_naming_the_field(
    call: Call,
) -> None:
    not_base64 = await call("transcribe", audio_base64="%%% not base64 %%%")
    assert not_base64.is_error
    assert text_of(not_base64) == "transcribe: 'audio_base64': not valid base64"
    not_wav = await call("transcribe", audio_base64="aGVsbG8=")
    assert not_wav.is_error
    assert text_of(not_wav).startswith("transcribe: 'audio_base64': ")


async def test_an_unknown_voice_is_an_error_listing_the_known_ones(call: Call) -> None:
    result = await call("synthesize", text="hello", voice="no-such-voice")
    assert result.is_error
    assert "'voice'" in text_of(result)


class TestMissingEngine:
    @pytest.fixture
    def mcp_config(self, upstream: FakeUpstream) -> Config:
        return make_config({"primary": upstream}, ROUTES, voice={"tts": "piper"})

    async def test_an_engine_that_cannot_run_says_what_it_needs(self, call: Call) -> None:
        result = await call("synthesize", text="hello")
        assert result.is_error
        message = text_of(result)
        assert message.startswith("synthesize: ") and "piper" in message
        assert "install" in message or "voice.piper_model" in message  # what to do about it
        assert not (await call("check_safety", kind="text", content="hello")).is_error
