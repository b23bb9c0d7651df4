"""Is a message a coding task, or one that needs reasoning? Cheap cues (SPEC GW-5, TP-3).

nerve.intent classifies what a request asks for among its own intents (summarize, convert...),
none of which is "code" or "reasoning", so these are separate cue lists, and they lean to
precision: a false "reasoning" sends a message to the dearest model, a false "code" to a coder.

code       one strong cue: a ``` fence; a traceback or compiler error; a line of code (a
           definition, an import, an assignment to a declared name, a call ending in `;` or
           `{`, a SQL statement in capitals); a shell command with flags, a pipe or a path;
           a word that means code alone ("traceback", "dockerfile", "refactor"); or two
           programming words of different kinds ("python" and "function", "bug" and "script").
reasoning  an explicit ask to reason (step by step, think it through, prove, derive), a puzzle,
           a maths problem (an expression, an equation, named maths), or a weighing of options
           (pros and cons, trade-offs, compare X with Y, decide between, should I ... or ...).

Each function returns the cue it found, for the decision's `detail`, or None. English only: a
romanized Hindi ask matches only where it borrows the English words ("step by step", "python").
bench/routing_when.py measures both on the held-out halves of the shared data: code fires on
92% of shell one-liners and 85% of SQL statements, and on 1 of 5,269 conversational texts;
reasoning on none of them. `prose_of` is the text without its code, for language detection.
"""

from __future__ import annotations

import re

__all__ = ["code_cue", "prose_of", "reasoning_cue"]

_HEAD = 4096  # like the cascade, only a long message's ends are read
_TAIL = 1024

Cues = tuple[tuple[tuple[str, ...], "re.Pattern[str] | None"], ...]

# Each cue is tried only when one of its literals is in the text (`in` is a fast C scan, a big
# alternation is not); a cue without a pattern is its literal.
_CODE_INLINE: Cues = (
    (("```",), None),
    (("Traceback (most recent call last)",), None),
    (("egmentation fault",), None),
    (("Error: ", "Exception: "), re.compile(r"\b[A-Z]\w*(?:Error|Exception): \S")),  # KeyError:
    (("function",), re.compile(r"\bfunction\s*\w*\s*\([^)]*\)\s*\{")),
    ((");",), re.compile(r"\w\([^()\n]*\)\s*;[ \t]*$", re.MULTILINE)),  # a call statement
    (("=>", "->"), re.compile(r"(?:=>|->)\s*\{")),
    (("SELECT", "INSERT", "CREATE", "UPDATE", "DELETE", "ALTER", "DROP", "GRANT"), re.compile(
        r"\b(?:SELECT\s+[\w*.,\s()]+\s+FROM|INSERT\s+INTO|CREATE\s+(?:TABLE|(?:UNIQUE\s+)?INDEX)"
        r"|UPDATE\s+\w+\s+SET|DELETE\s+FROM|ALTER\s+TABLE|DROP\s+TABLE|GRANT\s+\w+.*\bON)\b")),
    (("$(", "|"), re.compile(r"\$\(\w|\|\s*(?:grep|awk|sed|sort|uniq|xargs|wc|head|tail|tr|cut|"
                             r"tee|less)\b")),
)  # fmt: skip
# Cues that open a line (after its indentation), in one pattern.
_CODE_LINE = re.compile(
    r"^[ \t]*(?:"
    + "|".join(
        (
            r"at [\w$.<>]+\([\w$.]+:\d+\)",  # a Java/JS stack frame
            r"(?:[\w./-]+:\d+:(?:\d+:)? )?(?:fatal )?error(?:\[E\d{4}\])?: \S",  # gcc, rustc
            r"(?:async\s+)?def \w+\(",
            r"class \w+(?:\(.*\))?\s*[:{]",
            r"(?:from [\w.]+ )?import [\w.]+(?: as \w+)?[ \t]*;?[ \t]*$",
            r"#include\s*[<\"]",
            r"(?:const|let|var)\s+\w+\s*=",
            r"(?:pub\s+)?fn \w+\s*[(<]",
            r"func (?:\(\w+ \*?\w+\) )?\w+\(",
            r"(?:public|private|protected)\s+(?:static\s+)?[\w<>\[\]]+\s+\w+\s*\(",
            r"SELECT\s+\S",
            r"\$ \S",  # a shell prompt
            # a command, a few arguments, then a flag
            r"[a-z][\w.-]*(?: [^\s,-][^\s,]*){0,5} (?:-[A-Za-z]{1,4}|--[a-z][\w-]+)(?:[= ]|$)",
            # a well-known command with a flag, pipe, path, variable or redirection
            r"(?:sudo\s+)?(?:ls|cd|cat|grep|find|awk|sed|rm|cp|mv|mkdir|chmod|chown|tar|curl|"
            r"wget|git|docker|kubectl|pip3?|npm|npx|yarn|apt(?:-get)?|brew|ssh|scp|rsync|ps|kill|"
            r"xargs|sort|uniq|head|tail|wc|du|df|make|cargo|go|python3?|node|java|gcc|systemctl|"
            r"journalctl|echo|export|source|top|which|file|ln|touch|diff|zip|unzip|gzip)"
            r" (?:[^\n]*?\s)?(?:--?[A-Za-z]|\||[~.]?/\S|\$\w|>)",
        )
    )
    + ")",
    re.MULTILINE,
)
_CODE_WORDS = {
    word: topic
    for topic, words in (
        ("lang", "python javascript typescript java kotlin golang rustlang c++ c# php ruby "
                 "swift scala haskell perl bash powershell sql html css json yaml regex"),
        ("thing", "function functions method methods variable variables class classes "
                  "script scripts code snippet api endpoint repo repository module library "
                  "package compiler interpreter array dict dictionary struct enum"),
        ("act", "debug debugging compile compiling refactor refactoring implement "
                "deploy programming coding"),
        ("fail", "bug bugs exception traceback stacktrace segfault crash crashes"),
        ("tool", "git github docker dockerfile kubernetes npm pip webpack pytest linter"),
    )
    for word in words.split()
}  # fmt: skip
# Words that mean code on their own; any other needs a second word of another topic.
_CODE_ALONE = frozenset((
    "traceback", "stacktrace", "segfault", "dockerfile", "refactor", "refactoring", "debug",
    "debugging", "debugger", "compiler", "linker", "regex", "javascript", "typescript", "golang",
    "kotlin", "pytest", "webpack", "kubernetes", "stderr", "stdout", "localhost",
))  # fmt: skip
_WORD = re.compile(r"[a-z][a-z+#]*")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE = re.compile(r"`[^`\n]+`")
_CODE_LINES = re.compile(_CODE_LINE.pattern + r".*$", re.MULTILINE)

