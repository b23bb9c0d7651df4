"""Starting and stopping the process's tracer: the server's lifespan does both.

`start_tracing(config.telemetry)` does nothing without an endpoint (and imports nothing);
with one it needs the `nerve[telemetry]` extra, or stops start-up with a ConfigError naming the
install command. `stop_tracing` flushes what is still queued and shuts the exporter down, off
the event loop (the exporter's HTTP calls block). Each worker process starts its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from nerve.errors import ConfigError
from nerve.telemetry import active

if TYPE_CHECKING:
    from nerve.telemetry.tracing import Tracing

__all__ = ["INSTALL_HINT", "Settings", "require_telemetry", "start_tracing", "stop_tracing",
           "traces_url"]  # fmt: skip

log = logging.getLogger("nerve.telemetry")
INSTALL_HINT = "pip install 'nerve[telemetry]'"
TRACES_PATH = "/v1/traces"


class Settings(Protocol):
    """The `telemetry` config section as read here (TelemetryConfig: this package sits below
    the config, so that safety and memory may use it)."""

    @property
    def otlp_endpoint(self) -> str | None: ...
    @property
    def service_name(self) -> str: ...
    @property
    def sample_ratio(self) -> float: ...
    @property
    def capture_content(self) -> bool: ...
    @property
    def headers(self) -> Mapping[str, str]: ...


def require_telemetry() -> None:
    """Raise ConfigError naming the install command when the OpenTelemetry SDK or its OTLP/HTTP
    exporter is missing (opentelemetry-api alone comes with other packages)."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            f"set, but the OpenTelemetry packages that export traces are not installed "
            f"({e.name or e}): {INSTALL_HINT}",
            path="telemetry.otlp_endpoint",
        ) from None


def traces_url(endpoint: str) -> str:
    """The collector's OTLP/HTTP traces URL: `endpoint` with /v1/traces added, unless it ends so."""
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    if not path.endswith(TRACES_PATH):
        path += TRACES_PATH
    return parts._replace(path=path).geturl()


def start_tracing(settings: Settings) -> Tracing | None:
    """Start exporting traces as `settings` say, or nothing (None) without an endpoint."""
    if not settings.otlp_endpoint:
        return None
    require_telemetry()
    from nerve.telemetry.tracing import Tracing

    url = traces_url(settings.otlp_endpoint)
    tracing = Tracing.export_to(
        url, service_name=settings.service_name, sample_ratio=settings.sample_ratio,
        headers=dict(settings.headers), capture_content=settings.capture_content,
    )  # fmt: skip
    active.tracing = tracing
    log.info("traces go to %s (%s, sampled %g)", url, settings.service_name, settings.sample_ratio)
    return tracing


async def stop_tracing(tracing: Tracing | None) -> None:
    """Flush and shut down what `start_tracing` started (None: nothing)."""
    if tracing is None:
        return
    if active.tracing is tracing:
        active.tracing = None
    await asyncio.to_thread(tracing.shutdown)
