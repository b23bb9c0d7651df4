"""From the detector's raw confidence to a probability of being right (SPEC LG-2).

The raw confidence (the share of words backing the result, times the sentence's posterior for
its Indic language) orders results well but is not a probability. `calibrated` maps it through
a monotone piecewise-linear table fitted on the tune split only (lines 1-2,500 of each Dakshina
`<lang>.dev.roman.txt`, whole sentences and 1-3-word windows, plus the odd rows of Hinglish-TOP's
English queries), so that results given 0.9 are right about 90% of the time; bench/language.py
measures it on the held-out split.
"""

from __future__ import annotations

import bisect

# (raw, calibrated) knots, raw ascending: the tune split's rows sorted by raw confidence in 20
# equal bins, each bin's mean raw against its share right (neighbours pooled to keep it monotone,
# capped at 0.99). Refit with scripts/fit_language_calibration.py when detection changes.
KNOTS: tuple[tuple[float, float], ...] = (
    (0.0, 0.0),
    (0.256, 0.516),
    (0.424, 0.571),
    (0.557, 0.59),
    (0.7, 0.891),
    (0.869, 0.934),
    (0.905, 0.979),
    (0.909, 0.985),
    (0.917, 0.99),
    (0.965, 0.99),
    (0.979, 0.99),
    (1.0, 0.99),
)


def calibrated(raw: float) -> float:
    """`raw` in 0..1 mapped through KNOTS, rounded to three places."""
    xs = [x for x, _ in KNOTS]
    i = bisect.bisect_right(xs, raw)
    if i <= 0:
        return round(KNOTS[0][1], 3)
    if i >= len(KNOTS):
        return round(KNOTS[-1][1], 3)
    (x0, y0), (x1, y1) = KNOTS[i - 1], KNOTS[i]
    t = (raw - x0) / (x1 - x0) if x1 > x0 else 0.0
    return round(y0 + t * (y1 - y0), 3)
