"""An unlisted word's English odds, in the light of its neighbours (SPEC LG-2).

People switch language at phrase boundaries, not at every word: an English-looking word
inside a Bengali sentence (`hoteler`, `chewing`) is more likely a loan or a name written the
English way than English spoken, while two such words side by side (`dew point`) back each
other. `smooth` runs the forward-backward pass of a two-state hidden Markov model (English,
Indic) over the votes: each word's evidence is its own (an unlisted word's posterior, a listed
word's lexicon, nothing for a name), a switch of language between neighbours costs `SWITCH`,
and the posterior replaces each unlisted word's English probability. A lone word keeps its
own odds; listed words are not changed.
"""

from __future__ import annotations

from nerve.language.votes import Vote

SWITCH = 0.07  # probability that the next word is in the other language
_LISTED = 0.1  # how far a listed word's lexicon leans its state: P(English) 0.9 or 0.1
_FLOOR = 1e-6


def _evidence(vote: Vote) -> float:
    """P(English) as the word alone says it."""
    if vote.posterior is not None:
        return vote.p_en
    if vote.kind in ("native", "listed"):
        return 1.0 - _LISTED if vote.lang == "en" else _LISTED
    if vote.kind == "shared":
        return 0.5 if "en" in vote.cands else _LISTED
    return 0.5  # a name


def smooth(votes: list[Vote]) -> None:
    """Replace each unlisted vote's English probability by its posterior given its neighbours
    (its Indic shares scaled to match)."""
    if len(votes) < 2 or all(v.posterior is None for v in votes):
        return
    stay = 1.0 - SWITCH
    evidence = [_evidence(v) for v in votes]
    forward: list[float] = []  # P(English | words up to i), normalised
    en, indic = 0.5, 0.5
    for i, p in enumerate(evidence):
        if i:
            en, indic = en * stay + indic * SWITCH, en * SWITCH + indic * stay
        en, indic = en * p, indic * (1.0 - p)
        total = en + indic
        en, indic = en / total, indic / total
        forward.append(en)
    back_en, back_indic = 1.0, 1.0  # P(words after i | state at i), normalised
    for i in range(len(votes) - 1, -1, -1):
        vote = votes[i]
        if vote.posterior is not None and not _in_phrase(evidence, i):
            en, indic = forward[i] * back_en, (1.0 - forward[i]) * back_indic
            _set_p_en(vote, en / (en + indic))
        p = evidence[i]
        back_en, back_indic = (
            stay * p * back_en + SWITCH * (1.0 - p) * back_indic,
            SWITCH * p * back_en + stay * (1.0 - p) * back_indic,
        )
        total = back_en + back_indic
        back_en, back_indic = back_en / total, back_indic / total


def _in_phrase(evidence: list[float], i: int) -> bool:
    """Does a neighbour of word i lean English too? Then the two are an English phrase
    (`prostate cancer`, `dew point`) and keep their own odds."""
    if evidence[i] < 0.5:
        return False
    return any(0 <= j < len(evidence) and evidence[j] >= 0.5 for j in (i - 1, i + 1))


def _set_p_en(vote: Vote, p_en: float) -> None:
    assert vote.posterior is not None
    p_en = min(max(p_en, _FLOOR), 1.0 - _FLOOR)
    scale = (1.0 - p_en) / max(1.0 - vote.p_en, _FLOOR)
    for lang in vote.posterior:
        vote.posterior[lang] *= scale
    vote.posterior["en"] = p_en
