"""Named actions (`drop_database`, `Drop-Database`, `dropDatabase`) and natural-language text.

An action name is split into words whatever its spelling (snake, kebab, camel, spaces) and judged
by its verb and scope: `delete_all_data` and `format_disk` are critical, `drop_table` is high,
`convert_format` is fine. Text is checked three ways: code spans and command-looking lines are
judged as shell or SQL, and dangerous requests in plain words ("drop the database", "shut down the
server") are caught unless negated ("never delete the database").
"""

from __future__ import annotations

import re

from nerve.safety.normalize import normalize
from nerve.safety.shell import check_shell
from nerve.safety.sql import check_sql
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset

__all__ = ["check_action", "check_text"]

_VERBS_HIGH = wordset(
    "delete drop destroy erase wipe purge truncate remove terminate nuke obliterate"
)
_VERBS_MEDIUM = frozenset(
    ["kill", "stop", "reset", "disable", "revoke", "uninstall", "cancel", "clear"]
)
_POWER = frozenset({"shutdown", "reboot", "poweroff", "halt", "restart"})
_SCOPE = wordset(
    "all everything database databases db dbs disk disks drive drives system server servers "
    "volume volumes cluster account accounts backups partition filesystem"
)
_DISKS = frozenset({"disk", "disks", "drive", "drives", "volume", "partition", "filesystem"})
_OBJECTS = _SCOPE | frozenset(["data", "table", "tables", "files", "records", "rows", "users"])
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _words(name: str) -> list[str]:
    words: list[str] = []
    for word in (w.lower() for w in _WORDS.findall(name)):
        verb = next((v for v in _VERBS_HIGH if word.startswith(v) and word != v), None)
        rest = word[len(verb) :] if verb else ""
        if verb and (rest in _OBJECTS or rest.startswith("all")):  # deletealldata
            words.append(verb)
            if rest.startswith("all"):
                words.append("all")
                rest = rest[3:]
            if rest:
                words.append(rest)
        else:
            words.append(word)
    return words


def check_action(name: str) -> Finding:
    """Judge a named action by its verb and what it applies to."""
    words = _words(normalize(name))
    joined = " ".join(words)
    if _POWER & set(words) or "shut down" in joined or "power off" in joined:
        return Finding("critical", f"action '{name}' shuts a system down")
    if "format" in words and _DISKS & set(words):
        return Finding("critical", f"action '{name}' formats storage")
    verb = next((w for w in words if w in _VERBS_HIGH), None)
    if verb is not None:
        level: RiskLevel = "critical" if _SCOPE & set(words) else "high"
        return Finding(level, f"action '{name}' is destructive ({verb})")
    verb = next((w for w in words if w in _VERBS_MEDIUM), None)
    if verb is not None:
        return Finding("medium", f"action '{name}' may lose state ({verb})")
    return LOW


_CODE_SPAN = re.compile(r"```[\w+-]*\n?(.*?)```|`([^`\n]+)`", re.S)
_PROMPT = re.compile(r"^\s*(?:[$#>]|PS [^>]*>)\s+")
_COMMANDISH = re.compile(
    r"^(?:sudo|rm|dd|mkfs\S*|chmod|chown|git|docker|kubectl|helm|terraform|aws|gcloud|gsutil|az|"
    r"psql|mysql|mysqladmin|redis-cli|mongo\w*|curl|wget|find|shutdown|reboot|halt|poweroff|"
    r"python\d?|perl|ruby|node|bash|sh|zsh|eval|shred|wipefs|rsync|ssh|systemctl|crontab|"
    r"Remove-Item|Format-Volume|Stop-Computer|del|rd|format)\s+\S",
    re.IGNORECASE,
)
_SQL_SHAPE = re.compile(
    r"^\s*(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER)|DELETE\s+FROM|TRUNCATE\s+\w|"
    r"UPDATE\s+[\w.\"`]+\s+SET|ALTER\s+TABLE|GRANT\s+\w+|EXEC(?:UTE)?\s*\(|SELECT\s.+\sFROM\s)",
    re.IGNORECASE | re.S,
)
_PHRASE = re.compile(
    r"\b(?P<verb>delete|remove|erase|wipe|destroy|purge|drop|truncate|nuke|clear out)\s+"
    r"(?P<all>all\s+(?:of\s+)?|every\s+|the\s+entire\s+|the\s+whole\s+)?"
    r"(?:(?:the|my|our|your|their|this|that|prod|production|live|user|customer)\s+){0,3}"
    r"(?:\w+\s+)?(?P<obj>data|database|databases|db|table|tables|records|rows|files|users|"
    r"accounts|backups|logs|disk|drive|repo|repository|bucket|cluster|server|system)\b"
    r"|\b(?P<verb2>delete|erase|wipe|destroy|purge|nuke)\s+(?P<everything>everything|it\s+all)\b",
    re.IGNORECASE,
)
_FORMAT = re.compile(
    r"\bformat\s+(?:the\s+|my\s+|this\s+)?(?:hard\s+|system\s+|boot\s+)?"
    r"(?:disk|drive|partition|volume|[a-z]:)",
    re.IGNORECASE,
)
_POWER_PHRASE = re.compile(
    r"\b(?:shut\s*down|power\s*off|reboot|restart|halt)\s+(?:the\s+|my\s+|this\s+|all\s+)?"
    r"(?:\w+\s+)?(?:server|servers|system|machine|computer|host|cluster|database|production|prod)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:don'?t|do\s+not|never|not|avoid|without|shouldn'?t|should\s+not|must\s+not|stop)\b"
    r"[\w\s,']{0,24}$",
    re.IGNORECASE,
)
_CRITICAL_OBJECTS = frozenset(
    {"database", "databases", "db", "disk", "drive", "cluster", "server", "system", "backups"}
)


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATION.search(text[max(0, start - 40) : start]))


def _phrases(text: str) -> Finding:
    best = LOW
    for m in _FORMAT.finditer(text):
        if not _negated(text, m.start()):
            return Finding("critical", f"asks to format storage ('{m.group().strip()}')")
    for m in _POWER_PHRASE.finditer(text):
        if not _negated(text, m.start()):
            return Finding("critical", f"asks to shut down or restart a system ('{m.group()}')")
    for m in _PHRASE.finditer(text):
        obj = (m.group("obj") or "").lower()
        if _negated(text, m.start()):
            continue
        wide = m.group("all") or m.group("everything")
        level: RiskLevel = "critical" if obj in _CRITICAL_OBJECTS or wide else "high"
        best = higher(best, Finding(level, f"asks to {m.group().strip().lower()}"))
    return best


def _code(snippet: str) -> Finding:
    found = check_shell(snippet)
    if _SQL_SHAPE.search(snippet):
        found = higher(found, check_sql(snippet))
    return found


def check_text(text: str) -> Finding:
    """A natural-language instruction: embedded commands and dangerous requests."""
    text = normalize(text)
    best = LOW
    for m in _CODE_SPAN.finditer(text):
        best = higher(best, _code(m.group(1) or m.group(2) or ""))
    for line in text.splitlines():
        line = _PROMPT.sub("", line, count=1)
        if _COMMANDISH.match(line) or _SQL_SHAPE.match(line):
            best = higher(best, _code(line))
    found = _phrases(_CODE_SPAN.sub(" ", text))
    if found.risk != "low":
        found = found.labelled("the text ")
    return higher(best, found)
