"""pocketsphinx (PyPI) as a SpeechToText: the light offline default, US English only.

Its wheel ships the en-US acoustic model, language model and dictionary, so it needs nothing
else. Good on natural voices (5.1% WER on hibari's), useless on espeak-ng's formant voice
(about 90%): see bench/voice.py. One decoder (0.2 s to build) serves one utterance at a time.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from nerve.errors import RequestError
from nerve.voice.audio import STT_RATE
from nerve.voice.base import Audio, SpeechToText, Transcript, installed

__all__ = ["PocketsphinxSTT"]

INSTALL = "pip install 'nerve[voice]' (pocketsphinx)"


class PocketsphinxSTT(SpeechToText):
    name = "pocketsphinx"

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = threading.Lock()

    def missing(self) -> str | None:
        return None if installed("pocketsphinx") else f"pocketsphinx is not installed: {INSTALL}"

    def languages(self) -> frozenset[str]:
        return frozenset({"en"})

    def transcribe(self, audio: Audio, language: str | None) -> Transcript:
        if language not in (None, "en"):
            raise RequestError(
                f"'language': pocketsphinx recognizes English only, not {language!r}; "
                "configure voice.whisper_model_dir with a multilingual Whisper model",
                param="language",
            )
        assert audio.sample_rate == STT_RATE
        pcm = (np.clip(audio.samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
        with self._lock:
            if self._decoder is None:
                from pocketsphinx import Decoder

                self._decoder = Decoder(samprate=STT_RATE, loglevel="FATAL")
            decoder = self._decoder
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
        return Transcript(hypothesis.hypstr if hypothesis else "", "en")
