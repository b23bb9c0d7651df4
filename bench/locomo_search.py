"""Tune the lexical index's knobs on some LoCoMo conversations, then report the held-out ones
once (bench/locomo.py --search).

Coordinate search: from the shipped setting, try each value of one knob with the others fixed,
keep the best by evidence recall@10 on the tune part (a tie keeps the current value), go on to
the next knob, and repeat the rounds until one changes nothing. The held-out part is not read
until the choice is made; then its table is printed once, with an ablation: the chosen setting
with each signal taken away, on both parts (the held-out column is for reporting, never for
choosing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["search"]

# Candidate values per knob; "near", "far" and "third" are the context weights 1, 2, 3 turns away.
KNOBS: dict[str, list[Any]] = {
    "k1": [0.6, 0.9, 1.2, 1.5, 2.0],
    "b": [0.3, 0.5, 0.75, 0.9, 1.0],
    "near": [0.0, 0.3, 0.4, 0.5, 0.6, 0.7],
    "far": [0.0, 0.1, 0.25, 0.35, 0.5],
    "third": [0.0, 0.1, 0.2],
    "session": [0.0, 0.25, 0.5, 0.75, 1.0],
    "speaker": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5],
    "stop_words": [True, False],
}
MAX_ROUNDS = 4


def get(setting: Any, knob: str) -> Any:
    if knob in ("near", "far", "third"):
        weights = (*setting.context, 0.0, 0.0, 0.0)
        return weights[("near", "far", "third").index(knob)]
    return getattr(setting, knob)


def put(setting: Any, knob: str, value: Any) -> Any:
    if knob not in ("near", "far", "third"):
        return dataclasses.replace(setting, **{knob: value})
    weights = [*setting.context, 0.0, 0.0, 0.0][:3]
    weights[("near", "far", "third").index(knob)] = value
    while weights and weights[-1] == 0.0:
        weights.pop()
    return dataclasses.replace(setting, context=tuple(weights))


def search(
    tune: list[Any], held_out: list[Any], evaluate: Callable[[Any, list[Any]], Any], start: Any
) -> Any:
    """The setting chosen on `tune`; prints the path, then the held-out figures once."""
    best, score = start, evaluate(start, tune).at(10)
    print(f"### Coordinate search on the tune part (R@10)\n\nstart: {best}: {score:.3f}\n")
    for round_no in range(1, MAX_ROUNDS + 1):
        moved = False
        for knob, values in KNOBS.items():
            tried = []
            for value in values:
                candidate = put(best, knob, value)
                figure = score if candidate == best else evaluate(candidate, tune).at(10)
                tried.append(f"{value:g}={figure:.3f}" if not isinstance(value, bool)
                             else f"{value}={figure:.3f}")  # fmt: skip
                if figure > score + 1e-9:
                    best, score, moved = candidate, figure, True
            print(f"round {round_no}, {knob}: {', '.join(tried)} -> {get(best, knob)}")
        print()
        if not moved:
            break
    print(f"**chosen: {best}** (tune R@10 {score:.3f})\n")
    evaluate(best, tune).table("#### tune part, chosen setting")
    evaluate(best, held_out).table("#### held-out part, chosen setting (computed once)")
    ablation(best, start, tune, held_out, evaluate)
    return best


def ablation(
    best: Any,
    start: Any,
    tune: list[Any],
    held_out: list[Any],
    evaluate: Callable[[Any, list[Any]], Any],
) -> None:
    before = dataclasses.replace(start, k1=1.2, b=0.75, context=(0.5, 0.25), session=0.0,
                                 speaker=0.0, stop_words=True)  # fmt: skip
    rows = [
        ("before (turn + context BM25, the earlier defaults)", before),
        ("shipped defaults", start),
        ("chosen", best),
        ("chosen, no session blend", put(best, "session", 0.0)),
        ("chosen, no speaker boost", put(best, "speaker", 0.0)),
        ("chosen, no context", dataclasses.replace(best, context=())),
        ("chosen, stop words off", put(best, "stop_words", False)),
    ]
    print("### Ablation\n")
    print("| setting | tune R@5 | tune R@10 | tune R@25 | held-out R@5 | held-out R@10 "
          "| held-out R@25 | ms/query |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, setting in rows:
        a, h = evaluate(setting, tune), evaluate(setting, held_out)
        ms = (sum(a.ms) + sum(h.ms)) / (len(a.ms) + len(h.ms))
        cells = " | ".join(f"{r.at(k):.3f}" for r in (a, h) for k in (5, 10, 25))
        print(f"| {name}: {setting} | {cells} | {ms:.2f} |")
    print()
