"""One error tree for all of nerve.

    NerveError                      status  type
    ├── ConfigError                 500     config_error        bad config: names the key path
    ├── RequestError                400     invalid_request_error
    │   ├── PayloadTooLarge         413
    │   ├── RequestTimeout          408                         the body did not arrive in time
    │   ├── UnsupportedMediaType    415                         a body that is not JSON
    │   ├── MisdirectedRequest      421                         Host is not this server's name
    │   └── NotFound                404     not_found_error
    ├── AuthError                   401     authentication_error
    ├── Forbidden                   403     permission_error    the key may not do this
    ├── RateLimited                 429     rate_limit_error    reason: window | burst | concurrent
    │   └── BudgetExceeded          429                         the key's budget for the period
    ├── UpstreamError               502     upstream_error      one provider call failed
    │   ├── UpstreamStatus                                      upstream answered 4xx/5xx
    │   ├── UpstreamTimeout         504                         no answer within timeout_seconds
    │   ├── UpstreamConnection
    │   └── AgentCallFailed                     agent_call_failed   a registered agent's call
    ├── AllCandidatesFailed         502     upstream_error      every candidate was tried or skipped
    │                               504                         ... and every call made timed out
    ├── SharedStateUnavailable      503     server_error        Redis down, redis.on_error: closed
    ├── EngineUnavailable           503     server_error        a voice engine is not installed here
    └── WalError                    500     wal_error           the memory WAL cannot be used

Upstream exceptions (aiohttp, JSON decoding) become UpstreamError in the providers, once;
NerveError becomes OpenAI-shaped JSON in one HTTP handler and an SSE error event in one place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "AgentCallFailed",
    "AllCandidatesFailed",
    "AuthError",
    "BudgetExceeded",
    "ConfigError",
    "EngineUnavailable",
    "Forbidden",
    "MisdirectedRequest",
    "NerveError",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RequestError",
    "RequestTimeout",
    "SharedStateUnavailable",
    "UnsupportedMediaType",
    "UpstreamConnection",
    "UpstreamError",
    "UpstreamStatus",
    "UpstreamTimeout",
    "WalError",
]


class NerveError(Exception):
    status: int = 500  # the HTTP status it maps to
    type: str = "server_error"  # the OpenAI error type

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI error shape: {"error": {"message", "type", "code"}}."""
        return {"error": {"message": self.message, "type": self.type, "code": self.code}}

    def headers(self) -> dict[str, str]:
        return {}


class ConfigError(NerveError):
    type = "config_error"

    def __init__(
        self, message: str, *, path: str = "", problems: Sequence[tuple[str, str]] = ()
    ) -> None:
        super().__init__(f"{path}: {message}" if path else message, code="invalid_config")
        self.path = path
        # Every (key path, message) found, when a whole document was checked.
        self.problems = list(problems) or ([(path, message)] if path else [])


class RequestError(NerveError):
    status = 400
    type = "invalid_request_error"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.param = param

    def to_dict(self) -> dict[str, Any]:
        body = super().to_dict()
        body["error"]["param"] = self.param
        return body


class PayloadTooLarge(RequestError):
    status = 413


class RequestTimeout(RequestError):
    status = 408


class UnsupportedMediaType(RequestError):
    status = 415


class MisdirectedRequest(RequestError):
    status = 421


class NotFound(RequestError):
    status = 404
    type = "not_found_error"


class AuthError(NerveError):
    status = 401
    type = "authentication_error"


class Forbidden(NerveError):
    """The caller is who it says, but its key does not allow this (route, model or user)."""

    status = 403
    type = "permission_error"


class RateLimited(NerveError):
    status = 429
    type = "rate_limit_error"

    def __init__(self, reason: str, retry_after: float) -> None:
        super().__init__(
            f"rate limit exceeded ({reason}); retry after {max(1, math.ceil(retry_after))}s",
            code=reason,
        )
        self.reason = reason
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"retry-after": str(max(1, math.ceil(self.retry_after)))}


class BudgetExceeded(RateLimited):
    """The key's budget for its period is spent (or would be by this call's reservation)."""

    def __init__(self, message: str, retry_after: float) -> None:
        NerveError.__init__(self, message, code="budget_exceeded")
        self.reason = "budget_exceeded"
        self.retry_after = retry_after


class UpstreamError(NerveError):
    """One call to one provider failed. `retryable` says whether another candidate may help."""

    status = 502
    type = "upstream_error"
    retryable: bool = True


class UpstreamStatus(UpstreamError):
    def __init__(
        self, status: int, message: str, *, retry_after: float | None = None, body: bytes = b""
    ) -> None:
        super().__init__(f"upstream answered {status}: {message}", code=f"upstream_{status}")
        self.upstream_status = status
        self.retry_after = retry_after
        self.body = body
        # 400/413/422 say the request itself is wrong: another model would refuse it too, so the
        # client gets the upstream's status. Anything else (5xx, 429, 401/403/404 for a bad key
        # or an unknown model at this provider) may well work on the next candidate.
        self.retryable = status not in (400, 413, 422)
        if not self.retryable:
            self.status = status
            self.type = "invalid_request_error"

    def the_clients(self) -> UpstreamStatus:
        """Mark this answer as the client's own fault (a 404 for a model the client named): its
        status goes back as it is, and it counts against no breaker."""
        self.retryable = False
        self.status = self.upstream_status
        self.type = "not_found_error" if self.upstream_status == 404 else "invalid_request_error"
        return self


class UpstreamTimeout(UpstreamError):
    status = 504  # Gateway Timeout: nerve, a gateway, got no timely answer

    def __init__(self, message: str = "upstream timed out") -> None:
        super().__init__(message, code="upstream_timeout")


class UpstreamConnection(UpstreamError):
    def __init__(self, message: str) -> None:
        super().__init__(message, code="upstream_unreachable")


class AgentCallFailed(UpstreamError):
    """A call to a registered agent gave no JSON answer; `retryable` when another attempt of
    an idempotent task may succeed. The registry reports it as a route result, not a raise."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message, code="agent_call_failed")
        self.retryable = retryable


class AllCandidatesFailed(NerveError):
    """No candidate answered. 504 when every one called timed out (those skipped without a
    call do not count: the one answer nerve waited for never came); else 502."""

    status = 502
    type = "upstream_error"

    def __init__(
        self, route: str, attempts: list[tuple[str, str]], *, timed_out: bool = False
    ) -> None:
        tried = "; ".join(f"{target}: {why}" for target, why in attempts) or "no candidates"
        super().__init__(f"all candidates for route '{route}' failed ({tried})", code="all_failed")
        self.route = route
        self.attempts = attempts
        if timed_out:
            self.status = 504


class SharedStateUnavailable(NerveError):
    """Redis is down and `redis.on_error: closed`: requests are refused rather than unlimited."""

    status = 503

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message, code="shared_state_unavailable")
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"retry-after": str(max(1, math.ceil(self.retry_after)))}


class EngineUnavailable(NerveError):
    """A speech engine is missing on this machine; the message names what to install."""

    status = 503

    def __init__(self, message: str) -> None:
        super().__init__(message, code="engine_unavailable")


class WalError(NerveError):
    """The memory WAL cannot be used: a damaged header, or an earlier write to it failed."""

    type = "wal_error"
