"""WAV parsing and resampling: the formats callers send, the errors they get, no aliasing."""

from __future__ import annotations

import io
import struct
import wave

import numpy as np
import pytest

from nerve.voice.audio import AudioError, read_wav, resample, write_wav


def tone(freq: float, rate: int, seconds: float = 0.5, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def pcm_wav(raw: bytes, rate: int, width: int, channels: int = 1) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(raw)
    return out.getvalue()


def riff(fmt: bytes, data: bytes, *, data_size: int | None = None) -> bytes:
    size = len(data) if data_size is None else data_size
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", size) + data
    return b"RIFF" + struct.pack("<I", min(len(body), 0xFFFFFFFF)) + body


def test_16_bit_round_trips_through_write_wav():
    x = tone(440, 16_000)
    samples, rate = read_wav(write_wav(x, 16_000))
    assert rate == 16_000 and len(samples) == len(x) and samples.dtype == np.float32
    assert np.max(np.abs(samples - x)) < 1e-4


@pytest.mark.parametrize(
    ("width", "encode"),
    [
        (1, lambda x: ((x * 127) + 128).astype(np.uint8).tobytes()),
        (3, lambda x: b"".join(int(v * 8_388_607).to_bytes(3, "little", signed=True) for v in x)),
        (4, lambda x: (x * 2_147_483_647).astype("<i4").tobytes()),
    ],
)
def test_8_24_and_32_bit_pcm(width, encode):
    x = tone(300, 8_000, 0.1)
    samples, rate = read_wav(pcm_wav(encode(x), 8_000, width))
    assert rate == 8_000 and len(samples) == len(x)
    assert np.max(np.abs(samples - x)) < 0.01


def test_float_stereo_extensible_is_mixed_down():
    left, right = tone(200, 22_050, 0.1), np.zeros(2205, np.float32)
    frames = np.stack([left, right], axis=1).astype("<f4").tobytes()
    guid_tail = bytes.fromhex("000000001000800000aa00389b71")
    fmt = struct.pack("<HHIIHH", 0xFFFE, 2, 22_050, 22_050 * 8, 8, 32)
    fmt += struct.pack("<HHI", 22, 32, 3) + struct.pack("<H", 3) + guid_tail
    samples, rate = read_wav(riff(fmt, frames))
    assert rate == 22_050 and np.allclose(samples, left / 2, atol=1e-6)


def test_a_streaming_header_counts_the_bytes_present():
    """espeak-ng --stdout cannot seek back, so its data size is 0x7fffffff-ish."""
    x = tone(440, 22_050, 0.2)
    raw = (x * 32767).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, 22_050, 44_100, 2, 16)
    samples, _ = read_wav(riff(fmt, raw, data_size=0x7FFFF000))
    assert len(samples) == len(x)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "empty"),
        (b"ID3\x04not a wav at all", "not a WAV"),
        (b"RIFF\x04\x00\x00\x00WAVE", "no valid 'fmt '"),
        (riff(struct.pack("<HHIIHH", 2, 1, 8000, 4000, 1, 4), b"\x00" * 100), "unsupported"),
        (riff(struct.pack("<HHIIHH", 1, 1, 16_000, 32_000, 2, 16), b""), "no samples"),
        (riff(struct.pack("<HHIIHH", 1, 1, 50, 100, 2, 16), b"\x00" * 10), "inconsistent"),
    ],
)
def test_bad_audio_is_named(data, says):
    with pytest.raises(AudioError, match=says):
        read_wav(data)


def test_too_long_names_the_limit():
    wav = write_wav(np.zeros(16_000 * 3, np.float32), 16_000)
    assert len(read_wav(wav, max_seconds=3)[0]) == 48_000
    with pytest.raises(AudioError, match=r"3\.0 s long; the limit is 2 s \(voice.max_seconds\)"):
        read_wav(wav, max_seconds=2)


@pytest.mark.parametrize("rate", [8_000, 22_050, 24_000, 44_100, 48_000])
def test_resampling_keeps_a_tone_in_band(rate):
    y = resample(tone(1_000, rate), rate)
    assert abs(len(y) - 8_000) <= 1
    spectrum = np.abs(np.fft.rfft(y[1000:7000]))
    assert abs(np.argmax(spectrum) * 16_000 / 6000 - 1_000) < 5
    assert 0.3 < np.sqrt(np.mean(y[1000:7000] ** 2)) < 0.4  # 0.5 / sqrt(2), kept


def test_resampling_removes_what_would_alias():
    """10 kHz at 44.1 kHz would fold to 6 kHz at 16 kHz; the filter takes it out."""
    y = resample(tone(10_000, 44_100), 44_100)
    assert np.sqrt(np.mean(y[1000:7000] ** 2)) < 0.01
