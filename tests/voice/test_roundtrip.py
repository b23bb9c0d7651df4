"""Speak English, transcribe it back, count the words that survive (SPEC VO-1, VO-2).

bench/voice.py measures all 20 sentences of the set: hibari → whisper 0.0% WER, hibari →
pocketsphinx 5.1%, espeak-ng → whisper 15.3%, espeak-ng → pocketsphinx 89% (pocketsphinx's
acoustic model does not hear espeak-ng's formant synthesis: measured, not asserted). Here the
first 10 (0.0%, 10.0%, 20.0%), asserted with margin.
"""

from __future__ import annotations

import base64

from nerve.voice import Voice
from nerve.voice.roundtrip import SENTENCES, word_error_rate, words

SET = SENTENCES[:10]


async def trip(speaker: Voice, listener: Voice, tts: str, sentences=SET) -> list[tuple[str, str]]:
    pairs = []
    for text, _ in sentences:
        spoken = await speaker.synthesize(text, "en", voice=tts)
        assert spoken["engine"] == tts
        heard = await listener.transcribe(base64.b64decode(spoken["audio_base64"]), "en")
        assert heard["duration_s"] == spoken["duration_s"] and heard["language"] == "en"
        pairs.append((text, heard["text"]))
    return pairs


async def test_hibari_to_whisper_is_the_english_round_trip(hibari, whisper, voice):
    pairs = await trip(voice, voice, "hibari")
    wer = word_error_rate(pairs)
    print(f"hibari → whisper WER {wer:.1%}")
    assert wer <= 0.05, pairs
    for (_, keys), (_, heard) in zip(SET, pairs, strict=True):
        assert set(keys) <= set(words(heard)), heard


async def test_hibari_to_pocketsphinx_the_light_default(hibari, pocketsphinx, voice, sphinx_voice):
    pairs = await trip(voice, sphinx_voice, "hibari")
    wer = word_error_rate(pairs)
    print(f"hibari → pocketsphinx WER {wer:.1%}")
    assert wer <= 0.2, pairs
    survived = sum(len(set(k) & set(words(h))) for (_, k), (_, h) in zip(SET, pairs, strict=True))
    assert survived >= 0.85 * sum(len(k) for _, k in SET)


async def test_espeak_to_whisper(espeak, whisper, voice):
    pairs = await trip(voice, voice, "espeak")
    wer = word_error_rate(pairs)
    print(f"espeak-ng → whisper WER {wer:.1%}")
    assert wer <= 0.35, pairs


async def test_espeak_to_pocketsphinx_runs_but_is_poor(espeak, pocketsphinx, voice, sphinx_voice):
    pairs = await trip(voice, sphinx_voice, "espeak", SET[:3])
    print(f"espeak-ng → pocketsphinx WER {word_error_rate(pairs):.1%}: {pairs}")
    assert all(isinstance(heard, str) for _, heard in pairs)
