"""Layer 2 (SF-2): the risk class of each intent, from the seed's table."""

from __future__ import annotations

from nerve.safety.verdict import RiskLevel

__all__ = ["INTENT_RISK", "intent_risk"]

INTENT_RISK: dict[str, RiskLevel] = {
    "convert_format": "low",
    "summarize": "low",
    "generate_report": "low",
    "query_data": "low",
    "explain": "low",
    "chat": "low",  # conversation runs nothing (RT-2)
    "send_message": "medium",
    "unknown": "medium",
    "delete_data": "high",
    "drop_database": "critical",
    "system_shutdown": "critical",
}


def intent_risk(intent: str) -> RiskLevel:
    """An intent nerve does not know is treated like `unknown`: medium."""
    return INTENT_RISK.get(intent, INTENT_RISK["unknown"])
