"""Cue words for the intent rules: data only, small, easy to extend (IN-2).

Each list is one comma-separated string: English first, then romanized Indic forms, tagged hi
Hindi, ta Tamil, te Telugu, kn Kannada, ml Malayalam, bn Bengali. A trailing `*` makes a stem
(`hata*` covers hatao, hataiye, hatana); an entry may have several words ("get rid of").
`nerve.language` already maps the commonest Indic verbs to English (bhejo → send, karo → do); the
Indic forms here cover text it did not normalize, so the rules degrade gracefully instead of
answering `unknown`.

How a cue counts (see rules.py):
- VERBS are English imperatives: strong at the start of a clause, after a frame such as "please"
  or "can you", before an Indic light verb ("delete karo"), or closing a clause that asks nothing;
  weak anywhere else, so "is the sky clear?" is not a deletion.
- INDIC verb forms are strong when they have a command's shape (shape.py): an imperative ending
  ("hatao", "anuppunga") or last in their clause before a helper ("hata do"); "hata diya gaya"
  and "muchhhh" are not commands.
- NOUNS are weak: they name the topic, a verb decides.
"""

from __future__ import annotations

__all__ = [
    "AMBIGUOUS_QUESTION_WORDS",
    "CHANNELS",
    "FILLERS",
    "FRAMES",
    "INDIC",
    "LIGHT_VERBS",
    "NOT_NAMES",
    "NOT_QUESTION_OPENERS",
    "NOUNS",
    "PAST_FORMS",
    "POSTPOSITIONS",
    "QUESTION_WORDS_EN",
    "QUESTION_WORDS_INDIC",
    "RECIPIENT_MARKERS",
    "RELAY",
    "REPORT_MAKERS",
    "VERBS",
    "words",
]


def words(*specs: str) -> tuple[str, ...]:
    """The lexicon's notation: words("a, b c", "d*") → ("a", "b c", "d*")."""
    return tuple(w.strip() for spec in specs for w in spec.split(",") if w.strip())


VERBS: dict[str, tuple[str, ...]] = {
    "delete_data": words("delete, remove, erase, drop, purge, wipe, clear, destroy, cancel, "
                         "get rid of, truncate, uninstall, eliminate"),
    "convert_format": words("convert, transform, export, change, turn, save, translate"),
    "summarize": words("summarize, summarise, sum up, recap, condense, brief me, tldr"),
    "generate_report": words("generate, create, make, prepare, build, produce, compile, draft, "
                             "write, put together"),
    "send_message": words("send, share, email, e-mail, mail, text, message, msg, notify, inform, "
                          "forward, reply, ping, dm, whatsapp, sms, contact"),
    "explain": words("explain, describe, elaborate, clarify, teach me, help me understand, "
                     "tell me about, walk me through"),
    "query_data": words("query, search, find, fetch, get, show, list, look up, lookup, check, "
                        "display, retrieve, pull up, bring up, count, give me, read, view, see"),
}  # fmt: skip

INDIC: dict[str, tuple[str, ...]] = {
    "delete_data": words(
        "hata*, mita*, saaf kar*, nikaal*, nikal do, radd, chutkara*, chutkaara*",  # hi
        "neekk*, neeku, azhi*",  # ta
        "teesey*, teesi*, tolagin*, cheripi*, cheripey*",  # te
        "alisi*, alisu, tegedu*",  # kn
        "kalay*, maykk*, neekkam*",  # ml
        "muchh*, muche*, mochh*, sorao, soriye*",  # bn
    ),
    "convert_format": words(
        "badlo, badal*",  # hi
        "maathu, maathru, maattu*",  # ta, ml
        "maarchu, marchu, maarch*",  # te
        "badalisu, badalaayisu",  # kn
        "bodlao, bodle*, rupantor*",  # bn
    ),
    "summarize": words(
        "saar, saaransh, saransh, sankshep*, nichod",  # hi
        "surukk*, churukk*",  # ta, ml
        "saaramsam, saramsam, saaramsham, saramsham, sankshipt*, klupt*",  # te
        "saaramsha, saramsha, saaraamsha",  # kn
        "sangraham, samgraham, sangrah*",  # ml
        "saramsho, sonkhep*, shongkhep*",  # bn
    ),
    "send_message": words(
        "bhej*",  # hi
        "anupp*, anupu*",  # ta
        "pampu, pampi*, pampand*",  # te
        "kalis*, kalsu, kalsi",  # kn
        "ayakk*, ayaykk*, ayach*",  # ml
        "pathao, pathiye*, pathan, pathabe*",  # bn
    ),
    "explain": words(
        "samjha*, matlab kya, arth kya, vyakhya, kya hota hai, kaise kaam kar*",  # hi
        "vilakk*, na enna, nna enna, endral enna, enral enna",  # ta
        "vivarinch*, ante enti, ante emiti, ante emi, ante entidi",  # te
        "vivaris*, vivarisi, andare enu, andre enu, andare yenu, andre yenu",  # kn
        "vishadeekarikk*, vivarikk*, manassilaakk*, ennal enthu, ennal enthanu",  # ml
        "bujhiye*, bojhao, bojha*, byakhya, mane ki",  # bn
    ),
    "query_data": words(
        "dikha*, dhoondh*, dhund*, khoj*, pata kar*, dekh*, padh*, haasil*, hasil*",  # hi
        "kaattu, kaatu, thedu*",  # ta
        "chupinch*, chupi*, vethuk*, vetuk*",  # te
        "thorisu, torisu, hudu*",  # kn
        "kaanikk*, kanikk*, thiray*",  # ml
        "dekhao, dekhan, khuje*",  # bn
    ),
}

