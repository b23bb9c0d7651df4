"""Chit-chat: what marks a text as conversation rather than a command (SPEC RT-2).

Read before any intent is scored. Greetings, thanks, praise, affection, laughter, reactions and
emoji are conversation; so is a question about the person addressed ("how have you been?",
"aap kaise ho?"). None of them forbids a command ("thanks, now send it to Priya" still sends):
rules.py lets them outweigh only weak cues, and answers `chat` when no command-shaped cue is left.

To teach it a word, add it to the lists below (English first, then romanized Indic and slang).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nerve.intent.cues import Token
from nerve.intent.lexicon import words

__all__ = ["ChatReading", "read"]

# Reactions that outweigh a weak cue: "Wow, what happened?" is no lookup.
REACTIONS = frozenset(
    words(
        "thanks, thank, thanku, thankyou, thx, ty, tysm, wow, woww, lol, lmao, rofl, haha",
        "hahaha, hehe, hihi, whoa, omg, yay, yayy, luv, lub, congrats, congratulations, aww, awww",
        "xoxo, muah, bestie, wassup, sup",
        "shukriya, dhanyavaad, dhanyawad, badhai, mubarak, wah, waah, kamaal, zabardast",  # hi
        "semma, thalaiva, thalaivaa, nandri, kalakkal, kalakku, super-u",  # ta
        "keka, adurs, abbo, dhanyavaadalu",  # te
        "sakkat, chennagide, dhanyavadagalu",  # kn
        "pwoli, adipoli, kidu, kidilam, nanni",  # ml
        "darun, dhonnobad, osadharon, jhakkas",  # bn
        "bossu, bossuu, bossuuu, bossuuuu, thala",
    )
)
# Praise, feelings and address: conversation when nothing else is asked ("super anna", "nice"),
# but ordinary words in a request ("fun events in Seattle", "is the weather nice").
MILD = frozenset(
    words(
        "love, loved, lovely, awesome, amazing, cool, nice, great, wonderful, fantastic, cute",
        "beautiful, sweet, sad, sorry, miss, proud, glad, happy, excited, inspiring, fun",
        "brilliant, superb, super, sooper, yeah, yep, yup, nope, ugh, hmm, ohh, oh, ooh, bye",
        "welcome, goodnight, bro, dude, mass, vera, level, machan, machi, anna, annae, akka",
        "thambi, mast, bindaas, yaar, yaara, bhai, bhaiya, didi, jaan, pyaar, pyar, bohot",
        "sundar, accha, acha, achha, theek, thik, bagundi, baagundi, chala, babu, bava, mama",
        "tumba, guru, maga, poli, chetta, chettan, chechi, mone, mole, khub, bhalo, dada",
        "bondhu, boss, macha, anney, jai",
    )
)
# Greetings and farewells: conversation on their own, but they open commands as often.
GREETINGS = frozenset(
    words(
        "hi, hii, hiii, hello, hellooo, hey, heyy, heyyy, yo, hola, gm, gn",
        "namaste, namaskar, namaskara, namaskaram, vanakkam, salaam, salam, pranam, ram",
        "nomoshkar, cheers, ciao",
    )
)
# The person addressed: a question about them is conversation, not a lookup.
YOU = frozenset(
    words(
        "you, your, yours, yourself, u, ur, ya, you're, youre, you've, you'll, you'd, y'all",
        "aap, aapka, aapki, aapke, aapko, tum, tumhara, tumhari, tumhe, tumko, tu, tera, teri",
        "nee, nenga, neenga, ungal, unga, unnoda, ninga, nuvvu, meeru, mee, neenu, neevu",
        "ninna, nimma, ningal, ninte, ningalude, tumi, tomar, apni, apnar, tui, tor",
        "tune, tumne, tujhe, tumhe, tumse, tumhare, tumhein, aapne, aapse, tujhse, tere",  # hi
        "unakku, ungalukku, unnoda, neeku, meeku, ninnu, mimmalni, ninage, nimage, ninakku",
        "ningalkku, ningale, ninne, tomake, tomra, tomader, toke, apnake, tomay",
    )
)
# Verbs of what people do, say and feel: a question about them ("amma enna sonnanga?", "usko
# kya hua?", "how was the party?") is conversation, not a lookup, when it names no topic.
PERSONAL = frozenset(
    words(
        "happened, happen, said, say, went, felt, feel, ate, eat, liked, enjoyed, slept, how was",
        "hua, hui, bola, boli, bole, kaha, kahi, khaya, khayi, khaye, laga, lagi, lage",
        "socha, sochi, pasand, scene",  # hi
        "sonnanga, sonnan, sonna, sonnaal, pesuran, pesura, saaptiya, saapteengala, pochu",
        "aachu, panra, panreenga, pannitta, pannuna, pidichiccha, pidichirukka",  # ta
        "annaru, annadu, annavu, emannaru, emannadu, emandi, matladadu, matladav, tinnava",
        "tinnara, chestunnav, chesav, jarigindi, ayyindi, chesadu, chesindi",  # te
        "helidru, helida, helidlu, maathadtane, maathadidru, oota, aaytha, aaytu, aaythu",
        "maadthidiya, maadtidiya, maadide, maadidru",  # kn
        "paranju, paranjathu, paranjo, kazhicho, kazhichu, cheyyunnu, cheythu, sambhavichu",
        "bollo, bolle, boleche, kheyecho, kheyechis, korcho, korchis, korchen, holo, hoyeche",
    )
)
# ...but not a question about when, where or how much: "Aaj subah sunrise kab hua tha" asks.
_DATA_QUESTIONS = frozenset(
    words(
        "when, where, kab, kahan, kahaan, kidhar, kitna, kitne, kitni, eppo, eppodhu, enga",
        "evvalavu, eppudu, ekkada, entha, yaavaga, yavaga, elli, eshtu, eppol, evide, ethra",
        "kobe, kothay, koto",
    )
)
_PERSONAL_PHRASES = frozenset(w for w in PERSONAL if " " in w)
_PERSONAL_WORDS = PERSONAL - _PERSONAL_PHRASES
# "can you send", "do you know": the addressee is asked to act, not asked about.
_REQUEST_YOU = re.compile(
    r"\b(?:can|could|would|will|wud|cud|pls|please)\s+(?:you|u|ya)\b|\bdo\s+(?:you|u)\s+know\b"
    r"|\b(?:you|u)\s+(?:should|must|need\s+to|have\s+to)\s"
    r"|sak(?:te|ti|ta|oge|ogi)\b|\w(?:enge|engi|oge|ogi)\b",  # hi: "kya aap bhej sakte hain"
    re.IGNORECASE,
)
_SOFT = GREETINGS | MILD
# Small talk asked of the listener: "what's up?", "kaise ho?", "eppadi irukeenga?"
_SMALL_TALK = re.compile(
    r"\b(?:what'?s\s+up|wh?at\s+up|how\s+(?:are|r)\s+(?:you|u|ya)|how'?s\s+it\s+going"
    r"|how\s+have\s+you\s+been|kaise\s+ho|kaisi\s+ho|kya\s+haal|kya\s+kar\s+rah[ei]\s+ho"
    r"|eppadi\s+iruk\w*|ela\s+unn\w*|hegidd\w*|sugam\w*|kemon\s+acho|bagunna\w*|enu\s+ma+d\w*"
    r"|enthu\s+parupadi|saapadu\s+aach\w*|oota\s+ay\w*|ki\s+kheli\w*)\b",
    re.IGNORECASE,
)
# Exclamations, opinions and rhetorical questions: "what a day", "is it just me or...", "who
# even watches TV anymore", "kya bakwas movie thi", "pata nahi kya hoga": said, not asked.
_EXCLAIMED = re.compile(
    r"^\s*what\s+an?\s+\w+|\bis\s+it\s+just\s+me\b|\b(?:killing|driving)\s+me\b"
    r"|\bwaste\s+of\s+time\b|\b(?:who|why)\b[^?.!]{0,40}\beven\b|\banymore\s*\??\s*$"
    r"|\balways\s+so\b|\bkya\s+(?:bakwas|baat|scene|bekaar|bekar|faltu)\b|\bpata\s+nahi\b"
    r"|\bkitn[aie]\s+(?:time|waqt|din|saal)\s+ho\s+ga(?:ya|ye)\b|\bkya\s+(?:mast|badhiya|zabardast)\b"
    r"|\bkitn[aie]\s+(?:maza+|achh?a|bura|pyara|sundar)\b|\bwho\s+else\b|^\s*remember\s+(?:that|when)\b"
    r"|\bitna\b[^?.!]{0,30}\bkyun\b|\bkya\s+plan\s+hai\b|\bany\s+plans\b|\bsamajh\s+nahi\b"
    r"|\btheek\s+hai\s+na\b",
    re.IGNORECASE,
)
# "how did the interview go?", "kal ka match dekha?": what happened to someone, asked.
_HAPPENED = re.compile(
    r"\bhow\s+did\b[^?.!]{1,40}\bgo\b|\b(?:dekha|dekhi|suna|suni)\s*\?"
    r"|\b(?:kaisa|kaisi|kaise)\s+(?:tha|thi|the|raha|rahi|rahe)\b|\bne\s+kya\s+\w+(?:ya|yi|ye)\b"
    r"|\bmil(?:enge|oge|ogi|na)\b",
    re.IGNORECASE,
)
_TIMES = frozenset(words("morning, mrng, afternoon, evening, night, nite, day"))
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\u2764\u263a\u2639\U0001f000-\U0001f2ff]")
_LAUGH = re.compile(r"^(?:(?:ha|he|hi|ja|lo)l?){2,}h?$|^l+o+l+$|^x+d+$|^a+w+$|^y+a+y+$")


@dataclass(frozen=True, slots=True)
class ChatReading:
    reactions: int  # thanks, laughter, affection, emoji, "!": chat markers that outweigh cues
    greetings: int  # greetings and mild praise: chat when nothing else is read
    about_you: bool  # a question about the person addressed
    request_you: bool  # "can you ...", "do you know ...": a request after all
    personal: bool = False  # what someone did, said or felt: "amma enna sonnanga?"


_LENGTHENED = re.compile(r"(.)\1{2,}")
_LAUGH_START = frozenset("hjlxay")


def read(text: str, tokens: Sequence[Token]) -> ChatReading:
    """How conversational `text` is; one pass over its tokens (this is on the hot path)."""
    reactions = 0 if text.isascii() else len(_EMOJI.findall(text))
    if tokens:  # "!" marks an exclamation, not punctuation alone
        reactions += text.count("!") + len(_SMALL_TALK.findall(text))
        reactions += _EXCLAIMED.search(text) is not None
    words = [t.word for t in tokens]
    if _LENGTHENED.search(text):  # "muchhhh" → "much", "bossuuuu" → "bossu": emphasis
        words = [_LENGTHENED.sub(r"\1", w) for w in words]
    greetings = 0
    you = False
    personal = not _PERSONAL_WORDS.isdisjoint(words) and _DATA_QUESTIONS.isdisjoint(words)
    personal = personal or _HAPPENED.search(text) is not None
    for i, word in enumerate(words):
        if word in REACTIONS:
            reactions += 1
        elif word in _SOFT:
            greetings += 1
        elif word in YOU:
            you = True
        elif word == "good" and i + 1 < len(words) and words[i + 1] in _TIMES:
            greetings += 1
        elif word[0] in _LAUGH_START and len(word) > 1 and _LAUGH.match(word):
            reactions += 1
        elif not personal and word == "how" and i + 1 < len(words):
            personal = f"{word} {words[i + 1]}" in _PERSONAL_PHRASES and (
                _DATA_QUESTIONS.isdisjoint(words)
            )
    request = bool(you and _REQUEST_YOU.search(text))
    return ChatReading(reactions, greetings, you and not request, request, personal)
