"""Destructive actions a request names, as `parameters["action"]` hints for the safety layer.

"drop the database" and "shutdown the server" are still `delete_data` (IN-2); the hint lets the
safety layer's risk table (SF-2: drop_database and system_shutdown are critical) see exactly what
is asked. The hints come from rules only, so they never depend on a model noticing them. Only
commands count: "why is interstate 40 shut down?" names no action.
"""

from __future__ import annotations

import re
from collections.abc import Set

from nerve.intent.lexicon import words

__all__ = ["action"]

_I = re.IGNORECASE
_MACHINE = (
    r"(?:the\s+|this\s+|my\s+|our\s+|all\s+(?:the\s+)?)?(?:prod(?:uction)?\s+)?"
    r"(?:servers?|system|machines?|computers?|host|box|instances?|vms?|cluster|nodes?)\b"
)
_ACTIONS: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(rx, _I))
    for name, rx in (
        (
            "drop_database",
            r"\bdrop\s+(?:\w+\s+){0,2}?(?:database|db|schema)s?\b"
            r"|\b(?:database|db|schema)\s+(?:ko\s+|ah\s+|ni\s+|annu\s+)?drop\b"
            r"|\b(?:delete|wipe|destroy|erase)\s+(?:the\s+|my\s+|our\s+|entire\s+|whole\s+)*"
            r"(?:production\s+|prod\s+)?(?:database|db)\b",
        ),
        ("drop_table", r"\bdrop\s+(?:the\s+)?(?:\w+\s+)?tables?\b|\btables?\s+(?:ko\s+)?drop\b"),
        ("truncate_table", r"\btruncate\b"),
        ("delete_files", r"\brm\s+-(?:rf|fr|r)\b|\brm\s+-\w*r\w*\s"),
        (
            "erase_all",
            r"\b(?:erase|wipe)\s+(?:out\s+)?(?:all|everything)\b"
            r"|\b(?:format|wipe)\s+(?:the\s+|my\s+)?(?:hard\s+)?(?:disk|drive|ssd|server|machine)\b",
        ),
        (
            "delete_all_data",
            r"\b(?:delete|remove|purge|clear)\s+(?:all|every)\s+(?:of\s+)?"
            r"(?:the\s+|my\s+|our\s+)?(?:data|records|rows|files|users|everything)\b"
            r"|\b(?:delete|remove|purge)\s+everything\b",
        ),
        (
            "destroy",
            r"\b(?:terraform\s+destroy|destroy\s+(?:the\s+|all\s+)?"
            r"(?:cluster|infrastructure|infra|environment|stack|servers?|everything))\b",
        ),
        (
            "system_shutdown",
            r"\b(?:shut\s*down|power\s*off|poweroff|halt)\s+"
            + _MACHINE
            + r"|^\s*(?:please\s+|sudo\s+)?(?:shut\s*down|power\s*off|poweroff|halt)\b"
            # "server band karo" orders it; "system ko band kar diya" tells a story
            + r"|\b(?:server|system|machine|computer)\s+(?:ko\s+)?(?:band|shut\s*down)\s+kar"
            + r"(?:o|do|dijiye|iye|ein|en|de|dein|na)?\b"
            + r"(?!\s+(?:diya|diye|di|liya|li|tha|thi|the)\b|\s+(?:chuk|rah|gay))",
        ),
        (
            "system_reboot",
            r"\b(?:reboot|restart)\s+" + _MACHINE + r"|^\s*(?:please\s+|sudo\s+)?reboot\b",
        ),
    )
]
_POLITE = re.compile(r"\s*(?:(?:please|sudo)\s+)+", _I)
_ACTION_TRIGGERS = frozenset(
    words(
        "drop, database, db, schema, table, tables, truncate, rm, erase, wipe, format",
        "delete, remove, purge, clear, destroy, shutdown, shut, power, poweroff, halt",
        "reboot, restart, band, everything",
    )
)


def action(text: str, seen: Set[str] | None = None) -> tuple[str, int] | None:
    """The destructive action `text` commands and where its verb starts. `seen`, the request's
    lower-cased words when known, lets a request without a trigger word skip the scan."""
    if seen is not None and not seen & _ACTION_TRIGGERS:
        return None
    for name, rx in _ACTIONS:
        m = rx.search(text)
        if m:
            politeness = _POLITE.match(m.group())
            return name, m.start() + (politeness.end() if politeness else 0)
    return None
