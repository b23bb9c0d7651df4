"""hibari (PyPI `hibari-tts`) as a TextToSpeech: a natural English voice shipped in its wheel.

A 7.9 MB ONNX model distilled from Kokoro, 24 kHz, far faster than real time on one core. Only
the voices already on disk are used ("heart" ships in the package); hibari would download the
others, and nerve never downloads at run time. The noise component is seeded, so one text gives
one waveform.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from nerve.errors import RequestError
from nerve.voice.base import Audio, TextToSpeech, installed

__all__ = ["HibariTTS"]

DEFAULT_VOICE = "heart"
INSTALL = "pip install 'nerve[voice]' (hibari-tts)"


class HibariTTS(TextToSpeech):
    name = "hibari"

    def __init__(self) -> None:
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def missing(self) -> str | None:
        return None if installed("hibari") else f"hibari is not installed: {INSTALL}"

    def languages(self) -> frozenset[str]:
        return frozenset({"en"})

    def synthesize(self, text: str, language: str, voice: str | None) -> Audio:
        with self._lock:  # one onnxruntime session per voice, used by one thread at a time
            model = self._model(voice or DEFAULT_VOICE)
            samples = model(text, seed=0)
        return Audio(np.asarray(samples, np.float32), int(model.sample_rate))

    def _model(self, voice: str) -> Any:
        if voice not in self._models:
            from hibari import Hibari
            from hibari.voices import VOICES, voice_path

            if voice not in VOICES:
                known = ", ".join(VOICES)
                raise RequestError(f"'voice': hibari has no voice {voice!r}; known: {known}",
                                   param="voice")  # fmt: skip
            try:
                path = voice_path(voice, download_missing=False)
            except FileNotFoundError:
                raise RequestError(
                    f"'voice': hibari voice {voice!r} is not on this machine (only "
                    f"{DEFAULT_VOICE!r} ships in the package; nerve does not download voices)",
                    param="voice",
                ) from None
            self._models[voice] = Hibari(voice=voice, model=path)
        return self._models[voice]
