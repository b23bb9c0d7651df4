"""From text to votes: what each word says about its language (SPEC LG-1).

A native-script word votes for its script's language. A romanized word a lexicon lists votes for
the languages that list it: `listed` when one does, `shared` when several do (`me` is English and
Hindi, `illa` Tamil, Kannada and Malayalam) and the sentence must settle it. Any other word is
`unlisted` and carries the n-gram model's posterior. A capitalised word inside a sentence that
English does not list, or a short acronym, is a `name`: it holds its place between neighbours
and says nothing of English, but its spelling hints at which Indic language (`Ramalingaiah`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from itertools import islice

from nerve.language.lexicon import load
from nerve.language.ngram import model
from nerve.language.tokens import INDIC, TOKEN, fold, lookup_forms, script_lang
from nerve.language.wordmodel import model as word_model

MAX_TOKENS = 2000  # words examined: a long text's language shows in its beginning
SCAN_CHARS = 64_000
_SENTENCE_END = re.compile(r"[.!?\n।]")
# English month names are the Indic languages' own too (जून, ஜூன்): loanwords, like an unlisted
# word Dakshina's Indic writers spell as English does.
_MONTHS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august"}
    | {"september", "october", "november", "december"}
)
_MIX = 0.75  # weight of the word model's English log-odds against the n-gram model's


class Vote:
    """One word's evidence, and the language it is finally counted for (`lang`)."""

    __slots__ = (
        "alone",
        "attested",
        "cands",
        "ending",
        "foreign",
        "function",
        "kind",
        "lang",
        "ll",
        "loan",
        "loaned_by",
        "posterior",
        "usage",
        "word",
    )

    def __init__(self, kind: str, cands: frozenset[str], posterior: dict[str, float] | None = None):
        self.kind = kind  # "native", "listed", "shared", "unlisted" or "name"
        self.cands = cands  # the languages that list the word
        self.posterior = posterior  # n-gram posterior of an unlisted word
        self.alone = self.p_en  # P(English) by the word alone, before its neighbours (context)
        self.function = False  # an English function word (the, to, my...)
        self.ending: str | None = None  # whose typical ending an unlisted word has
        self.ll: tuple[float, ...] | None = None  # log P(word | Indic language), INDIC order
        self.attested = 0  # how well Dakshina attests the spelling: 0, 1 or 2
        self.usage = False  # an English word that Indic sentences use often (`a`, `in`)
        self.loan = False  # an English word Indic writers use as their own (`june`, `cancer`)
        self.loaned_by: frozenset[str] = frozenset()  # languages that use a listed one (`run`)
        self.foreign = False  # a listed English content word no Indic sentence uses (`reminder`)
        self.lang = next(iter(cands)) if len(cands) == 1 else ""
        self.word = ""  # the romanized word, folded: what the sentence model reads

    @property
    def p_en(self) -> float:
        return self.posterior["en"] if self.posterior is not None else 0.5


def votes_of(text: str) -> list[Vote]:
    """The votes of the first MAX_TOKENS words of `text`."""
    words = list(_words(text[:SCAN_CHARS]))
    upper = sum(1 for token, _ in words if len(token) > 1 and token.isupper())
    shouting = upper * 2 > len(words)  # an all-caps text has no telling capitals
    words_model = word_model()
    english_function = load().by_lang["en"].function
    votes: list[Vote] = []
    names: list[str] = []
    for token, opens in words:
        script = script_lang(token)
        if script is None:
            continue
        if script != "latin":
            votes.append(Vote("native", frozenset((script,))))
            continue
        key, langs = _lookup(token)
        usage: frozenset[str] = frozenset()
        # `a`, `in`, `per` are also words of Indic sentences, `college` a loan they use: the
        # sentence settles them. A capital `I` is English's own (`I-75`).
        if "en" in langs and token != "I":
            usage = words_model.indic_usage(key, key in english_function) - langs
            langs |= usage
        name = not shouting and _is_name(token, opens, langs)
        if langs and not name:
            vote = Vote("listed" if len(langs) == 1 else "shared", langs)
            vote.function = key in english_function
            vote.usage = bool(usage)
            vote.loan = langs == {"en"} and key in _MONTHS
            if "en" in langs and not vote.function:
                vote.loaned_by = words_model.loaned(key)
                vote.foreign = langs == {"en"} and not words_model.used(key)
            if langs != {"en"}:
                vote.ll = words_model.loglik(words_model.form(key))[:-1]
            vote.word = key
            votes.append(vote)
            continue
        word = fold(token)
        if len(word) < 2 or "'" in word:
            continue
        if name:
            names.append(word)
            vote = Vote("name", frozenset())
            vote.ll = words_model.loglik(words_model.form(word))[:-1]
            vote.word = word
            votes.append(vote)
        else:
            votes.append(_unlisted(word))
    if names and len(names) == len(votes):  # names are all there is: let them speak
        return [_unlisted(name) for name in names]
    return votes


def _unlisted(word: str) -> Vote:
    """A word no lexicon lists: the n-gram model's English odds, lowered when Dakshina attests
    the spelling, and the word model's Indic likelihoods."""
    words_model = word_model()
    form = words_model.form(word)
    attested = words_model.attested(form)
    *ll, ll_en = words_model.loglik(form)
    posterior = dict(model().posterior(word))
    p_en = min(max(posterior["en"], 1e-6), 1 - 1e-6)
    if words_model.loaded:
        # English against the Indic group, equal priors: the word model's log-odds, averaged
        # with the small n-gram model's, which knows the curated endings.
        top = max(ll)
        indic = top + math.log(sum(math.exp(x - top) for x in ll) / len(ll))
        logodds = _MIX * (ll_en - indic) + (1 - _MIX) * math.log(p_en / (1 - p_en))
        p_en = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logodds))))
        weights = [math.exp(x - top) for x in ll]
        total = sum(weights)
        posterior = {lang: (1.0 - p_en) * w / total for lang, w in zip(INDIC, weights, strict=True)}
    posterior["en"] = p_en
    vote = Vote("unlisted", frozenset(), posterior)
    vote.ending = model().ending_lang(word)
    vote.ll = tuple(ll)
    vote.attested = attested
    vote.loan = attested > 0
    vote.word = form
    return vote


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """Tokens with a flag: does the token open a sentence (so its capital says nothing)?"""
    end = 0
    for match in islice(TOKEN.finditer(text), MAX_TOKENS):
        opens = end == 0 or _SENTENCE_END.search(text, end, match.start()) is not None
        end = match.end()
        yield match.group(), opens


def _lookup(token: str) -> tuple[str, frozenset[str]]:
    langs_of = load().langs_of
    for form in lookup_forms(token):
        for key in (form, form.split("'", 1)[0]):  # "timer's" -> "timer"
            found = langs_of.get(key)
            if found:
                return key, found
    return "", frozenset()


def _is_name(token: str, opens: bool, listed_in: frozenset[str]) -> bool:
    """A capitalised word inside a sentence that English does not list (`Jo`, `Bon Jovi`), or a
    short acronym (`GA`, `NYC`), is a name: it says nothing about the language around it."""
    if "en" in listed_in:
        return False
    if 2 <= len(token) <= 4 and token.isupper():
        return True
    return token[0].isupper() and not opens