NOUNS: dict[str, tuple[str, ...]] = {
    "summarize": words("summary, summaries, tl;dr, gist, synopsis, overview, key points, "
                       "highlights"),
    "generate_report": words("report, reports, arikkai, nivedika, nivedana"),
    "query_data": words("weather, forecast, temperature, traffic, news, status, price, prices, "
                        "balance, schedule, events, stats, statistics, metrics, records, results, "
                        "details, info, information, data, score"),
}  # fmt: skip

# Verbs that make a report when a report noun is near ("report banao", "generate a report").
REPORT_MAKERS = VERBS["generate_report"] + words(
    "do, run, pull",  # "do" is what nerve.language makes of karo/pannu/cheyyi
    "bana*, taiyar*, tayyar*, tayar*",  # hi
    "uruvaakk*, uruvakk*, tayaar*",  # ta
    "tayaru*, tayyaru*",  # te
    "maadi, maadu, tayaris*",  # kn
    "undaakk*, thayyaraakk*",  # ml
    "toiri*",  # bn
)

# "tell"/"ask": a message when a person is named ("Priya ko bolo"), a question otherwise.
RELAY = words(
    "tell, ask, let",
    "bolo, boliye, bol do, bata*, kaho, kahiye, keh do, puch*, pooch*",  # hi
    "sollu, sollunga, kelu, kelunga",  # ta
    "cheppu, cheppandi, adugu",  # te
    "helu, heli",  # kn
    "parayu, parayoo, chodikku",  # ml
    "bole dao, jigges*",  # bn
)

# Postpositions that mark whom a message is for: Priya ko, Priya se, Priya kitta, Priya ki
# (te), Priya ge (kn), Priya nodu (ml), Priya ke (bn). Priyakku (ta, ml) is a glued suffix.
RECIPIENT_MARKERS = words("ko, se, kitta, ki, ge, ige, nu, nodu, ke")

# Auxiliaries that make the English word before them an imperative ("delete karo").
LIGHT_VERBS = words(
    "do",  # what nerve.language makes of karo, pannu, cheyyi
    "karo, kare, karen, karein, kariye, kijiye, kar, kar do, kardo, karde, kardein, karden",
    "kar den, kar dijiye, kardijiye, karna",  # hi
    "de, dein, den, dedo, dijiye",  # hi
    "pannu, pannunga, panni",  # ta
    "cheyyi, chey, cheyyandi, cheyandi",  # te
    "maadi, maadu",  # kn
    "cheyyu, cheyyuka",  # ml
    "koro, korun, kore dao, kore",  # bn
)

# Words after which an English verb is an imperative ("please send", "can you delete").
FRAMES = words(
    "please, pls, plz, kindly, just, now, quickly, ok, okay, also, then, and, aur, so",
    "can you, could you, would you, will you, can u, help me, go ahead and",  # not "let's get"
    "i want to, i'd like to, i would like to, i need to, i wanna, want to, need to",
)

