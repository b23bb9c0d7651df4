"""Traces (SPEC OB-1): OpenTelemetry spans of the gateway, safety, memory and MCP, over OTLP/HTTP.

Owns the process's tracer and every span nerve makes. `telemetry: {otlp_endpoint, service_name,
sample_ratio, capture_content, headers}` in the config; without an endpoint nothing is imported
or exported, and each hook costs one `if active.tracing is not None` (the `nerve[telemetry]`
extra brings opentelemetry-sdk and its OTLP/HTTP exporter). One trace per request:

    POST /v1/chat/completions        SERVER  the client's W3C traceparent continued
      chat gpt-4o-mini               CLIENT  per upstream attempt; GenAI conventions + nerve.*
      safety.check  memory.recall  memory.store  execute_tool {name}

The seams: the server span wraps an endpoint (`active.tracing.serve`), the gateway starts an
attempt per candidate (`active.tracing.attempt`, kept on `Served.span`), providers send its
traceparent (`active.tracing.outgoing`), and any other async call gets a span by `@traced(name,
describer)`. To trace one more call, decorate it and add a describer in describe.py.
"""

from nerve.telemetry.lifecycle import INSTALL_HINT, require_telemetry, start_tracing, stop_tracing
from nerve.telemetry.traced import serve_traced, traced

__all__ = ["INSTALL_HINT", "require_telemetry", "serve_traced", "start_tracing", "stop_tracing",
           "traced"]  # fmt: skip
