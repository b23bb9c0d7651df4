"""Command shape: is a cue word used as a command, or only mentioned in a statement (RT-2)?

Romanized Indic languages put the verb last, so a request ends in an imperative: "purane logs
hata do", "indha file ah neekku", "is email ka saar batao". The same stems inside a statement are
other forms ("hata diya gaya" was removed, "mitane lagi" began to erase, "muchhhh" is "much") or
stand mid-sentence. An Indic cue therefore commands only when nothing but an imperative helper
(do, karo, dao, kudu, sollu...), a postposition or a particle (na, please, yaar) follows it in its
clause, and, when it is itself last, when what follows its stem is an imperative ending.

English: a verb opening a comma clause commands only when the clause before it has no subject
("We roast marshmallows, tell stories" narrates); a weak frame ("and", "just", "to") only when no
subject precedes it ("Took a trip to clear my mind" is no deletion).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nerve.intent.cues import QUESTION_OPENERS, Token
from nerve.intent.lexicon import FRAMES, LIGHT_VERBS, PAST_FORMS, POSTPOSITIONS, words

__all__ = [
    "COPULAS",
    "RELATIVES",
    "STATEMENT_ENDS",
    "SUBJECTS",
    "clause_end",
    "closes_command",
    "imperative",
    "indic_command",
    "inside",
    "narrated",
    "negated",
    "not_an_order",
    "quoted",
    "stated",
    "told",
    "wished",
]

# Endings that make a stem an imperative wherever it stands, for code-mixed requests put English
# after the verb ("alarms dikhao for next week", "Mike se pucho if he is home"): hatao, hatado,
# dikhaiye, anuppunga, vivarinchandi...
COMMAND_ENDINGS = frozenset(
    words(
        "o, oo, iye, ie, ijiye, iyega, yen, ein, do, dijiye, unga, ungal, ungo, andi, nchandi",
        "nchu, ndi, de, dein",
    )
)
# Endings that are imperatives only when the verb ends its clause: anuppu, alisi, bheje, teesey.
IMPERATIVE_ENDINGS = COMMAND_ENDINGS | frozenset(
    (*words("u, uu, e, ye, en, aye, aiye, un, ngal, nga, chu, ku, kku, yu, yi, veyi, haaku"), "")
)
_PLAIN_ENDINGS = COMMAND_ENDINGS | frozenset((*words("u, uu, yu, ku, kku, ye, en"), ""))
# Helpers that make the verb before them a request, in imperative form only ("kar diya" narrates).
HELPERS = frozenset(
    words(
        "do, de, dein, den, dedo, dijiye, dena, karo, kar, kare, karen, karein, kariye, kijiye",
        "kardo, karde, kardein, dalo, daalo, daaliye, lo, lijiye, batao, bataiye, bolo, dikhao",
        "pannu, pannunga, pannungal, panni, kudu, kodunga, sollu, sollunga, kaattu, vidu",
        "cheyyi, chey, cheyyandi, cheyandi, ivvu, ivvandi, cheppu, cheppandi, veyyi, veyi",
        "maadi, maadu, kodi, kodu, helu, heli, haaku, haaki, bidi, paao, pao, paaye, paayen",
        "cheyyu, cheyyuka, tharu, thaa, parayu, kaanikku, kalayu",
        "koro, korun, kore, dao, din, dio, felo, phelo, felun, bolo, bolun, dekhao",
        "sakte, sakti, sakta, sakoge, sakogi, sakenge",  # hi: "bhej sakte hain?" asks for it
    )
)
_AUXILIARIES = frozenset(words("hain, hai, ho, he, hu, kya"))
# Particles that may close a request: politeness, urgency, address.
PARTICLES = frozenset(
    words(
        "na, naa, please, pls, plz, plss, jaldi, abhi, now, yaar, yar, bro, bhai, anna, da, di",
        "ra, ji, sir, madam, re, zara, jara, quickly, asap, pa, ma, machan, dude, once, ok",
        "okay, fast, immediately, mujhe, me, enakku, naaku, nanage, enikku, amake, for, kindly",
    )
)
# Clause-internal words that open a new clause ("bhejo ki meeting 5 baje hai", "aur bhejo").
JOINERS = frozenset(words("ki, aur, and, then, phir, fir, tarvatha, matrum, mattu, pinne, tarpor"))
# A subject before the verb makes the clause a statement, not a request.
SUBJECTS = frozenset(
    words(
        "i, we, he, she, they, it, my, our, his, her, their, i'm, im, i've, i'll, i'd, we're",
        "we've, we'll, it's, its, there, that's, this, these, those, he's, she's, they're",
        "main, mai, maine, hum, humne, usne, unhone, woh, wo, naan, naanu, nenu, njan, ami",
        "amra, you, u, you're, youre",
        "avan, aval, avar, avanga, avargal, vaadu, aame, atanu, avanu, avalu, avaru, naanu",
        "usne, unhone, maine, humne, tumne, aapne, tune, isne, inhone",  # hi ergatives: did
    )
)


def clause_end(tokens: Sequence[Token], i: int) -> int:
    """Index one past the last token of the clause holding token i."""
    j = i + 1
    while j < len(tokens) and not tokens[j].opens and tokens[j].word not in JOINERS:
        j += 1
    return j


def closes_command(tokens: Sequence[Token], last: int) -> tuple[bool, bool]:
    """(only helpers, postpositions and particles follow `last` in its clause,
    at least one imperative helper is among them)."""
    helper = False
    for token in tokens[last + 1 : clause_end(tokens, last)]:
        if token.word in HELPERS:
            helper = True
        elif helper and token.word in _AUXILIARIES:
            continue  # "bhej sakte hain": can you send
        elif token.word not in PARTICLES and token.word not in POSTPOSITIONS:
            return False, False
    return True, helper


def indic_command(
    tokens: Sequence[Token], last: int, rest: str, *, destructive: bool = False
) -> bool:
    """An Indic verb form ending at token `last` (`rest`: what follows its stem) commands.
    A verb that ends a clause but not its sentence is a gerund in a list ("tegedu, sutti,
    ..."); a destructive one takes only the plainest imperative endings ("kalaye" is no order)."""
    if rest in COMMAND_ENDINGS:
        return True
    closes, helper = closes_command(tokens, last)
    if not closes:
        return False
    if helper:
        return True
    end = clause_end(tokens, last)
    if end < len(tokens) and not tokens[end].sentence and tokens[end].word not in JOINERS:
        return False
    return rest in (_PLAIN_ENDINGS if destructive else IMPERATIVE_ENDINGS)


COPULAS = frozenset(words("was, is, were, are, has, had, tha, thi, hai"))  # not "the": English
# Words that deny a verb in its clause: "delete mat karo", "don't delete it", "delete karne ka
# mann nahi" ask for no deletion, "didn't see that" looks up nothing ("na" is left out: "karo
# na" begs; so is "no": "mom ko no text kare" sends one).
NEGATIONS = frozenset(
    words(
        "nahi, nahin, mat, don't, dont, never, not, illa, illai, vendam, venda, ledu, beda",
        "didn't, didnt, doesn't, doesnt, can't, cant, cannot, couldn't, couldnt, won't, wont",
        "wouldn't, wouldnt, shouldn't, shouldnt, haven't, havent, hasn't, isn't, wasn't",
        "aren't, weren't, mustn't",
    )
)


# Negations that follow the verb they deny, SOV-style; after an English verb "no" is content
# ("text mom no").
_NEGATIONS_AFTER = frozenset(
    words("nahi, nahin, mat, illa, illai, vendam, venda, ledu, beda, vaddu")
)


def negated(tokens: Sequence[Token], first: int) -> bool:
    """A negation next to the verb at token `first`, in its clause: two words before ("don't
    delete"), four after in Indic ("delete mat karo", "delete karne ka mann nahi"). Farther away
    it denies something else ("chicken ki zaroorat nahi hai, wo reminder delete karo")."""
    start, end = first, min(clause_end(tokens, first), first + 5)
    while start > max(0, first - 2) and not (tokens[start].opens or tokens[start].sentence):
        start -= 1
    return any(t.word in NEGATIONS for t in tokens[start:first]) or any(
        t.word in _NEGATIONS_AFTER for t in tokens[first:end]
    )


# Before a verb, a modal or "to" makes it a statement or a plan, not an order ("that would get
# old", "long time to see"); a determiner, possessive or copula makes it a noun ("that was text
# speak", "the show", "my check"). Request frames ("can you", "want to") are read before this.
_NOT_ORDERS = frozenset(
    words(
        "would, could, should, might, must, will, can, may, shall, to, gonna, gotta, 'd, wud, cud",
        "a, an, the, my, your, his, her, our, their, its, this, that, was, is, were, are, be",
        "been, being, every, each, some, no, any, of",
    )
)


def not_an_order(tokens: Sequence[Token], first: int) -> bool:
    """The word before the verb at token `first`, in its clause, makes it no order."""
    return first > 0 and not tokens[first].opens and tokens[first - 1].word in _NOT_ORDERS


_QUOTES = {'"': '"', "\u201c": "\u201d", "\u00ab": "\u00bb"}


def quoted(text: str) -> list[tuple[int, int]]:
    """Spans of text inside double quotes, when words stand outside them too: a title, a slogan,
    reported speech ("usne kaha \"isko hatao\"", 'the poem "What Do I Remember"'). A text
    that is all quote is the request itself."""
    if '"' not in text and "\u201c" not in text and "\u00ab" not in text:
        return []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        close = _QUOTES.get(text[i])
        if close is None:
            i += 1
            continue
        j = text.find(close, i + 1)
        if j < 0:
            break
        spans.append((i, j))
        i = j + 1
    outside = text
    for a, b in reversed(spans):
        outside = outside[:a] + outside[b + 1 :]
    return spans if any(c.isalnum() for c in outside) else []


def inside(spans: Sequence[tuple[int, int]], position: int) -> bool:
    return any(a < position < b for a, b in spans)


# Endings of a statement: copulas and finite past or modal forms ("Reboot ek 2013 ki film hai",
# "database drop karna galat hai", "server band kar dena chahiye", "system band karna shuru
# kiya"). A verb in a sentence that ends so names, describes or judges an act; it orders none.
STATEMENT_ENDS = frozenset(
    words(
        "hai, hain, tha, thi, thin, hoga, hogi, honge, hota, hoti, hote, hua, hui, hue, gaya",
        "gayi, gaye, gai, gya, diya, diye, kiya, kiye, chahiye, sakta, sakti, chuka, chuki",
        "chuke, raha, rahi, rahe, jata, jati, jaate, jaati, milta, lagta, lagti",  # hi
        "aagum, irukku, irukkum, irundhadhu, aanadhu, pattadhu, ullathu, aachu",  # ta
        "undi, unnadi, ayindi, ayyindi, chesaru, chesindi, jarigindi",  # te
        "ide, ittu, aagide, aayitu, aaytu, maadidaru",  # kn
        "aanu, undu, aayirunnu, cheythu",  # ml
        "hoy, chhilo, chilo, hoyechhe, ache, achhe, korechhe",  # bn
    )
)
_COPULA_ENDS = frozenset(words("hai, hain, tha, thi"))  # "delete karna hai": I need it done
# Words that open another clause, after which the sentence's ending is no longer the verb's:
# "alarms delete kardo jo bhi maine set kiye hai".
RELATIVES = frozenset(
    words(
        "jo, jis, jise, jisko, jiske, jinhe, jinko, jab, jahan, agar, kyunki, lekin, magar, aur",
        "kyonki, kyoki, kyuki, kyunke, taaki, warna, varna",
        "and, then, phir, but, because, which, who, that, if, when, while",
    )
)


def stated(tokens: Sequence[Token], i: int, text: str) -> bool:
    """The sentence holding the verb at token i ends as a statement, not a request ("kya aap
    ise hata sakte hain?" asks for it)."""
    j = i + 1
    while j < len(tokens) and not tokens[j].sentence:
        if tokens[j].word in RELATIVES:
            return False
        j += 1
    last = tokens[j - 1]
    if j - 1 <= i or last.word not in STATEMENT_ENDS or "?" in text[last.end : last.end + 3]:
        return False
    before = tokens[j - 2].word
    return not (last.word in _COPULA_ENDS and before.endswith(("na", "ni", "ne")))


def told(tokens: Sequence[Token], last: int) -> bool:
    """A past send form ("ayachu": sent) with no imperative helper after it: a story."""
    return tokens[last].word in PAST_FORMS and not closes_command(tokens, last)[1]


def narrated(tokens: Sequence[Token], first: int) -> bool:
    """A subject stands before token `first` in its sentence: "we roast marshmallows, tell
    stories", "gonna check out", "to clear my mind"."""
    i = first - 1
    while i >= 0:
        if tokens[i].word in SUBJECTS:
            return True
        if tokens[i].opens and tokens[i].sentence:
            return False
        i -= 1
    return False


_WISHES = frozenset(words("want, wanna, need, gotta, like, love, ready"))


def wished(tokens: Sequence[Token], first: int) -> bool:
    """The speaker wants what the verb does: "I want to go see ice skating", "I need to record
    a video message" ask for it, "I sent him a message" tells."""
    for token in reversed(tokens[max(0, first - 8) : first]):
        if token.word in _WISHES:
            return True
        if token.word in SUBJECTS or token.sentence:
            return False
    return False


def _words(phrase: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in re.findall(r"\w+(?:['-]\w+)*", phrase))


_FRAMES = frozenset(_words(f) for f in FRAMES)
# Frames that also link a statement's clauses ("and check out", "to clear my mind", "just
# wanted"): they frame a command only when no subject stands before them.
_WEAK_FRAMES = frozenset(
    _words(f) for f in words("just, now, quickly, ok, okay, also, then, and, aur, want to, so")
)
_COORDINATORS = frozenset(_words(f) for f in words("and, aur, then, also"))  # "X and send it"
_LIGHT = frozenset(_words(v) for v in LIGHT_VERBS)
_FRAME_LENGTHS = sorted({len(f) for f in _FRAMES}, reverse=True)  # "i would like to" over "to"
_LIGHT_LENGTHS = sorted({len(v) for v in _LIGHT}, reverse=True)  # "kar do" over "kar"
_BARE_LIGHT = frozenset(_words(v) for v in words("kar, de, karna, panni, kore"))


def _clause_opener(tokens: Sequence[Token], i: int) -> Token:
    while i > 0 and not tokens[i].opens:
        i -= 1
    return tokens[i]


def imperative(
    tokens: Sequence[Token],
    first: int,
    last: int,
    text: str,
    openers: frozenset[str] = QUESTION_OPENERS,
    *,
    closing: bool = True,
) -> bool:
    """An English verb commands when it opens a sentence, or a clause after one with no subject;
    follows a frame ("please", "can you"); comes before an Indic light verb that ends its clause
    ("delete karo", not "delete kar diya"), or closes a clause that asks nothing ("users table
    delete", "Priya ko tell ki ...": Hindi ki opens the clause that follows)."""
    if last + 1 < len(tokens) and tokens[last + 1].word in COPULAS:
        return False  # "show was amazing", "check is in the mail": a noun before its verb
    if tokens[first].opens:
        return tokens[first].sentence or not narrated(tokens, first)
    for n in _FRAME_LENGTHS:
        frame = tuple(t.word for t in tokens[first - n : first]) if n <= first else ()
        if frame in _FRAMES:
            if frame not in _WEAK_FRAMES:
                return True
            opens = tokens[first - n].opens or frame in _COORDINATORS
            return opens and not narrated(tokens, first - n)
    if _clause_opener(tokens, first).word in openers:
        return False  # "what does DROP do?" asks
    for n in _LIGHT_LENGTHS:
        light = tuple(t.word for t in tokens[last + 1 : last + 1 + n])
        if light in _LIGHT:
            # karo/kariye/pannu command wherever English follows ("message karo ke I'm late");
            # bare kar/de may be narration ("delete kar diya") unless they end the clause
            return light not in _BARE_LIGHT or closes_command(tokens, last + n)[0]
    nxt = tokens[last + 1] if last + 1 < len(tokens) else None
    # a clause closed by a comma mid-sentence is a gerund in a list ("gate tegedu, olage hogi")
    closes = nxt is None or nxt.sentence or nxt.word == "ki"
    return (
        closing
        and closes
        and "?" not in text[tokens[last].end : tokens[last].end + 3]
        and not narrated(tokens, first)
    )