# English question words count when they open a clause; Indic ones anywhere (SOV word order).
QUESTION_WORDS_EN = words(
    "what, what's, whats, when, where, which, who, whom, whose, how, any",
    "is, are, was, were, will, would, do, does, did, can, could, should, shall, has, have, am, may",
)
QUESTION_WORDS_INDIC = words(
    "kya, kab, kahan, kahaan, kidhar, kitna, kitne, kitni, kaun, kaunsa, kaunse, konsa, konse",
    "kaisa, kaisi, kaise, kesa, kesi, kyun, kyon, kis",  # hi
    "eppo, eppodhu, eppadi, enga, evvalavu, ethana, yaaru, edhu",  # ta
    "enti, emiti, eppudu, ekkada, enta, entha, evaru, ela, edi",  # te
    "enu, yenu, yaavaga, yavaga, elli, eshtu, hege, yaava",  # kn
    "enthu, enthanu, eppol, evide, ethra, engane",  # ml ("ethu" is also a spelling of "ithu")
    "kobe, kothay, koto, kemon, kivabe, keno",  # bn
)

# Question words that are ordinary words in another language, by the language that owns them
# (on only when it is detected): Bengali ki/ke/kon are Hindi "of"/"that", Tamil enna is
# Malayalam "named"...
AMBIGUOUS_QUESTION_WORDS: dict[str, tuple[str, ...]] = {
    "bn": words("ki, ke, kon"),
    "ta": words("enna"),
}
# ...and English openers that are not questions in a language (off when it is detected):
# Hindi "is" is "this", "do" is "two".
NOT_QUESTION_OPENERS: dict[str, tuple[str, ...]] = {"hi": words("is, do")}

CHANNELS: dict[str, str] = {
    "email": "email", "e-mail": "email", "mail": "email", "gmail": "email",
    "whatsapp": "whatsapp", "slack": "slack", "sms": "sms", "text": "sms",
    "telegram": "telegram", "discord": "discord", "messenger": "messenger",
}  # fmt: skip

# Stripped from the edges of a target or a name: determiners, possessives, politeness.
FILLERS = frozenset(
    words(
        "the, a, an, all, of, my, our, your, this, that, these, those, its, their, some, any",
        "every, me, us, please, pls, entire, whole, now, immediately",
        "mere, meri, mera, mujhe, hamare, humare, sabhi, saare, sare, sarey, saarey, is, ye, yeh",
        "wo, woh",  # hi
        "en, enna, indha, intha, andha",  # ta
        "naa, naaku, maa",  # te
        "ee, aa",  # kn, ml, te
        "ente",  # ml
        "ei, oi, amar, amader",  # bn
    )
)

# Words that are never a person's name where a recipient would stand.
# Past forms of the Indic send verbs whose ending looks imperative ("ayachu" = sent, not send):
# a story about a message unless an imperative helper follows ("ayachu tharu": send it for me).
PAST_FORMS = frozenset(
    words(
        "ayachu, ayachittu, ayachirunnu, pathiyeche, pathiyechi, pathiyechilo, pathiyechhe",
        "pathalam, anuppinen, anuppinaan, anuppina, anuppitten, pampanu, pampindi, pampadu",
        "kaliside, kalisidde, kalisidlu, kalisidaru, bheja, bheji, bheje",
    )
)
NOT_NAMES: frozenset[str] = (
    FILLERS
    | frozenset(
        words(
            "me, him, her, them, it, us, you, everyone, everybody, someone, and, then, also, to",
            "message, text, email, report, summary, data, file",
            "usey, use, unhe, unko, inhe, isko, usko, mujhe, hume, humein, karo, kare",  # hi
            "ki, ke, ko, se, aur",  # hi
            "enakku, unakku, namakku, ungalukku, avanukku, avalukku, yarukku, athukku",  # ta
            "ithukku, edhukku, ethukku",  # ta
            "enikku, ninakku",  # ml
            "avanu, avalu, nanage, ninage, avanige, avalige",  # kn
        )
    )
    | {w for verbs in VERBS.values() for w in verbs if " " not in w}
)

# Postpositions: a target read backwards from an SOV verb stops at them.
POSTPOSITIONS = frozenset(
    words(
        "ko, ka, ke, ki, se, me, mein, par, pe, liye, wala, wali, tak",  # hi
        "la, ku, kku, il, ah, a, ai",  # ta
        "nu, ne, ni, ga",  # te, ml
        "ge, annu",  # kn
        "ta, theke, er",  # bn
    )
)
