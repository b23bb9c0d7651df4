"""What a destructive command acts on: a deletion needs an object that can be deleted (RT-2).

A destructive intent (delete_data, and the critical actions of actions.py) needs strong
evidence: a destructive verb in a command's shape (shape.py) *and* an object it can destroy. "hata
do" alone still asks "delete what?" (rules.py answers below IN-1's 0.5 so the caller confirms),
but a verb whose sentence names only things no one deletes ("garibi hatao" is a slogan against
poverty, "remove the banhammer", "drop me off at the station") is no deletion. Deletable are data
and the things an assistant keeps (files, records, messages, reminders, servers...) and words that
point back at one ("delete it", "isko hatao", "ellam alisi").

To teach it a noun, add it to DELETABLE (the singular is enough when the plural only adds -s).
"""

from __future__ import annotations

from collections.abc import Sequence

from nerve.intent.cues import Token
from nerve.intent.lexicon import FILLERS, INDIC, LIGHT_VERBS, POSTPOSITIONS, VERBS, words
from nerve.intent.shape import (
    HELPERS,
    JOINERS,
    NEGATIONS,
    PARTICLES,
    RELATIVES,
    STATEMENT_ENDS,
)

__all__ = ["BARE_TOKENS", "DELETABLE", "PHYSICAL", "POINTERS", "REACH", "deletable"]

REACH = 8  # tokens either side of the verb where its object may stand
BARE_TOKENS = 5  # "ok now please delete": a deletion naming nothing is heard in a short text
# Stems whose everyday sense is physical (clean, take out, get relief from): they delete only a
# deletable thing named, not "ise" or nothing ("ise saaf karen" is a cleaning instruction).
PHYSICAL = ("saaf", "nikaal", "nikal", "chutkar", "chutkaar")

DELETABLE = frozenset(
    words(
        "file, folder, directory, dir, record, row, table, database, db, schema, data, dataset",
        "entry, entries, log, message, msg, mail, email, e-mail, inbox, chat, conversation",
        "history, cache, cookie, photo, pic, picture, image, video, song, playlist, track",
        "account, profile, user, contact, number, list, item, note, document, doc, backup",
        "copy, copies, draft, post, comment, tweet, story, stories, status, app, application",
        "program, package, branch, branches, repo, repository, commit, project, task, todo",
        "reminder, alarm, timer, event, meeting, appointment, booking, reservation, order",
        "subscription, calendar, schedule, invite, invitation, notification, bookmark, tab",
        "page, column, field, index, indexes, key, token, session, container, volume, bucket",
        "queue, job, cluster, server, vm, instance, disk, drive, partition, screen, text",
        "paragraph, section, group, channel, member, attachment, link, url, password, cart",
        "wishlist, recording, voicemail, sms, spam, junk, trash, duplicate, everything, rest",
        "attendee, guest, participant, friend, follower, device, extension, plugin, module",
        "invoice, receipt, bill, transaction, report, summary, sheet, spreadsheet, slide, form",
        "ticket, issue, label, tag, album, flight, trip, ride, delivery, plan, call, shipment",
        "payment, request, registration, membership, upload, download, archive, feed",
        "code, script, function, variable, class, test, config, setting, environment",
        "stack, infrastructure, infra, node, machine, system, computer, host, box, cloud",
        "sandesh, sandesha, sandesam, sandesham, tasveer, tasvir, khaata, khata, suchi, soochi",
        "seithi, kopu, barta, chhobi, photu, phottu",
    )
)
# Words that point back at something named before: "delete it", "isko hatao", "ellam alisi".
POINTERS = frozenset(
    words(
        "it, them, this, that, these, those, all, both, one, ones, everything, anything",
        "ye, yeh, ise, isse, isko, inhe, inko, use, usey, usko, unhe, unko, sab, sabhi, sabko",
        "saare, sare, sara, dono",  # hi
        "idha, adha, ithai, athai, ellam, ellathaiyum, ellathayum, rendaiyum, idhai, adhai",  # ta
        "idi, adi, anni, annitini, vaatini, deenini, danini, rendu",  # te
        "idannu, adannu, ellavannu, ella, eradu, ivannu, avannu",  # kn
        "ithu, athu, ithine, athine, ellaam, randum",  # ml
        "eta, ota, egulo, ogulo, sob, shob, sobgulo, duto",  # bn
    )
)
_DESTRUCTIVE = frozenset(w for phrase in VERBS["delete_data"] for w in phrase.split())
_STEMS = tuple(w.rstrip("*").split()[0] for w in INDIC["delete_data"])
_LIGHT = frozenset(w for phrase in LIGHT_VERBS for w in phrase.split())
_FRAME = frozenset(words("can, could, would, will, you, u, help, me, go, ahead, want, need, to"))
_AUXILIARIES = frozenset(words("ho, hu, hoon, kya, he, h, hai, hain, is, are, am"))
_GLUE = (
    FILLERS
    | POSTPOSITIONS
    | HELPERS
    | PARTICLES
    | NEGATIONS
    | STATEMENT_ENDS
    | _AUXILIARIES
    | _LIGHT
    | _FRAME
    | _DESTRUCTIVE
) - POINTERS
_CLOSERS = HELPERS | _LIGHT  # a helper after the verb closes an SOV clause
_STOPS = JOINERS | RELATIVES  # another clause begins: "nikaal den aur inhe dho len"


def _thing(word: str) -> bool:
    if word in DELETABLE or word in POINTERS:
        return True
    if word.endswith("s") and word[:-1] in DELETABLE:  # files, logs, alarms
        return True
    # a file name, a path, an identifier: notes.md, /var/log, users_2020
    return any(c in word for c in "./_") or (word[:1].isdigit() and len(word) > 3)


def _small(word: str) -> bool:
    """A letter or a short number: "2 p.m.", "item 3"."""
    return len(word) == 1 or (word.isdigit() and len(word) <= 3)


def deletable(tokens: Sequence[Token], first: int, last: int, word: str = "") -> bool | None:
    """Does the verb at tokens[first..last] act on something deletable? Its object stands in its
    clause, after it in English ("delete the old invoices"), before it in SOV order ("purane
    logs hata do"): the side after the verb is read first, the side before when nothing stands
    after, or first when a helper closes an SOV clause ("alarm cancel kare kyoki ..."). True: a
    deletable thing; False: only other things ("iske baad beej nikaal den"); None: nothing at
    all ("delete karo")."""
    end = last + 1
    while end < min(len(tokens), last + 1 + REACH) and not (
        (tokens[end].opens and len(tokens[end - 1].word) > 1)  # "2 p.m. alarm" goes on
        or tokens[end].word in _STOPS
    ):
        end += 1
    start = first
    while start > max(0, first - REACH) and not tokens[start].opens:
        if tokens[start - 1].word in _STOPS:
            break
        start -= 1
    after, before = tokens[last + 1 : end], tokens[start:first]
    if after and after[0].word in _CLOSERS:  # "alarm cancel kare kyoki ...": SOV, object before
        after, before = before, after
    strict = word.startswith(PHYSICAL)
    found = _judge(after, strict)
    found = found if found is not None else _judge(before, strict)
    if found is None and (strict or len(tokens) > BARE_TOKENS):
        return False  # "saaf karen", or a long text whose deletion names nothing: no order
    return found


def _judge(side: Sequence[Token], strict: bool) -> bool | None:
    named = False
    for token in side:
        word = token.word
        if _thing(word) and not (strict and word in POINTERS):
            return True
        if word not in _GLUE and not word.startswith(_STEMS) and not _small(word):
            named = True
    return False if named else None
