"""Which Host names the server answers to when it has no API keys (DNS rebinding).

Without `server.api_keys`, nerve listens on loopback and trusts whoever reaches it. A web page
of evil.example whose name is re-pointed at 127.0.0.1 could then drive the gateway, memory
and the assistant's tools from the user's own browser; what gives it away is the Host header.
So in that mode only loopback names, `server.host` and `server.allowed_hosts` are served (421
otherwise). With API keys every request carries its own proof and any Host is fine: the
boundary (access/boundary.py) asks this guard only while there are none.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from nerve.config import ServerConfig
from nerve.errors import MisdirectedRequest

__all__ = ["HostGuard"]

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class HostGuard:
    def __init__(self, server: ServerConfig) -> None:
        names = {*_LOOPBACK, server.host, *server.allowed_hosts}
        self.names = frozenset(n.lower().strip("[]") for n in names)

    def check(self, scope: MutableMapping[str, Any]) -> None:
        """Raise MisdirectedRequest unless the request's Host is one of ours (the boundary
        asks only while the server has no API keys)."""
        host = b""
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
                break
        if _hostname(host.decode("latin-1")) not in self.names:
            raise MisdirectedRequest(
                "this server answers only to its own names without API keys (DNS-rebinding "
                "guard); add the name to server.allowed_hosts, or set server.api_keys",
                code="unknown_host",
            )


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8080
        return host[1 : host.find("]")] if "]" in host else host
    return host.rpartition(":")[0] if host.count(":") == 1 else host
