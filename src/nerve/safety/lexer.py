"""A small POSIX-shell lexer: commands, pipelines, redirections, here-documents, substitutions.

It does what bash does to words before running them — quote removal, backslash escapes,
ANSI-C `$'\\x72m'` decoding, `${IFS}` as a separator — and keeps what could run something else:
`$( )`, backticks and `<( )` become nested scripts, here-document bodies are kept on their
redirection. It never raises: unbalanced quotes run to the end of the text. Hand-written on regular
expressions because bashlex costs ~400 µs a command here and fails on some real ones; this takes
tens of µs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Command", "Pipeline", "Redirect", "Script", "lex"]

_MAX_DEPTH = 12
_PLAIN = re.compile(r"[^\s;&|()<>'\"\\`$]+")
_BLANK = re.compile(r"[ \t\r\f\v]+")
_REDIRECT = re.compile(r"&>>|&>|<<<|<<-|<<|>>|>&|<&|<>|>\||<|>")
_IFS = re.compile(r"\{IFS[^}]*\}|IFS\b")
_ANSI = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)", re.S)
_ANSI_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "v": "\v"}
SUB = "$(…)"  # what a command substitution looks like inside a word
_BREAK = "\x00"  # an unquoted ${IFS}: a word separator


@dataclass(slots=True)
class Redirect:
    op: str  # ">", ">>", "<", "<<", "<<-", "<<<", "&>", ">&", ...
    target: str  # the file word, or the body of a here-document / here-string


@dataclass(slots=True)
class Command:
    words: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    subs: list[Script] = field(default_factory=list)  # $( ), ` `, <( ), >( ) in this command


@dataclass(slots=True)
class Pipeline:
    commands: list[Command] = field(default_factory=list)


Script = list[Pipeline]


def lex(text: str) -> Script:
    """Parse shell text into pipelines of commands; lenient, never raises."""
    if text.isascii() and not _NOT_SIMPLE.search(text):  # one command of plain words
        words = text.split()
        return [Pipeline([Command(words)])] if words else []
    if not _NEEDS_FULL.search(text):
        fast = _lex_flat(text)
        if fast is not None:
            return fast
    return _Lexer(text, 0).script(None)[0]


# Text without substitutions, here-documents or ANSI-C quotes (most commands) is cut into tokens
# by one findall (blanks match nothing, so they cost no Python step) and each token is told apart
# by its first character; the character-level lexer below handles the rest. A quote or backslash
# no word can take (an unbalanced quote), or an unusual space character, hands the text to the
# lenient lexer. A command of plain words (no operator, redirection, quote, escape, comment,
# expansion or newline; only spaces and tabs as blanks, not str.split's other separators) is
# just split.
_NOT_SIMPLE = re.compile(r"[;&|()<>'\"\\#$`\n\x0b\x0c\x1c-\x1f]")
_NEEDS_FULL = re.compile(r"\$\(|`|<<|\$'|[<>]\(|IFS|\\\n|\$\{")
_FLAT = re.compile(
    r"""\n|\#[^\n]*|\d*(?:&>>|&>|>>|>&|<&|<>|>\||<|>)|&&|\|\||;;|\|&|[;&|()]
    |(?:[^\s;&|()<>'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+|['"\\]|[^\S \t\r\f\v\n]""",
    re.X | re.S,
)
_OPS = frozenset(["\n", "&&", "||", ";;", "|&", ";", "&", "|", "(", ")"])
_REDIR_HEADS = ("<", ">", "&")  # after a file-descriptor number: 2>&1, 3<file
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.S)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\])")


def _unquote(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1)
    if m.group(2) is not None:
        return _DQ_ESCAPE.sub(r"\1", m.group(2))
    return m.group(3)


@lru_cache(maxsize=4096)
def _unquote_word(word: str) -> str:
    """Quote removal for one word (cached: the same quoted words come back again and again)."""
    return _QUOTED.sub(_unquote, word)


