"""Safety (SF-1..SF-5): one chokepoint every tool call passes before it runs.

    check_rules(kind, content) -> Verdict        layer 1: parse, don't grep (sync, µs)
    SafetyEngine(strict, judge).check(...)       layers 1 → 2 (intent risk) → 3 (LLM judge)
    SafeShell(allowed_paths).run(command)        SF-5: checked, confined, time- and size-capped

Kinds: shell (shell.py → triggers, segments, lexer, redirects, feeds, fsrules, findrules,
readers, netrules, gitrules, toolrules, clirules, servicerules, inline, windows; each path
target through targets.py and sensitive.py), sql (sql.py), action and text (actions.py).
To cover one more tool, add a rule to the module of its family (its program name then
reaches the first pass by itself); a CLI whose verb says what it does (`tool thing delete`)
needs nothing: clirules.generic_cli.
"""

from nerve.safety.engine import Judge, SafetyEngine, check_rules
from nerve.safety.execute import SafeShell, ShellResult
from nerve.safety.risk import INTENT_RISK
from nerve.safety.scope import DEFAULT_SCOPE, Scope, ScopeError
from nerve.safety.verdict import BlockedBy, Category, Kind, RiskLevel, Verdict

__all__ = [
    "DEFAULT_SCOPE",
    "INTENT_RISK",
    "BlockedBy",
    "Category",
    "Judge",
    "Kind",
    "RiskLevel",
    "SafeShell",
    "SafetyEngine",
    "Scope",
    "ScopeError",
    "ShellResult",
    "Verdict",
    "check_rules",
]
