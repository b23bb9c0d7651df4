"""PowerShell and cmd.exe: both case-insensitive, with their own deletion and power verbs.

`Remove-Item -Recurse -Force C:\\`, `del /s /q C:\\`, `rd /s /q %USERPROFILE%`, `format C:`,
`Format-Volume`, `Stop-Computer`, `vssadmin delete shadows`; `powershell -EncodedCommand` is
decoded and judged; `iwr URL | iex`, `IEX (New-Object Net.WebClient).DownloadString(...)` run
downloaded code (`high`, code). Runs only when the text looks like Windows (a drive path, a
cmdlet, `$env:`, `/s`-style switches or powershell/cmd), so POSIX text costs one
regular-expression search.
"""

from __future__ import annotations

import base64
import binascii
import re

from nerve.safety.triggers import trie_pattern
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher

__all__ = ["check_windows", "looks_like_windows"]

# (cheap substrings, one of which must be present, precise check on the lower-cased text): the
# substring tests run at C speed, so POSIX text rarely reaches a regular expression.
_LOOKS: tuple[tuple[tuple[str, ...], re.Pattern[str] | None], ...] = (
    ((":\\",), re.compile(r"\b[a-z]:\\")),
    (("$env:",), None),
    (("%",), re.compile(r"%\w+%")),
    (
        ("remove-", "format-", "stop-", "restart-", "clear-", "initialize-"),
        re.compile(r"\b(?:remove|format|stop|restart|clear|initialize)-[a-z]"),
    ),
    (("powershell",), None),
    (("iex", "invoke-expression"), re.compile(r"\biex\b|invoke-expression")),
    (("pwsh",), None),
    (("cmd",), re.compile(r"\bcmd(?:\.exe)?\s+/[ck]\b")),
    ((" /s", " /q", " /f", " /a"), re.compile(r"^\s*(?:del|rd|rmdir|erase)\s+/[sqfa]\b", re.M)),
    (("vssadmin",), None),
    (("wmic",), None),
    (("bcdedit",), None),
    (("diskpart",), None),
    (("delete",), re.compile(r"\breg(?:\.exe)?\s+delete\b")),
    (("format",), re.compile(r"\bformat\s+[a-z]:")),
)
_STATEMENTS = re.compile(r"\s*(?:&&|\|\||[;|&\n])\s*")
_TOKENS = re.compile(r'"[^"]*"|\'[^\']*\'|\S+')
_DELETE = frozenset({"remove-item", "rm", "ri", "del", "erase", "rd", "rmdir", "rmdir.exe"})
_CRITICAL = {
    "format-volume": "Format-Volume erases a volume",
    "clear-disk": "Clear-Disk erases a disk",
    "initialize-disk": "Initialize-Disk wipes a disk's partition table",
    "remove-partition": "Remove-Partition deletes a partition",
    "stop-computer": "Stop-Computer shuts the machine down",
    "restart-computer": "Restart-Computer restarts the machine",
}
_VALUE_PARAMS = frozenset({"-path", "-literalpath", "-include", "-exclude", "-filter"})
_DATA = frozenset({"echo", "write-host", "write-output", "write-verbose", "rem", "::", "#"})
_SYSTEM = re.compile(
    r"^(?:[a-z]:)?[\\/](?:windows|program files|programdata|system32|boot|recovery)|"
    r"%(?:systemroot|windir|programfiles|programdata)%|\$env:(?:systemroot|windir|programfiles)",
    re.IGNORECASE,
)
_HOME = re.compile(
    r"^(?:[a-z]:)?[\\/]users(?:[\\/][^\\/]+)?[\\/]?$|^~[\\/]?$|^%userprofile%[\\/]?$|"
    r"^\$(?:env:userprofile|home)[\\/]?$",
    re.IGNORECASE,
)
_ROOT = re.compile(r"^(?:[a-z]:)?[\\/]?\*?$|^[a-z]:[\\/]\*(?:\.\*)?$", re.IGNORECASE)
_TEMP = re.compile(r"temp|tmp", re.IGNORECASE)


# One scan for all the substrings, shaped as a trie: a flat alternation of 25 strings (some
# starting with a space) costs ~30 ns a character, as much as the 25 substring tests.
_ANY_MARK = re.compile(trie_pattern({mark for marks, _ in _LOOKS for mark in marks}))


def looks_like_windows(text: str) -> bool:
    low = text.lower()
    if not _ANY_MARK.search(low):
        return False
    for marks, rx in _LOOKS:
        if any(mark in low for mark in marks) and (rx is None or rx.search(low)):
            return True
    return False


