"""The two seams every speech engine sits behind: TextToSpeech and SpeechToText.

An engine knows its `name`, the languages it handles, and whether it can run on this machine:
`missing()` is None when it can, else a sentence naming what to install or configure. Engines
are synchronous and may be slow (model inference, a subprocess); `Voice` runs them in a thread.
Models load on first use, once, so building engines costs nothing.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from nerve.voice.audio import write_wav

__all__ = ["Audio", "Engine", "SpeechToText", "TextToSpeech", "Transcript", "installed"]


@dataclass(frozen=True)
class Audio:
    """Mono float32 samples in [-1, 1] at `sample_rate`."""

    samples: np.ndarray
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate

    def wav(self) -> bytes:
        return write_wav(self.samples, self.sample_rate)


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str


class Engine(ABC):
    name: ClassVar[str]

    @abstractmethod
    def missing(self) -> str | None:
        """None when the engine can run here, else why not and what to install."""

    def available(self) -> bool:
        return self.missing() is None

    @abstractmethod
    def languages(self) -> frozenset[str] | None:
        """The language codes it handles (None: any it is asked for)."""

    def handles(self, language: str) -> bool:
        langs = self.languages()
        return langs is None or language in langs


class TextToSpeech(Engine):
    @abstractmethod
    def synthesize(self, text: str, language: str, voice: str | None) -> Audio:
        """Speech for `text`. `voice` is engine-specific (None: the language's default)."""


class SpeechToText(Engine):
    @abstractmethod
    def transcribe(self, audio: Audio, language: str | None) -> Transcript:
        """Text of 16 kHz mono `audio` (Voice decodes and resamples the caller's WAV once).

        `language` None: the engine's default or, when it can, detection.
        """


def installed(module: str) -> bool:
    """Whether a top-level module can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
