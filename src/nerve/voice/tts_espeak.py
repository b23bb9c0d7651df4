"""espeak-ng (the Debian package) as a TextToSpeech: every language nerve understands.

One subprocess per request, `espeak-ng --stdout --stdin -b 1 -v <voice>`, the text on stdin so
it can never be read as an option. About 0.05 s a sentence; robotic but intelligible, and the
only offline engine here that speaks Hindi, Tamil, Telugu, Kannada, Malayalam and Bengali.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from nerve.errors import NerveError, RequestError
from nerve.voice.audio import read_wav
from nerve.voice.base import Audio, TextToSpeech

__all__ = ["VOICES", "EspeakTTS"]

# nerve's language codes → espeak-ng voices (`espeak-ng --voices` lists the rest).
VOICES = {"en": "en-us", "hi": "hi", "ta": "ta", "te": "te", "kn": "kn", "ml": "ml", "bn": "bn"}
_VOICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]{0,39}$")  # e.g. en-gb, en-us+m3, hi+f2
TIMEOUT_S = 60.0


class EspeakTTS(TextToSpeech):
    name = "espeak"

    def __init__(self, binary: str = "espeak-ng") -> None:
        self.binary = binary

    def missing(self) -> str | None:
        if shutil.which(self.binary) is None:
            return f"{self.binary} is not installed: apt-get install espeak-ng"
        return None

    def languages(self) -> frozenset[str]:
        return frozenset(VOICES)

    def synthesize(self, text: str, language: str, voice: str | None) -> Audio:
        name = voice or VOICES[language]
        if not _VOICE_NAME.match(name):
            raise RequestError(f"'voice': {name!r} is not an espeak-ng voice name", param="voice")
        try:
            done = subprocess.run(
                [self.binary, "--stdout", "--stdin", "-b", "1", "-v", name],
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise NerveError(f"espeak-ng took longer than {TIMEOUT_S:g} s") from None
        if done.returncode != 0 or not done.stdout:
            why = (done.stderr or done.stdout).decode("utf-8", "replace").strip()[-300:]
            if voice is not None:
                raise RequestError(
                    f"'voice': espeak-ng cannot use voice {voice!r} ({why}); "
                    "`espeak-ng --voices` lists them",
                    param="voice",
                )
            raise NerveError(f"espeak-ng failed (exit {done.returncode}): {why}")
        samples, rate = read_wav(done.stdout)
        return Audio(samples, rate)