# On the lower-cased text.
_REASONING: Cues = (
    (("step",), re.compile(r"\bstep[- ]by[- ]step\b")),
    (("think",), re.compile(r"\bthink (?:it |this |that )?(?:through|carefully|hard)\b")),
    (("reason", "chain of"),
     re.compile(r"\breason (?:about|through|it out)\b|\bchain of thought\b")),
    (("show",), re.compile(r"\bshow (?:your|the|all) (?:work|working|reasoning|steps)\b")),
    (("prov", "proof", "deriv", "theorem", "lemma"),
     re.compile(r"\b(?:prove|proof|derive|derivation|theorem|lemma)\b")),
    (("puzzle", "riddle", "teaser", "logic problem"),
     re.compile(r"\b(?:puzzle|riddle|brain ?teaser|logic problem)\b")),
    (("integra", "derivative", "differentiate", "equation", "expected value", "combinatorics",
      "permutations", "factorial", "eigen"),
     re.compile(r"\b(?:integral|integrate|derivative|differentiate|equation|expected value|"
                r"combinatorics|permutations|factorial|eigen\w+)\b")),
    (("probability",), re.compile(
        r"\bprobability (?:that|of (?:getting|drawing|rolling|picking|at least|exactly))\b")),
    (("how many ways",), None),
    (("solve",), re.compile(r"\bsolve (?:for|this|the|these)\b")),
    (("*", "×", "÷", "^"), re.compile(r"\d\s*[*×÷^]\s*\d|\b[a-z]\s*\^\s*\d")),  # 12 * 7, x^2
    (("=",), re.compile(r"\d\s*[a-z]\s*[-+]\s*\d+\s*=")),  # 2x + 3 = 7
    (("pros and cons", "trade"), re.compile(r"\bpros and cons\b|\btrade-?offs?\b")),
    (("compare",), re.compile(r"\bcompare\b.{1,80}\b(?:with|and|vs\.?|versus|against)\b")),
    (("weigh", "evaluat", "assess", "analy"), re.compile(
        r"\b(?:weigh|evaluate|assess|analy[sz]e)\b.{0,60}\b(?:options?|risks?|plans?|"
        r"approach(?:es)?|decisions?|arguments?|proposals?|strateg(?:y|ies)|assumptions?)\b")),
    (("decide between",), None),
    (("should",), re.compile(r"\bshould (?:i|we)\b.{1,80}\bor\b")),
    (("consequences", "implications", "order effects"),
     re.compile(r"\b(?:consequences|implications|second[- ]order effects) of\b")),
    (("root cause",), None),
)  # fmt: skip


def _first(text: str, cues: Cues) -> str | None:
    for literals, pattern in cues:
        present = [literal for literal in literals if literal in text]
        if not present:
            continue
        if pattern is None:
            return present[0]
        found = pattern.search(text)
        if found is not None:
            return found.group()
    return None


def _ends(text: str) -> str:
    if len(text) <= _HEAD + _TAIL:
        return text
    return f"{text[:_HEAD]}\n{text[-_TAIL:]}"


def code_cue(text: str) -> str | None:
    text = _ends(text)
    strong = _first(text, _CODE_INLINE)
    if strong is None:
        line = _CODE_LINE.search(text)
        strong = None if line is None else line.group()
    if strong is not None:
        return f"code: {strong.strip()[:40]!r}"
    topics: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        if word in _CODE_ALONE:
            return f"code word: {word}"
        topic = _CODE_WORDS.get(word)
        if topic is not None:
            topics.setdefault(topic, word)
            if len(topics) >= 2:
                return f"code words: {', '.join(topics.values())}"
    return None


def reasoning_cue(text: str) -> str | None:
    found = _first(_ends(text).lower(), _REASONING)
    return None if found is None else f"reasoning: {found[:40]!r}"


def prose_of(text: str) -> str:
    """`text` without its code: fenced blocks, `inline code` and lines that are code. Commands
    and identifiers look like romanized words to a language detector; the ask is in the rest."""
    if "`" in text:
        text = _INLINE.sub(" ", _FENCED.sub("\n", text))
    return _CODE_LINES.sub("", text)
