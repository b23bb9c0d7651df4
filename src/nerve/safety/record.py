"""Every verdict said once, as a log line carrying its fields.

    record(verdict, source="guard", check="tool_call", subject="Bash: rm -rf build")

logs "VERDICT tool_call allowed (low risk) from guard: ..." at INFO on `nerve.safety`, with the
fields as `extra={"nerve_record": {...}}`: the admin panel stores them as a VERDICT event in
the shared event log (admin/records.py), which its Safety page lists. Safety cannot reach the
panel (it is a layer below), so a log record is the seam. `subject` is cut to SHOWN_CHARS; the
event log scrubs configured secrets from it. When INFO is off for `nerve` nothing is built.
"""

from __future__ import annotations

import logging
from typing import Any

from nerve.safety.verdict import Verdict

__all__ = ["SHOWN_CHARS", "record"]

log = logging.getLogger("nerve.safety")
SHOWN_CHARS = 200  # of the judged text, in the record: enough to tell which one it was


def record(verdict: Verdict, *, source: str, check: str, subject: str, **fields: Any) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    what = "allowed" if verdict.allowed else "blocked"
    kept = {"kind": "VERDICT", "source": source, "check": check,
            "subject": subject[:SHOWN_CHARS], **fields, **verdict.to_dict()}  # fmt: skip
    log.info("VERDICT %s %s (%s risk) from %s: %s", check, what, verdict.risk_level, source,
             verdict.reason, extra={"nerve_record": kept})  # fmt: skip