def _lex_flat(text: str) -> Script | None:
    pipelines: Script = []
    pipe = Pipeline()
    cmd = Command()
    redirect_op: str | None = None
    closed = False  # the last token closed a group: `(a; b) | c` pipes b into c
    for tok in _FLAT.findall(text):
        first = tok[0]
        if tok in _OPS:
            redirect_op = None  # a redirection with no file: the next word is not its target
            if cmd.words or cmd.redirects:
                pipe.commands.append(cmd)
                cmd = Command()
            elif closed and tok in ("|", "|&") and not pipe.commands and pipelines:
                pipe = pipelines.pop()
            if tok != "|" and tok != "|&" and pipe.commands:
                pipelines.append(pipe)
                pipe = Pipeline()
            closed = tok == ")"
            continue
        closed = False
        if first == "#":
            continue  # a comment
        elif first in "<>&" or (first.isdigit() and tok.lstrip("0123456789")[:1] in _REDIR_HEADS):
            redirect_op = tok.lstrip("0123456789")
        elif len(tok) == 1 and (first in "'\"\\" or first.isspace()):
            return None  # an unbalanced quote: let the full lexer be lenient about it
        else:
            if "'" in tok or '"' in tok or "\\" in tok:
                tok = _unquote_word(tok)
            if redirect_op is None:
                cmd.words.append(tok)
            else:
                cmd.redirects.append(Redirect(redirect_op, tok))
                redirect_op = None
    if cmd.words or cmd.redirects:
        pipe.commands.append(cmd)
    if pipe.commands:
        pipelines.append(pipe)
    return pipelines


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        if head in "xuU" and len(esc) > 1:
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if head.isdigit():
            return chr(int(esc, 8))
        return _ANSI_SIMPLE.get(esc, esc)

    return _ANSI.sub(one, body)


