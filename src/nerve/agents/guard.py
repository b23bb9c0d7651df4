"""Where nerve may send an agent call (SSRF): http(s) only, to loopback or an allowed host.

A registered endpoint is a URL anyone with API access chose, and nerve POSTs to it from inside
the network, so by default only loopback is a target. `agents.allowed_hosts` opens more: a host
name (exactly, case-insensitively), an IP address, or a CIDR network such as 10.0.0.0/8.

A host name that is not allowed itself must resolve only to loopback (or allowed networks).
That is checked twice: at registration for an early, clear error, and by the HTTP client's
resolver on every connection, so a name re-pointed after registration (DNS rebinding) is
refused at the moment of the call. IP literals never reach a resolver; `check` covers them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

__all__ = ["Guard", "GuardedResolver", "Refused"]

_HINT = "add it to agents.allowed_hosts in the config to allow calls to it"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """An endpoint nerve will not call; the message says why and how to allow it."""


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # fe80::1%eth0: drop the zone
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1
    return address


class Guard:
    def __init__(self, allowed_hosts: Iterable[str] = ()) -> None:
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allowed_hosts:
            host = entry.strip().strip("[]").rstrip(".").lower()
            try:
                self.networks.append(ipaddress.ip_network(host, strict=False))
            except ValueError:
                self.names.add(host)

    def allows_address(self, text: str) -> bool:
        address = _address(text)
        if address is None:
            return False
        return address.is_loopback or any(address in net for net in self.networks)

    def allows_name(self, host: str) -> bool:
        return host.rstrip(".").lower() in self.names

    def check(self, url: str) -> str:
        """The URL's host when the URL itself may be called (scheme, literal address, allowed
        name); a host name still to be resolved passes here. Raises Refused."""
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port out of range
        except ValueError as e:
            raise Refused(f"not a valid URL: {e}") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise Refused(f"must be an http:// or https:// URL (got {parts.scheme or 'none'!r})")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise Refused("has no host")
        if self.allows_name(host) or self.allows_address(host):
            return host
        if _address(host) is not None:
            raise Refused(f"host {host} is not loopback; {_HINT}")
        return host

    async def check_resolved(self, url: str) -> None:
        """`check`, then resolve a host name and require every address to be allowed."""
        host = self.check(url)
        if self.allows_name(host) or _address(host) is not None:
            return
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, None, type=socket.SOCK_STREAM
            )
        except OSError as e:
            raise Refused(f"host {host} cannot be resolved ({e}); {_HINT}") from None
        except UnicodeError:  # the IDNA codec: an empty or over-long label ("a..b")
            raise Refused(f"host {host!r} is not a valid host name") from None
        self.require([str(info[4][0]) for info in infos], host)

    def require(self, addresses: list[str], host: str) -> None:
        refused = sorted({a for a in addresses if not self.allows_address(a)})
        if refused or not addresses:
            shown = ", ".join(refused) or "nothing"
            raise Refused(f"host {host} resolves to {shown}, which is not loopback; {_HINT}")


class GuardedResolver(AbstractResolver):
    """The HTTP client's resolver: every address of a not-allowed name must pass the guard."""

    def __init__(self, guard: Guard, inner: AbstractResolver) -> None:
        self.guard = guard
        self.inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        if not self.guard.allows_name(host):
            self.guard.require([r["host"] for r in found], host)
        return found

    async def close(self) -> None:
        await self.inner.close()
