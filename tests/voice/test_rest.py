"""POST /api/voice/synthesize and /api/voice/transcribe through a real server, and /health."""

from __future__ import annotations

import base64

import httpx
import numpy as np
import pytest

from nerve.voice.audio import write_wav
from tests.conftest import make_config


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


def post(server, path, **kw):
    return httpx.post(f"{server.url}{path}", timeout=30, **kw)


@pytest.fixture
def spoken(server, espeak, hibari) -> dict:
    r = post(
        server, "/api/voice/synthesize", json={"text": "Please send the report to my manager."}
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_synthesize_answers_a_base64_wav(spoken):
    assert set(spoken) >= {"audio_base64", "format", "sample_rate", "engine", "duration_s"}
    assert spoken["format"] == "wav" and spoken["engine"] == "hibari"
    assert base64.b64decode(spoken["audio_base64"])[:4] == b"RIFF"
    assert spoken["duration_s"] > 1


def test_synthesize_hindi_with_espeak(server, espeak):
    r = post(server, "/api/voice/synthesize", json={"text": "नमस्ते", "language": "hi"})
    assert r.status_code == 200 and r.json()["engine"] == "espeak"


def test_transcribe_base64_json(server, spoken, whisper):
    r = post(server, "/api/voice/transcribe", json={"audio_base64": spoken["audio_base64"]})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "text": "Please send the report to my manager.",
        "language": "en",
        "engine": "whisper",
        "duration_s": spoken["duration_s"],
    }


def test_transcribe_a_multipart_upload(server, spoken, whisper):
    wav = base64.b64decode(spoken["audio_base64"])
    r = post(
        server, "/api/voice/transcribe",
        files={"file": ("speech.wav", wav, "audio/wav")}, data={"language": "en"},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert "report" in r.json()["text"].lower()


@pytest.mark.parametrize(
    ("kwargs", "param", "says"),
    [
        ({"json": {"audio_base64": "not base64!!"}}, "audio_base64", "not valid base64"),
        ({"json": {"audio_base64": base64.b64encode(b"hello").decode()}}, "audio_base64",
         "not a WAV"),
        ({"json": {}}, "audio_base64", "Field required"),
        ({"json": {"audio_base64": "", "extra": 1}}, "extra", "Extra inputs"),
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, None,
         "Invalid JSON"),
        ({"files": {"file": ("a.wav", b"ID3 mp3 really", "audio/wav")}}, "file", "not a WAV"),
        ({"files": {"audio": ("a.wav", b"RIFF", "audio/wav")}}, "file", "named 'file'"),
    ],
)  # fmt: skip
def test_transcribe_rejects_bad_input_naming_the_field(server, kwargs, param, says):
    r = post(server, "/api/voice/transcribe", **kwargs)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == param and says in error["message"]
    assert error["type"] == "invalid_request_error"


def test_synthesize_rejects_bad_input_naming_the_field(server):
    r = post(server, "/api/voice/synthesize", json={"text": ""})
    assert r.status_code == 400 and r.json()["error"]["param"] == "text"
    r = post(server, "/api/voice/synthesize", json={"language": "en"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "text"


def test_a_missing_engine_is_a_503_naming_what_to_install(serve, upstream, tmp_path, hibari):
    voice = {"stt": "whisper", "whisper_model_dir": str(tmp_path / "no-model"), "tts": "piper"}
    server = serve(make_config({"primary": upstream}, voice=voice))
    wav = base64.b64encode(write_wav(np.zeros(8000, np.float32), 16_000)).decode()
    r = post(server, "/api/voice/transcribe", json={"audio_base64": wav})
    assert r.status_code == 503
    error = r.json()["error"]
    assert error["code"] == "engine_unavailable"
    assert "pip install 'nerve[voice]'" in error["message"]
    r = post(server, "/api/voice/synthesize", json={"text": "hello"})
    assert r.status_code == 503 and "voice.piper_model" in r.json()["error"]["message"]


def test_health_lists_the_engines(server, espeak):
    voice = httpx.get(f"{server.url}/health", timeout=10).json()["voice"]
    assert voice["tts"]["engines"]["espeak"]["available"] is True
    assert voice["tts"]["selected"]["ta"] == "espeak"
    assert set(voice["stt"]["engines"]) == {"whisper", "pocketsphinx"}
