"""Speech to text: engine choice, language handling and the errors a caller gets."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from nerve.config_sections import VoiceConfig
from nerve.errors import EngineUnavailable, RequestError
from nerve.voice import Voice
from nerve.voice.audio import write_wav


@pytest.fixture(scope="module")
def wav(espeak, hibari) -> bytes:
    import asyncio

    spoken = asyncio.run(Voice().synthesize("Check the logs for any errors.", "en"))
    return base64.b64decode(spoken["audio_base64"])


async def test_auto_prefers_whisper_and_accepts_a_regional_code(whisper, voice, wav):
    heard = await voice.transcribe(wav, "en-US")
    assert (heard["engine"], heard["language"]) == ("whisper", "en")
    assert "logs" in heard["text"].lower()
    assert (await voice.transcribe(wav))["language"] == "en"  # tiny.en: English, not detected


async def test_without_whisper_pocketsphinx_hears_it(pocketsphinx, wav, tmp_path):
    voice = Voice(VoiceConfig(whisper_model_dir=str(tmp_path)))  # an empty dir: not a model
    heard = await voice.transcribe(wav)
    assert heard["engine"] == "pocketsphinx" and "logs" in heard["text"]


async def test_whisper_configured_without_a_model_names_what_to_install(tmp_path, wav):
    voice = Voice(VoiceConfig(stt="whisper", whisper_model_dir=str(tmp_path / "none")))
    with pytest.raises(EngineUnavailable) as caught:
        await voice.transcribe(wav)
    message = caught.value.message
    assert "voice.whisper_model_dir" in message and "pip install 'nerve[voice]'" in message
    assert caught.value.status == 503
    report = voice.engines()["stt"]
    assert report["engines"]["whisper"]["available"] is False
    assert report["selected"]["en"] is None and report["config"] == "whisper"


@pytest.mark.parametrize("config", [{}, {"stt": "pocketsphinx"}, {"stt": "whisper"}])
async def test_a_language_no_engine_here_knows_is_a_400(whisper, pocketsphinx, wav, config):
    with pytest.raises(RequestError, match="'ta'") as caught:
        await Voice(VoiceConfig(**config)).transcribe(wav, "ta")
    assert caught.value.param == "language"


@pytest.mark.parametrize(
    ("audio", "says"),
    [
        (b"", "empty"),
        (b"OggS\x00\x02" + b"\x00" * 40, "not a WAV"),
        (write_wav(np.zeros(16_000 * 3, np.float32), 16_000), "the limit is 2 s"),
    ],
)
async def test_bad_audio_is_a_400_naming_the_field(audio, says):
    voice = Voice(VoiceConfig(max_seconds=2))
    with pytest.raises(RequestError, match=f"'upload': .*{says}") as caught:
        await voice.transcribe(audio, field="upload")
    assert caught.value.param == "upload"
