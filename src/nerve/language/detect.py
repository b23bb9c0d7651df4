"""Which languages a text is written in, and whether it mixes them (SPEC LG-1, LG-2).

Each word votes (see `votes.py`), its neighbours temper an unlisted word's English odds (see
`context.py`), and the sentence then decides. Its Indic language is the one its listed words,
shared words, names and n-gram scores lean to; unlisted words count for English or for that
language; a sentence model over the character n-grams of its words that are not English
(`sentence.py`) adds to that lean when two or more spoke, but never decides English or mixing.
Shared words are settled by the sentence and their neighbours. A language is
reported when it has a real share: a listed word, or one unlisted word beyond doubt, or several
n-gram votes; a second romanized Indic language needs two words of its own, since related
languages lend each other words, and a lone English word that Indic writers spell so too
(`cancer`, `hotel`, `june`), or a listed one the sentence's language uses in its own text
(`run`, `test` in Bengali), is a loanword, not English spoken. Order is by share, except that an
Indic language goes first when its words outnumber English function words: English nouns and
verbs borrowed into a Tamil or Hindi sentence do not make it an English sentence.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from nerve.language.calibration import calibrated
from nerve.language.context import smooth
from nerve.language.normalize import normalize
from nerve.language.sentence import model as sentence_model
from nerve.language.tokens import INDIC, scrub
from nerve.language.votes import Vote, votes_of

_WEAK = 0.5  # an n-gram vote weighs half a listed word
_SHARED_SUPPORT = 0.8  # how much a settled shared word backs the confidence
_SURE = 0.95  # an unlisted word this sure counts even alone
_EN_SHARE = 0.25  # English words under this share of a long sentence are loanwords...
_SHORT = 11  # ...of one longer than this many words...
_SHORT_FOREIGN = 15  # ...or this many, when an English word is one no Indic text uses
_LOANS = 2  # loanwords of the sentence's language beyond this many English words are English
_NAME = 0.5  # a name's spelling counts half a word in the Indic lean
_NATIVE = 20.0  # log-odds a native-script word gives its language
_LISTED = 3.0  # log-odds a curated lexicon's word gives the languages that list it
_CAP = 6.0  # no one word moves the sentence more than this many nats...
_CAP_LISTED = 1.0  # ...and a curated word's spelling little beyond its lexicons' say
_USAGE_TIE = 0.25  # English's edge in settling `in`, `a`, `of`: English, and Indic by usage
_TEMPER = 1.0  # the words of a sentence are not independent: soften the sum
_CLEAR = 0.2  # an unlisted word this unlikely English is clearly its Indic language's own
_SENTENCE = 1.0  # weight of the sentence model's log-odds in the Indic lean...
_SENTENCE_WORDS = 2  # ...for this many words that are not English or more: a lone word's own

Scores = defaultdict[str, float]


@dataclass(frozen=True, slots=True)
class LanguageResult:
    """What `detect` found (the LG-2 record)."""

    languages: list[str]  # ordered by share; Indic first when it dominates
    confidence: float  # 0..1: share of the words whose evidence backs `languages`
    is_code_switched: bool  # more than one language with a real share
    original_text: str
    normalized_text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "languages": list(self.languages),
            "confidence": self.confidence,
            "is_code_switched": self.is_code_switched,
            "original_text": self.original_text,
            "normalized_text": self.normalized_text,
        }


def detect(text: str) -> LanguageResult:
    """Detect the languages of `text` (LG-1, LG-2). Never raises.

    Text with no letters of a supported language (empty, digits, punctuation, other scripts)
    gives `languages=[]` and confidence 0.0: nothing was detected, and callers pick their own
    default. Only the first 2,000 words are examined; the whole text is normalized. Lone
    surrogates are replaced by U+FFFD in both texts of the result, so it always encodes.
    """
    if not isinstance(text, str):  # a caller beyond the type checker's reach
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else ""
    clean = scrub(text)
    languages, confidence = decide(votes_of(clean))
    return LanguageResult(
        languages=languages,
        confidence=confidence,
        is_code_switched=len(languages) > 1,
        original_text=clean,
        normalized_text=normalize(clean, languages) if languages else clean,
    )


def decide(votes: list[Vote]) -> tuple[list[str], float]:
    """The languages the votes support, primary first, and the confidence in them."""
    unlisted = [v for v in votes if v.posterior is not None]
    smooth(votes)
    lean = _indic_lean(votes, unlisted)
    dominant = max(INDIC, key=lambda g: lean[g]) if sum(lean.values()) > 0 else ""
    for vote in unlisted:
        vote.lang = "en" if vote.p_en >= 0.5 else dominant
    _settle_shared(votes, dominant, lean)

    weight: Scores = defaultdict(float)
    for vote in votes:
        if vote.lang:
            weight[vote.lang] += _WEAK if vote.kind == "unlisted" else 1.0
    total = sum(weight.values())
    if total <= 0:
        return [], 0.0
    order = sorted(weight, key=lambda g: (-round(weight[g], 6), g == "en", -lean[g], g))
    top_indic = next((g for g in order if g != "en"), "")
    if dominant in weight and top_indic != dominant:  # the sentence's naive Bayes decides
        order.remove(dominant)
        order.insert(order.index(top_indic), dominant)
        top_indic = dominant
    count = Counter(v.lang for v in votes if v.kind in ("native", "listed"))
    native = Counter(v.lang for v in votes if v.kind == "native")
    loans = _loans(votes, dominant)
    words = Counter(
        v.lang for v in votes if v.kind in ("native", "listed", "shared") and id(v) not in loans
    )
    own = [v for v in unlisted if id(v) not in loans]
    guessed = Counter(v.lang for v in own)
    sure = Counter(v.lang for v in own if _sure(v))
    languages = [order[0]]
    for lang in order[1:]:
        share = weight[lang] / total
        if native[lang]:
            real = True
        elif lang == "en":  # loanwords: two, or one that is a real share of the sentence
            english = words[lang] + sure[lang]
            spoken = sum(1 for v in votes if v.lang)
            real = english >= 1 or guessed[lang] >= 2
            # A sentence of English words no Indic text uses (`reminder`) stays short longer.
            foreign = any(v.foreign and v.lang == "en" for v in votes)
            long = spoken > (_SHORT_FOREIGN if foreign else _SHORT)
            if long and english < 2 and guessed[lang] + english < _EN_SHARE * spoken:
                real = False
        elif any(g != "en" for g in languages):  # a second romanized Indic language...
            real = count[lang] >= 2 and share >= 0.25
        else:  # ...or the first: Indic words in an English sentence, not merely lowercase names
            real = words[lang] >= 1 or sure[lang] >= 1 or (guessed[lang] >= 2 and share >= 0.25)
        if real:
            languages.append(lang)
    _put_matrix_first(languages, votes)
    raw = _confidence(languages, votes)
    if languages[0] != "en" and languages[0] in lean:  # how sure the sentence is of it
        raw *= lean[languages[0]] / sum(lean.values())
    return languages, calibrated(raw)


def _indic_lean(votes: list[Vote], unlisted: list[Vote]) -> Scores:
    """How much the sentence leans to each Indic language: a naive Bayes over its words.

    Each word that is not English adds its log-likelihood per language (the word model's,
    capped so that no one word decides alone), a listed word a bonus for the languages that
    list it, a native-script word near-certainty. The posterior, scaled by the number of
    words that spoke, is the lean. A name's spelling counts too, at `_NAME`, but it does not
    speak: names alone do not make a sentence Indic."""
    score = [0.0] * len(INDIC)
    spoke = 0.0
    spoken: list[str] = []
    for vote in votes:
        if vote.kind == "name":
            if vote.ll is not None:
                top = max(vote.ll)
                for k, value in enumerate(vote.ll):
                    score[k] += _NAME * max(value - top, -_CAP)
            continue
        if vote.kind == "native":
            if vote.lang in INDIC:
                score[INDIC.index(vote.lang)] += _NATIVE
                spoke += 1.0
            continue
        indic = [g for g in vote.cands if g != "en"]
        if vote.kind in ("listed", "shared") and (not indic or "en" in vote.cands):
            continue  # English, or `me` that may well be English
        if vote.kind == "unlisted" and max(vote.p_en, vote.alone) >= 0.5:
            continue  # English, or English-looking: its spelling says little of Indic
        for lang in indic:
            score[INDIC.index(lang)] += _LISTED / len(indic)
        if vote.ll is not None:
            top = max(vote.ll)
            cap = _CAP if vote.kind == "unlisted" else _CAP_LISTED
            for k, value in enumerate(vote.ll):
                score[k] += max(value - top, -cap)
        spoke += 1.0 if indic else 1.0 - vote.p_en
        if vote.word:  # a native-script word has no romanized spelling to read
            spoken.append(vote.word)
    lean: Scores = defaultdict(float)
    if spoke <= 0:
        return lean
    if len(spoken) >= _SENTENCE_WORDS:
        sentence = sentence_model().score(spoken)
        score = [a + _SENTENCE * b for a, b in zip(score, sentence, strict=True)]
    top = max(score)
    weights = [math.exp((value - top) / _TEMPER) for value in score]
    total = sum(weights)
    for lang, weight in zip(INDIC, weights, strict=True):
        lean[lang] = spoke * weight / total
    return lean


def _loans(votes: list[Vote], dominant: str) -> set[int]:
    """The English words (ids) that are loanwords, not English spoken: a lone word, no English
    word beside it, that Indic writers spell so too (an unlisted word Dakshina attests:
    `cancer`, `hotel`; a month: `june`), or a listed word that the sentence's own language uses
    in its text (`run`, `test` in Bengali) when the sentence has few English words. Such a word
    alone does not make an Indic sentence code-switched; a phrase (`ice skating`, `dew point`)
    does, and so does a word no Indic writer spells so (`rootkit`) or any other listed English
    word (`alarm`, `file`)."""
    loans = set()
    english = sum(1 for v in votes if v.lang == "en")
    for i, vote in enumerate(votes):
        loaned = dominant in vote.loaned_by and english <= _LOANS
        if vote.lang != "en" or not (vote.loan or loaned):
            continue
        near = (votes[j] for j in (i - 1, i + 1) if 0 <= j < len(votes))
        if any(other.lang == "en" for other in near):
            continue
        loans.add(id(vote))
    return loans


def _sure(vote: Vote) -> bool:
    """Is an unlisted word beyond doubt: clearly English, or clearly Indic with a typical
    ending of its language or a spelling no lexicon attests (`awardulu`; a lowercase name like
    `jane` has neither: Dakshina spells most names)?"""
    if vote.lang == "en":
        return vote.p_en >= _SURE
    return vote.p_en <= 1.0 - _SURE and (vote.ending == vote.lang or vote.attested == 0)


def _settle_shared(votes: list[Vote], dominant: str, lean: Scores) -> None:
    """Settle each shared word (`me`: English or Hindi; `illa`: Tamil, Kannada or Malayalam).

    English content words fit an Indic sentence as well as an English one, so they count half
    of English function words; Indic words, even shared among Indic languages, count fully. The
    word's neighbours count too, and a name on its left hints at an Indic postposition
    (`Tampa me`), since English puts its prepositions before names."""
    evidence: Scores = defaultdict(float)
    for vote in votes:
        if vote.kind in ("native", "listed"):
            evidence[vote.lang] += 1.0 if vote.lang != "en" or vote.function else 0.5
        elif vote.kind == "unlisted":
            evidence[vote.lang] += 0.25 if vote.lang == "en" else _WEAK
        elif vote.kind == "shared" and "en" not in vote.cands and dominant:
            evidence[dominant] += 1.0
    for i, vote in enumerate(votes):
        if vote.kind != "shared":
            continue
        near: Scores = defaultdict(float)
        for j in (i - 1, i + 1):
            other = votes[j] if 0 <= j < len(votes) else None
            if other is None:
                continue
            if other.kind == "name" and j == i - 1 and dominant:
                near[dominant] += 1.0
            elif other.kind != "shared" and other.lang:
                near[other.lang] += 1.0
        # An English word that is also frequent in Indic sentences stays English on a tie.
        en_edge = _USAGE_TIE if vote.usage else 0.0
        vote.lang = max(
            sorted(vote.cands),
            key=lambda c: (
                evidence[c] + near[c] + (en_edge if c == "en" else 0.0),
                c == dominant,
                c == "en",
                lean[c],
            ),
        )


def _put_matrix_first(languages: list[str], votes: list[Vote]) -> None:
    """English nouns and verbs borrowed into an Indic sentence do not make it English: the Indic
    language goes first when its words (listed, or unlisted and clearly not English) outnumber
    English function words."""
    if len(languages) < 2 or languages[0] != "en":
        return
    indic = languages[1]
    own = sum(1 for v in votes if v.lang == indic and (v.kind != "unlisted" or v.p_en <= _CLEAR))
    english_grammar = sum(1 for v in votes if v.lang == "en" and v.function)
    if own > english_grammar:
        languages[0], languages[1] = indic, "en"


def _confidence(languages: list[str], votes: list[Vote]) -> float:
    """Share of the words whose evidence backs `languages`, discounted for very short texts."""
    backed = 0.0
    counted = 0
    for vote in votes:
        if not vote.lang:
            continue
        counted += 1
        if vote.lang not in languages:
            continue
        if vote.posterior is not None:
            backed += vote.p_en if vote.lang == "en" else 1.0 - vote.p_en
        else:
            backed += _SHARED_SUPPORT if vote.kind == "shared" else 1.0
    if not counted:
        return 0.0
    return round(min(1.0, backed / counted) * (1.0 - 0.3**counted), 3)