class _Lexer:
    __slots__ = ("depth", "i", "s")

    def __init__(self, s: str, depth: int) -> None:
        self.s = s
        self.i = 0
        self.depth = depth

    def script(self, stop: str | None) -> tuple[Script, int]:
        """Lex from self.i to the end, or to an unmatched `)` when stop is set."""
        s, n = self.s, len(self.s)
        pipelines: Script = []
        pipe = Pipeline()
        cmd = Command()
        word: list[str] | None = None
        redirect_op: str | None = None
        heredocs: list[tuple[Redirect, str, bool]] = []
        parens = 0

        def end_word() -> None:
            nonlocal word, redirect_op
            if word is None:
                return
            text = "".join(word)
            word = None
            if redirect_op is None:
                cmd.words.append(text)
                return
            red = Redirect(redirect_op, text)
            cmd.redirects.append(red)
            if redirect_op in ("<<", "<<-"):
                heredocs.append((red, text, redirect_op == "<<-"))
            redirect_op = None

        def end_command(pipe_on: bool) -> None:
            nonlocal cmd, pipe, redirect_op
            end_word()
            redirect_op = None  # `cmd >` then a newline: the next word is a command, not a file
            if cmd.words or cmd.redirects or cmd.subs:
                pipe.commands.append(cmd)
            cmd = Command()
            if not pipe_on:
                if pipe.commands:
                    pipelines.append(pipe)
                pipe = Pipeline()

        while self.i < n:
            c = s[self.i]
            m = _PLAIN.match(s, self.i)
            if m:
                if word is None:
                    if c == "#":
                        nl = s.find("\n", self.i)
                        self.i = n if nl < 0 else nl
                        continue
                    word = []
                word.append(m.group())
                self.i = m.end()
                continue
            if c in " \t\r\f\v":
                end_word()
                blank = _BLANK.match(s, self.i)
                self.i = blank.end() if blank else self.i + 1
            elif c == "\n":
                end_command(False)
                self.i += 1
                for red, delim, strip in heredocs:
                    red.target = self._heredoc_body(delim, strip)
                heredocs.clear()
            elif c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                self.i += 2
                if nxt != "\n":
                    word = (word or []) + [nxt]
            elif c == "'":
                end = s.find("'", self.i + 1)
                end = n if end < 0 else end
                word = (word or []) + [s[self.i + 1 : end]]
                self.i = end + 1
            elif c == '"':
                word = (word or []) + [self._double_quoted(cmd)]
            elif c == "`":
                word = (word or []) + [self._backtick(cmd)]
            elif c == "$":
                part = self._dollar(cmd)
                if part == _BREAK:
                    end_word()
                else:
                    word = (word or []) + [part]
            elif c in "<>" and s.startswith("(", self.i + 1):
                self.i += 2
                cmd.subs.append(self._nested(")"))
                word = (word or []) + [SUB]
            elif c in "<>" or s.startswith("&>", self.i):
                if word is not None and "".join(word).isdigit():
                    word = None  # a file descriptor number: 2>&1
                end_word()
                found = _REDIRECT.match(s, self.i)
                op = found.group() if found else c
                self.i += len(op)
                redirect_op = op
            elif c == "|":
                end_word()
                if s.startswith("||", self.i):
                    end_command(False)
                    self.i += 2
                else:
                    end_command(True)
                    self.i += 2 if s.startswith("|&", self.i) else 1
            elif c in ";&":
                end_command(False)
                self.i += 2 if s.startswith(c * 2, self.i) else 1
            elif c == "(" and word is not None and "".join(word).endswith("="):
                start = self.i = self.i + 1  # `arr=( $(cmd) x )`: its substitutions run
                for inner in self._nested(")"):
                    for sub_cmd in inner.commands:
                        cmd.subs.extend(sub_cmd.subs)
                word.append(f"({s[start : self.i - 1]})")  # the text: "${arr[@]}" runs it
            elif c == "(":
                end_command(False)
                parens += 1
                self.i += 1
            else:  # ")"
                if parens == 0 and stop == ")":
                    end_command(False)
                    self.i += 1
                    return pipelines, self.i
                parens = max(0, parens - 1)
                end_command(False)
                self.i += 1
                after = _BLANK.match(s, self.i)
                j = after.end() if after else self.i
                if s.startswith("|", j) and not s.startswith("||", j) and pipelines:
                    pipe = pipelines.pop()  # `(a; b) | c`: c reads what the group's last prints
        end_command(False)
        return pipelines, self.i

    def _nested(self, stop: str) -> Script:
        if self.depth >= _MAX_DEPTH:
            end = self.s.find(stop, self.i)
            self.i = len(self.s) if end < 0 else end + 1
            return []
        sub = _Lexer(self.s, self.depth + 1)
        sub.i = self.i
        script, self.i = sub.script(stop)
        return script

    def _lex_text(self, text: str) -> Script:
        if self.depth >= _MAX_DEPTH:
            return []
        return _Lexer(text, self.depth + 1).script(None)[0]

    def _heredoc_body(self, delim: str, strip_tabs: bool) -> str:
        s, lines = self.s, []
        while self.i < len(s):
            nl = s.find("\n", self.i)
            end = len(s) if nl < 0 else nl
            line = s[self.i : end]
            self.i = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
            lines.append(line)
        return "\n".join(lines)

    def _double_quoted(self, cmd: Command) -> str:
        s, n = self.s, len(self.s)
        self.i += 1
        out: list[str] = []
        while self.i < n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.i + 1 < n:
                nxt = s[self.i + 1]
                out.append(nxt if nxt in '$`"\\' else ("" if nxt == "\n" else c + nxt))
                self.i += 2
            elif c == "$":
                part = self._dollar(cmd)
                out.append(" " if part == _BREAK else part)
            elif c == "`":
                out.append(self._backtick(cmd))
            else:
                j = self.i + 1
                while j < n and s[j] not in '"\\$`':
                    j += 1
                out.append(s[self.i : j])
                self.i = j
        return "".join(out)

    def _backtick(self, cmd: Command) -> str:
        s = self.s
        j = self.i + 1
        while j < len(s) and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        body = s[self.i + 1 : j].replace("\\`", "`").replace("\\\\", "\\")
        self.i = j + 1
        cmd.subs.append(self._lex_text(body))
        return SUB

    def _dollar(self, cmd: Command) -> str:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'":  # ANSI-C quoting
            j = i + 2
            while j < len(s) and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            self.i = j + 1
            return _ansi_c(s[i + 2 : j])
        if s.startswith("$((", i):  # arithmetic: only the substitutions inside it run
            depth, j = 0, i + 1
            while j < len(s):
                depth += {"(": 1, ")": -1}.get(s[j], 0)
                j += 1
                if depth == 0:
                    break
            self.i = j
            body = s[i + 3 : j - 2]
            if "$(" in body or "`" in body:
                for pipeline in self._lex_text(body):
                    for inner in pipeline.commands:
                        cmd.subs.extend(inner.subs)
            return "0"
        if nxt == "(":
            self.i = i + 2
            cmd.subs.append(self._nested(")"))
            return SUB
        if nxt == "{":
            depth, j = 0, i + 1
            while j < len(s):
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                j += 1
                if depth == 0:
                    break
            self.i = j
            text = s[i:j]
            if "$(" in text[2:] or "`" in text:  # ${x:-$(cmd)}: the default's command runs
                for pipeline in self._lex_text(text[2:-1]):
                    for inner in pipeline.commands:
                        cmd.subs.extend(inner.subs)
            return _BREAK if _IFS.fullmatch(text[1:]) else text
        m = _IFS.match(s, i + 1)
        if m:
            self.i = m.end()
            return _BREAK
        self.i = i + 1
        return "$"
