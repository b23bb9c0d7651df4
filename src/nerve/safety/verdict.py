"""The verdict every safety check returns (SF-4), and the risk scale the layers share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "BlockedBy",
    "Category",
    "Finding",
    "Kind",
    "RiskLevel",
    "Verdict",
    "higher",
    "risk_rank",
    "wordset",
]

RiskLevel = Literal["low", "medium", "high", "critical"]
BlockedBy = Literal["rule", "risk", "llm"]
# What kind of harm a rule found, when it names one: a client can tell "the agent tried to
# read ~/.aws/credentials" from "the agent tried to delete the repository" without parsing text.
Category = Literal[
    "destructive",  # deletes or overwrites data, disks, history, infrastructure
    "workspace",  # changes files outside the workspace the check was given
    "system",  # changes the operating system's own files, users, services or boot
    "persistence",  # plants something that runs later: shell rc files, keys, cron, services
    "credentials",  # reads or sends secrets: keys, tokens, password files
    "exfiltration",  # sends local data or a shell to another host
    "read_only",  # a write refused because the check asked for reads only
    "code",  # runs code nerve cannot see (downloaded, decoded, computed)
]
Kind = Literal["shell", "sql", "text", "action"]

_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}


def risk_rank(level: RiskLevel) -> int:
    return _RANK[level]


@dataclass(frozen=True, slots=True)
class Verdict:
    """`{allowed, risk_level, reason, blocked_by, category}`: blocked_by is None when allowed;
    category is None when no rule named one."""

    allowed: bool
    risk_level: RiskLevel
    reason: str
    blocked_by: BlockedBy | None
    category: Category | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "risk_level": self.risk_level,
            "reason": self.reason,
            "blocked_by": self.blocked_by,
            "category": self.category,
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """What one analyser concluded: a risk and why. High and critical block in layer 1."""

    risk: RiskLevel
    reason: str
    category: Category | None = None

    @property
    def blocks(self) -> bool:
        return _RANK[self.risk] >= 2

    def labelled(self, label: str) -> Finding:
        """The same finding, its reason prefixed with where it was found."""
        return Finding(self.risk, f"{label}{self.reason}", self.category)


LOW = Finding("low", "no dangerous operation found")


def higher(a: Finding, b: Finding | None) -> Finding:
    """The riskier of two findings; the first one wins ties (it was found first)."""
    if b is None or _RANK[b.risk] <= _RANK[a.risk]:
        return a
    return b


def wordset(text: str) -> frozenset[str]:
    """A frozen set of the whitespace-separated words of text (keeps long word lists compact)."""
    return frozenset(text.split())
