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
from nerve.intent.lexicon import RELAY, REPORT_MAKERS, VERBS, words

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
# "can you send", "do you know": the addressee is asked to act, not asked about...
_REQUEST_YOU = re.compile(
    r"\bdo\s+(?:you|u)\s+know\b|\b(?:you|u)\s+(?:should|must|need\s+to|have\s+to)\s"
    r"|sak(?:te|ti|ta|oge|ogi)\b|\w(?:enge|engi|oge|ogi)\b",  # hi: "kya aap bhej sakte hain"
    re.IGNORECASE,
)
# ...and "can you" asks for an act, "would you" only when an act follows: "would you send
# it?", not "would you buy a dinosaur?"; "will you be a freshman this fall?" asks about you.
_MODAL_YOU = re.compile(
    r"\b(can|could|would|will|wud|cud|pls|please)\s+(?:you|u|ya)"
    r"(?:\s+(?:please|pls|kindly|just|quickly|also|maybe))?\s+([\w'-]+)",
    re.IGNORECASE,
)
_ABOUT = frozenset(words("be, ever, never, really, still, rather, even, like, love, want"))
_ACTS = frozenset(
    w
    for phrase in (*[v for vs in VERBS.values() for v in vs], *RELAY, *REPORT_MAKERS)
    for w in phrase.rstrip("*").split()[:1]
) | frozenset(
    words(
        "remind, set, play, call, book, order, add, start, stop, turn, help, schedule, pause",
        "resume, open, close, look, give, put, update, record, download, upload, install, run",
        "translate, write, fix, calculate, compute, note, save, track, keep, bring, pull, do",
    )
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
    r"\bis\s+it\s+just\s+me\b|\b(?:killing|driving)\s+me\b"
    r"|\bwaste\s+of\s+time\b|\b(?:who|why)\b[^?.!]{0,40}\beven\b|\banymore\s*\??\s*$"
    r"|\balways\s+so\b|\bkya\s+(?:bakwas|baat|scene|bekaar|bekar|faltu)\b|\bpata\s+nahi\b"
    r"|\bkitn[aie]\s+(?:time|waqt|din|saal)\s+ho\s+ga(?:ya|ye)\b|\bkya\s+(?:mast|badhiya|zabardast)\b"
    r"|\bkitn[aie]\s+(?:maza+|achh?a|bura|pyara|sundar)\b|\bwho\s+else\b"
    r"|\bitna\b[^?.!]{0,30}\bkyun\b|\bkya\s+plan\s+hai\b|\bany\s+plans\b|\bsamajh\s+nahi\b"
    r"|\btheek\s+hai\s+na\b|\bwho\s+(?:knows|cares)\b",
    re.IGNORECASE,
)
_EXCLAIMED_WORDS = frozenset(
    words(
        "is, killing, driving, waste, who, why, anymore, always, kya, pata, kitna, kitne, kitni",
        "itna, any, samajh, theek",
    )
)  # the words _EXCLAIMED needs: without one, it is not tried (this is on the hot path)
# ...and at the start: "what a day", "what the heck", "how embarrassing", "remember when".
_EXCLAIMED_START = re.compile(
    r"\s*(?:what\s+an?\s+\w+|remember\s+(?:that|when)\b"
    r"|what\s+the\s+(?:heck|hell|fuck|frick|eff|crap|devil|f)\b"
    r"|what\s+(?:good|great|nice|lovely|bad|terrible|awful)\b"
    r"|how\s+(?!many|much|long|far|often|to|do|does|did|is|are|was|were|can|could|old|big)"
    r"(?!should|would|will|about|come|tall|fast|soon)\w+\s*[.!]*\s*$)",
    re.IGNORECASE,
)
# Musing on what would be: "what would you do with a million dollars?", "if you could be any
# kitchen appliance...", "what if AI became sentient?": conversation, no lookup.
_MUSING = re.compile(
    r"\bwhat\s+if\b|\bwould\s+(?:you|u)\s+(?:ever|rather|really)\b|\bwhat\s+would\s+(?:you|u|we)\b"
    r"|\bif\s+(?:you|u|we|i|he|she|they|there|it)\s+(?:\w+\s+){0,2}?"
    r"(?:could|were|had|was|did|got|ever|would|lived|won)\b",
    re.IGNORECASE,
)
# Asking whether anyone is there ("hello? anyone there?", "who's there?"), and tag questions
# that only seek agreement ("genius, right?", "isn't it?", "hai na?").
_THERE = re.compile(
    r"\b(?:any|some|every)\s*(?:one|body)\s+(?:there|here|out\s+there|around|awake|online)\b"
    r"|\b(?:who'?s|who\s+is)\s+there\b|\bare\s+(?:you|u)\s+(?:there|still\s+there)\b",
    re.IGNORECASE,
)
_THERE_WORDS = frozenset(words("there, here, around, awake, online"))
_TAG = re.compile(
    r"(?:\bright|\b(?:is|was|are|were|do|does|did|would|could|wo|ca)n'?t\s+(?:it|that|this|they"
    r"|you|he|she|we|i)|\bdon'?t\s+you\s+think|\bhai\s+na|\bna)\s*\?+\s*$",
    re.IGNORECASE,
)
_MUSING_WORDS = frozenset(words("if, would, wud"))
_HAPPENED_WORDS = frozenset(words("how, dekha, dekhi, suna, suni, kaisa, kaisi, kaise, ne"))
_SMALL_TALK_WORDS = frozenset(
    words(
        "what, what's, whats, wat, how, how's, hows, kaise, kaisi, kya, ela, kemon, enu, enthu",
        "saapadu, oota, ki",
    )
)
_SMALL_TALK_STEMS = ("eppadi", "hegidd", "sugam", "bagunna")
# Backchannel: a question of one to three of these only echoes ("really?", "oh yeah??").
_ECHOES = frozenset(
    words(
        "really, right, seriously, sure, yeah, yes, no, ok, okay, oh, huh, eh, hmm, true, what",
        "why, how, who, exactly, wait, me, i, think, know, guess, so, now, then, you, u, is, it",
        "that, this, there, ohh, ah, ahh, um, umm, wow, hey, hello, hi, lol, sorry, pardon",
        "nope, yep, yup, accha, acha, achha, sach, kya, haan, na, ha",
    )
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
    """How conversational `text` is; one pass over its tokens (this is on the hot path: each
    regex is tried only when a word it needs is there)."""
    reactions = 0 if text.isascii() else len(_EMOJI.findall(text))
    words = [t.word for t in tokens]
    seen = frozenset(words)
    if tokens:  # "!" marks an exclamation, not punctuation alone
        reactions += text.count("!")
        if not seen.isdisjoint(_SMALL_TALK_WORDS) or any(
            w.startswith(_SMALL_TALK_STEMS) for w in words
        ):
            reactions += len(_SMALL_TALK.findall(text))
        exclaimed = not seen.isdisjoint(_EXCLAIMED_WORDS) and _EXCLAIMED.search(text)
        reactions += bool(exclaimed or _EXCLAIMED_START.match(text))
        musing = not seen.isdisjoint(_MUSING_WORDS) and _MUSING.search(text)
        there = not seen.isdisjoint(_THERE_WORDS) and _THERE.search(text)
        asked = text.endswith("?")
        reactions += bool(musing or there or (asked and _TAG.search(text)))
        if asked and len(tokens) <= 3:
            reactions += all(w in _ECHOES for w in words)
    if _LENGTHENED.search(text):  # "muchhhh" → "much", "bossuuuu" → "bossu": emphasis
        words = [_LENGTHENED.sub(r"\1", w) for w in words]
    greetings = 0
    you = False
    personal = not _PERSONAL_WORDS.isdisjoint(words) and _DATA_QUESTIONS.isdisjoint(words)
    if not personal and (
        not seen.isdisjoint(_HAPPENED_WORDS) or any(w.startswith("mil") for w in words)
    ):
        personal = _HAPPENED.search(text) is not None
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
    request = bool(you and _requests(text))
    return ChatReading(reactions, greetings, you and not request, request, personal)


def _requests(text: str) -> bool:
    """The person addressed is asked to act: "can you send it", "do you know", "bhej sakte"."""
    if _REQUEST_YOU.search(text):
        return True
    for m in _MODAL_YOU.finditer(text):
        modal, verb = m.group(1).lower(), m.group(2).lower()
        if verb in _ACTS or (modal not in ("would", "wud") and verb not in _ABOUT):
            return True
    return False