def _target_level(target: str, recursive: bool) -> tuple[RiskLevel, str] | None:
    if _ROOT.match(target) and (":" in target or target in ("\\", "/")):
        return ("critical" if recursive else "high"), "a drive root"
    if _TEMP.search(target):
        return None
    if _SYSTEM.search(target):
        return "high", "a Windows system directory"
    if _HOME.match(target):
        return ("critical" if recursive else "medium"), "a user profile"
    if re.match(r"^(?:[a-z]:)?[\\/]users[\\/]", target, re.IGNORECASE) and recursive:
        return "high", "a path inside a user profile"
    return ("medium", "a directory") if recursive else None


def _delete(verb: str, args: list[str]) -> Finding:
    lowered = [a.lower() for a in args]
    recursive = any(a.startswith("-r") or a == "/s" for a in lowered)
    if any(a.startswith("-whatif") for a in lowered):
        return LOW
    targets: list[str] = []
    for i, arg in enumerate(args):
        low = lowered[i]
        if low in ("-path", "-literalpath") and i + 1 < len(args):
            targets.append(args[i + 1])
        elif (
            not low.startswith("-")
            and not (low.startswith("/") and len(low) == 2)
            and (i == 0 or lowered[i - 1] not in _VALUE_PARAMS)
        ):
            targets.append(arg)
    best = LOW
    for target in targets:
        level = _target_level(target, recursive)
        if level is not None:
            best = higher(best, Finding(level[0], f"{verb} deletes {level[1]} ({target})"))
    return best


def _statement(tokens: list[str], depth: int) -> Finding:
    verb = tokens[0].lower().lstrip("&.").removesuffix(".exe")
    args = tokens[1:]
    lowered = [a.lower() for a in args]
    if verb in _DATA:
        return LOW
    if verb in ("powershell", "pwsh", "cmd") and depth < 4:
        return _nested_shell(verb, args, lowered, depth)
    if verb in _CRITICAL:
        return Finding("critical", _CRITICAL[verb])
    if verb == "format" and any(re.fullmatch(r"[a-z]:\\?", a) for a in lowered):
        return Finding("critical", "format erases a drive")
    if verb == "shutdown" and any(a in ("/s", "/r", "/p", "-s", "-r") for a in lowered):
        return Finding("critical", "shutdown turns the machine off")
    if verb in _DELETE:
        return _delete(tokens[0], args)
    if (verb == "vssadmin" and "delete" in lowered) or (verb == "wmic" and "delete" in lowered):
        return Finding("high", f"{verb} deletes volume shadow copies (the backups)")
    if verb in ("bcdedit", "reg") and any(
        a in ("/delete", "delete", "/deletevalue") for a in lowered
    ):
        return Finding("high", f"{verb} deletes boot or registry configuration")
    if verb == "diskpart":
        return Finding("high", "diskpart can wipe and repartition disks")
    if verb.startswith("remove-") or verb in ("stop-service", "disable-computerrestore"):
        return Finding("high", f"{tokens[0]} removes or stops a resource")
    if verb in ("clear-recyclebin", "stop-process", "cipher"):
        return Finding("medium", f"{tokens[0]} discards data or stops processes")
    return LOW


def _nested_shell(verb: str, args: list[str], lowered: list[str], depth: int) -> Finding:
    for i, low in enumerate(lowered):
        if verb == "cmd" and low in ("/c", "/k"):
            return check_windows(" ".join(args[i + 1 :]), depth + 1)
        if low in ("-command", "-c") and verb != "cmd":
            return check_windows(" ".join(args[i + 1 :]), depth + 1)
        if low in ("-encodedcommand", "-enc", "-e", "-ec") and i + 1 < len(args):
            try:
                decoded = base64.b64decode(args[i + 1]).decode("utf-16-le", "replace")
            except (binascii.Error, ValueError):
                return Finding("high", f"{verb} runs an encoded command that does not decode")
            return check_windows(decoded, depth + 1)
    return LOW


_RUNS_CODE = re.compile(r"\biex\b|invoke-expression|\|\s*(?:pwsh|powershell)\b")
_DOWNLOADS = re.compile(
    r"downloadstring|downloadfile|downloaddata|\biwr\b|invoke-webrequest|\birm\b|"
    r"invoke-restmethod|net\.webclient|start-bitstransfer|\bcurl\b|\bwget\b|https?://"
)


def check_windows(text: str, depth: int = 0) -> Finding:
    """Judge PowerShell / cmd text statement by statement."""
    low = text.lower()
    if _RUNS_CODE.search(low) and _DOWNLOADS.search(low):
        return Finding("high", "PowerShell runs code downloaded from the network", "code")
    best = LOW
    for statement in _STATEMENTS.split(text):
        tokens = [t.strip("\"'") for t in _TOKENS.findall(statement)]
        if tokens:
            best = higher(best, _statement(tokens, depth))
    return best
