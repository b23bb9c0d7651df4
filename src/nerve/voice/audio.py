"""WAV in and out, and resampling to the 16 kHz mono that speech recognizers take.

Pure numpy (no `audioop`, gone in Python 3.13). `read_wav` accepts PCM 8/16/24/32-bit and IEEE
float WAV, plain or WAVE_FORMAT_EXTENSIBLE, any channel count (mixed down), and the streaming
header `espeak-ng --stdout` writes (a data size it could not know: the bytes present count).
"""

from __future__ import annotations

import io
import math
import struct
import wave
from collections.abc import Callable

import numpy as np

__all__ = ["STT_RATE", "AudioError", "read_wav", "resample", "write_wav"]

STT_RATE = 16_000
_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE


class AudioError(ValueError):
    """The bytes are not audio nerve can use; the message says why."""


def read_wav(data: bytes, *, max_seconds: float | None = None) -> tuple[np.ndarray, int]:
    """Mono float32 samples in [-1, 1] and the sample rate. Raises AudioError."""
    if not data:
        raise AudioError("the audio is empty")
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioError("the audio is not a WAV file (no RIFF/WAVE header)")
    fmt: bytes | None = None
    pcm: bytes | None = None
    pos = 12
    while pos + 8 <= len(data):
        chunk, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        body = data[pos + 8 : pos + 8 + size]
        if chunk == b"fmt ":
            fmt = body
        elif chunk == b"data" and pcm is None:
            pcm = body
        pos += 8 + size + (size & 1)
    if fmt is None or len(fmt) < 16:
        raise AudioError("the WAV file has no valid 'fmt ' chunk")
    if pcm is None:
        raise AudioError("the WAV file has no 'data' chunk")
    tag, channels, rate, _, block, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == _EXTENSIBLE and len(fmt) >= 26:
        tag = int.from_bytes(fmt[24:26], "little")  # the sub-format GUID starts with the tag
    if tag not in (_PCM, _FLOAT) or (tag, bits) not in _DECODERS:
        raise AudioError(
            f"unsupported WAV encoding (format {tag}, {bits}-bit); "
            "send PCM 8/16/24/32-bit or 32/64-bit float"
        )
    if channels < 1 or not 1000 <= rate <= 384_000 or block != channels * bits // 8:
        raise AudioError(f"the WAV header is inconsistent ({channels} channels, {rate} Hz)")
    frames = len(pcm) // block
    if frames == 0:
        raise AudioError("the WAV file holds no samples")
    if max_seconds is not None and frames / rate > max_seconds:
        raise AudioError(
            f"the audio is {frames / rate:.1f} s long; the limit is {max_seconds:g} s "
            "(voice.max_seconds)"
        )
    samples = _DECODERS[(tag, bits)](pcm[: frames * block])
    mono = samples.reshape(frames, channels).mean(axis=1) if channels > 1 else samples
    return np.clip(np.nan_to_num(mono), -1.0, 1.0).astype(np.float32), rate


def _int24(raw: bytes) -> np.ndarray:
    b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
    value = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
    return np.where(value >= 1 << 23, value - (1 << 24), value) / float(1 << 23)


_DECODERS: dict[tuple[int, int], Callable[[bytes], np.ndarray]] = {
    (_PCM, 8): lambda raw: (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128,
    (_PCM, 16): lambda raw: np.frombuffer(raw, "<i2").astype(np.float32) / 32768,
    (_PCM, 24): _int24,
    (_PCM, 32): lambda raw: np.frombuffer(raw, "<i4").astype(np.float64) / 2**31,
    (_FLOAT, 32): lambda raw: np.frombuffer(raw, "<f4").astype(np.float32),
    (_FLOAT, 64): lambda raw: np.frombuffer(raw, "<f8"),
}


def write_wav(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM mono WAV bytes."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return out.getvalue()


def resample(samples: np.ndarray, rate: int, target: int = STT_RATE, half: int = 16) -> np.ndarray:
    """Band-limited (Hann-windowed sinc, 2·half taps) resampling; a cutoff below the new Nyquist.

    Linear interpolation aliases: on hibari's voice it cost pocketsphinx 6.5% WER against 3.8%
    with this filter (a 20-sentence development set).
    """
    if rate == target:
        return samples.astype(np.float32)
    step = rate / target
    count = math.floor(len(samples) / step)
    cutoff = min(1.0, target / rate) * 0.94
    padded = np.concatenate(
        [np.zeros(half, np.float32), samples.astype(np.float32), np.zeros(half + 1, np.float32)]
    )
    taps = np.arange(-half + 1, half + 1, dtype=np.float64)
    out = np.empty(count, np.float32)
    for start in range(0, count, 32_768):
        where = np.arange(start, min(count, start + 32_768)) * step
        base = np.floor(where).astype(np.int64)
        distance = (taps[None, :] - (where - base)[:, None]).astype(
            np.float32
        )  # 4x faster than float64
        weights = (
            cutoff * np.sinc(cutoff * distance) * (0.5 + 0.5 * np.cos(np.pi * distance / half))
        )
        out[start : start + len(where)] = (
            padded[base[:, None] + taps.astype(np.int64) + half] * weights
        ).sum(axis=1)
    return out
