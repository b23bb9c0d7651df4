"""The process's tracing: None until `start_tracing` found `telemetry.otlp_endpoint` set.

Every hook reads `active.tracing` once and, when it is None, does nothing more: that check is
all traces cost when they are off, and opentelemetry is never imported then. Read it through the
module (`active.tracing`), never `from ... import tracing`, which would keep the None it saw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nerve.telemetry.tracing import Tracing

__all__ = ["tracing"]

tracing: Tracing | None = None
