"""Voice engines (SPEC VO-1, VO-2). Run: python bench/voice.py [--runs 3] [--sentences 20]

For every engine installed here: TTS real-time factor (synthesis seconds / audio seconds) on the
English round-trip set, espeak-ng's on one sentence per Indian language, STT real-time factor
(resampling to 16 kHz + recognition, / audio seconds) on each TTS engine's audio, and the word
error rate of every TTS × STT pair on the set (nerve.voice.roundtrip). Times are medians over
--runs; models are loaded and warmed before timing. Engines run on the calling thread, one at a
time, as Voice runs them (CPU only). `--piper-model` adds a Piper voice. Every run
re-synthesizes the set (hibari is seeded; Piper samples noise, so its WER can vary by run).
"""

from __future__ import annotations

import argparse
import statistics
import time

from nerve.voice.audio import STT_RATE, resample
from nerve.voice.base import Audio, SpeechToText, TextToSpeech
from nerve.voice.roundtrip import SENTENCES, word_error_rate, words
from nerve.voice.stt_pocketsphinx import PocketsphinxSTT
from nerve.voice.stt_whisper import WhisperSTT
from nerve.voice.tts_espeak import EspeakTTS
from nerve.voice.tts_hibari import HibariTTS
from nerve.voice.tts_piper import PiperTTS

INDIAN = {
    "hi": "नमस्ते, आज मौसम बहुत अच्छा है।",
    "ta": "வணக்கம், இன்று வானிலை மிகவும் நன்றாக உள்ளது.",
    "te": "నమస్కారం, ఈ రోజు వాతావరణం చాలా బాగుంది.",
    "kn": "ನಮಸ್ಕಾರ, ಇಂದು ಹವಾಮಾನ ತುಂಬಾ ಚೆನ್ನಾಗಿದೆ.",
    "ml": "നമസ്കാരം, ഇന്ന് കാലാവസ്ഥ വളരെ നല്ലതാണ്.",
    "bn": "নমস্কার, আজ আবহাওয়া খুব ভালো।",
}


def timed_tts(
    engine: TextToSpeech, texts: list[str], lang: str, runs: int
) -> tuple[float, list[list[Audio]]]:
    """Median RTF, and each run's clips (a run re-synthesizes: Piper samples noise)."""
    engine.synthesize(texts[0], lang, None)  # loads the model
    rtfs, runs_clips = [], []
    for _ in range(runs):
        started, clips = time.perf_counter(), [engine.synthesize(t, lang, None) for t in texts]
        rtfs.append((time.perf_counter() - started) / sum(c.duration_s for c in clips))
        runs_clips.append(clips)
    return statistics.median(rtfs), runs_clips


def timed_stt(
    engine: SpeechToText, runs_clips: list[list[Audio]], texts: list[str]
) -> tuple[float, float]:
    """Median RTF and median WER, one run per TTS run."""
    first = runs_clips[0][0]
    engine.transcribe(Audio(resample(first.samples, first.sample_rate), STT_RATE), "en")
    rtfs, wers = [], []
    for clips in runs_clips:
        started = time.perf_counter()
        heard = [
            engine.transcribe(Audio(resample(c.samples, c.sample_rate), STT_RATE), "en").text
            for c in clips
        ]
        rtfs.append((time.perf_counter() - started) / sum(c.duration_s for c in clips))
        wers.append(word_error_rate(zip(texts, heard, strict=True)))
    return statistics.median(rtfs), statistics.median(wers)


def row(*cells: object) -> str:
    name, what, *numbers = cells
    return f"{name!s:<16}{what!s:<26}" + "".join(f"{n!s:>14}" for n in numbers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    parser.add_argument("--piper-model", default=None, help="a Piper voice .onnx to include")
    args = parser.parse_args()
    texts = [text for text, _ in SENTENCES[: args.sentences]]
    every: list[TextToSpeech | SpeechToText] = [
        EspeakTTS(), HibariTTS(), PiperTTS(args.piper_model), WhisperSTT(None), PocketsphinxSTT()
    ]  # fmt: skip
    for engine in every:
        if not engine.available():
            print(f"skipped {engine.name}: {engine.missing()}")
    tts_engines = [e for e in every if isinstance(e, TextToSpeech) and e.available()]
    stt_engines = [e for e in every if isinstance(e, SpeechToText) and e.available()]

    print(f"\nTTS real-time factor: synthesis s / audio s, median of {args.runs} runs")
    print(row("engine", "text", "audio s", "RTF"))
    clips_by_tts: dict[str, list[list[Audio]]] = {}
    for tts in tts_engines:
        rtf, clips_by_tts[tts.name] = timed_tts(tts, texts, "en", args.runs)
        audio_s = sum(c.duration_s for c in clips_by_tts[tts.name][0])
        print(row(tts.name, f"en, {len(texts)} sentences", f"{audio_s:.1f}", f"{rtf:.4f}"))
    if any(e.name == "espeak" for e in tts_engines):
        for lang, text in INDIAN.items():
            rtf, clips = timed_tts(EspeakTTS(), [text], lang, args.runs)
            print(
                row("espeak", f"{lang}, 1 sentence", f"{clips[0][0].duration_s:.1f}", f"{rtf:.4f}")
            )

    print(f"\nSTT real-time factor: (resampling + recognition) s / audio s, median of {args.runs}")
    print(row("engine", "on the audio of", "audio s", "RTF"))
    wer: dict[tuple[str, str], float] = {}
    for stt in stt_engines:
        for tts_name, runs_clips in clips_by_tts.items():
            rtf, wer[(tts_name, stt.name)] = timed_stt(stt, runs_clips, texts)
            audio_s = sum(c.duration_s for c in runs_clips[0])
            print(row(stt.name, tts_name, f"{audio_s:.1f}", f"{rtf:.4f}"))

    words_n = sum(len(words(t)) for t in texts)
    print(f"\nWER, TTS → STT: {len(texts)} sentences, {words_n} words, median of {args.runs} runs")
    print(row("TTS \\ STT", "", *(s.name for s in stt_engines)))
    for tts_name in clips_by_tts:
        print(row(tts_name, "", *(f"{100 * wer[(tts_name, s.name)]:.1f}%" for s in stt_engines)))


if __name__ == "__main__":
    main()
