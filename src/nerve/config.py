"""The config file, read once at the edge into one typed object.

Resolution: an explicit path, else $NERVE_CONFIG, else ./nerve.yaml, else the built-in defaults.
String values may use ${VAR} and ${VAR:-default}; they are interpolated after YAML parsing, so an
environment value can never change the structure of the file. Unknown keys and bad values raise
ConfigError naming the key path (``routes[0].model.provider: unknown provider 'x'``).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from nerve.config_errors import problems, summary
from nerve.config_expand import expand_presets, interpolate
from nerve.config_routes import (
    Located,
    ProviderConfig,
    ProviderModel,
    RouteConfig,
    TagTarget,
    Target,
    When,
    expand_routes,
)
from nerve.config_sections import (
    AdminConfig,
    AgentsConfig,
    AssistantConfig,
    BudgetConfig,
    CacheConfig,
    GuardConfig,
    IntentConfig,
    KeyConfig,
    LearningConfig,
    MemoryConfig,
    PathMemoryConfig,
    PipelineConfig,
    SafetyConfig,
    TelemetryConfig,
    VoiceConfig,
)
from nerve.errors import ConfigError
from nerve.secrets import decrypt_tree

__all__ = [
    "AdminConfig",
    "BudgetConfig",
    "CacheConfig",
    "Config",
    "GuardConfig",
    "KeyConfig",
    "LearningConfig",
    "MemoryConfig",
    "PathMemoryConfig",
    "ProviderConfig",
    "ProviderModel",
    "RouteConfig",
    "TagTarget",
    "Target",
    "TelemetryConfig",
    "When",
    "find_config_file",
    "is_loopback",
    "load_config",
    "parse_config_text",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64)
    # Strings (full access) or KeyConfig objects: what each key may use, for whom, how much.
    api_keys: list[KeyConfig] = []
    # Without api_keys only requests addressed to a loopback name (or server.host) are served,
    # against DNS rebinding; add the names a local reverse proxy forwards here.
    allowed_hosts: list[str] = []
    # The config file is re-read when it changes (checked this often; 0 turns watching off).
    config_poll_seconds: float = Field(1.0, ge=0)
    # Browser apps on other origins that may call nerve (CORS); any other Origin is refused
    # on every state-changing or model-calling request. Applied at start-up.
    cors_origins: list[str] = []

    @field_validator("api_keys", mode="before")
    @classmethod
    def _key_objects(cls, v: Any) -> Any:
        if not isinstance(v, list):
            return v
        return [{"name": f"key-{i}", "key": k} if isinstance(k, str) else k
                for i, k in enumerate(v, 1)]  # fmt: skip

    @model_validator(mode="after")
    def _distinct_keys(self) -> ServerConfig:
        for attr in ("name", "key"):
            seen: set[str] = set()
            for i, entry in enumerate(self.api_keys):
                value = getattr(entry, attr)
                if value in seen:
                    what = f"name {value!r}" if attr == "name" else "key"
                    raise ValueError(f"api_keys[{i}]: the {what} is given twice")
                seen.add(value)
        return self


class StorageConfig(_Strict):
    url: str = "sqlite:///.nerve/nerve.db"


class RedisConfig(_Strict):
    """Shared gateway state (GW-19): rate limits, breakers, cooldowns and stats of all replicas."""

    url: str | None = None  # redis://[:password@]host:6379/0; None: each process keeps its own
    on_error: Literal["local", "closed"] = "local"  # Redis down: in-process twins, or 503s
    retry_seconds: float = Field(1.0, gt=0)  # while Redis is down, try it again this often
    key_prefix: str = "nerve:"
    timeout_seconds: float = Field(0.5, gt=0)  # per Redis command (and connect)


class RateConfig(_Strict):
    window_requests: int = Field(300, ge=1)
    window_seconds: float = Field(60, gt=0)
    burst: int = Field(50, ge=1)
    refill_per_second: float = Field(1, gt=0)
    max_concurrent: int = Field(30, ge=1)


class BreakerConfig(_Strict):
    failures: int = Field(3, ge=1)
    half_open_after_seconds: float = Field(60, gt=0)
    successes_to_close: int = Field(1, ge=1)


class LimitsConfig(_Strict):
    rate: RateConfig = RateConfig()
    breaker: BreakerConfig = BreakerConfig()
    max_body_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    max_classify_chars: int = Field(140_000, ge=1)
    # Slow and greedy clients (nerve.serving): a request's headers must be complete, and its
    # body read, within these; one address may hold at most this many open connections.
    header_timeout_seconds: float = Field(10, gt=0)
    body_timeout_seconds: float = Field(30, gt=0)
    max_connections_per_client: int = Field(64, ge=1)
    # A stream whose upstream is silent this long gets a keep-alive (an SSE comment, or an
    # Anthropic `ping`): agent CLIs show a stall after ~20 s and give up after a few minutes.
    stream_keepalive_seconds: float = Field(10, gt=0)


class Price(_Strict):
    """USD per million tokens."""

    input: float = Field(0, ge=0)
    output: float = Field(0, ge=0)


class ProbesConfig(_Strict):
    interval_seconds: float = Field(60, ge=0)


DEFAULT_PROVIDERS: list[dict[str, Any]] = [
    {"name": "openai", "preset": "openai"},
    {"name": "anthropic", "preset": "anthropic"},
]
DEFAULT_ROUTES: list[dict[str, Any]] = [
    {
        "name": "default",
        "model": {"provider": "openai", "model": "gpt-4o-mini"},
        "fallbacks": [{"provider": "anthropic", "model": "claude-haiku-4-5"}],
    },
]


class Config(_Strict):
    server: ServerConfig = ServerConfig()
    storage: StorageConfig = StorageConfig()
    redis: RedisConfig = RedisConfig()
    providers: list[ProviderConfig] = Field(default_factory=list)
    routes: list[RouteConfig] = Field(default_factory=list)
    prices: dict[str, Price] = {}
    limits: LimitsConfig = LimitsConfig()
    probes: ProbesConfig = ProbesConfig()
    safety: SafetyConfig = SafetyConfig()
    intent: IntentConfig = IntentConfig()
    pipeline: PipelineConfig = PipelineConfig()
    agents: AgentsConfig = AgentsConfig()
    assistant: AssistantConfig = AssistantConfig()
    memory: MemoryConfig = MemoryConfig()
    learning: LearningConfig = LearningConfig()
    admin: AdminConfig = AdminConfig()
    voice: VoiceConfig = VoiceConfig()
    telemetry: TelemetryConfig = TelemetryConfig()
    # Model names clients send on their own (Claude Code's `claude-*`, Codex's `gpt-5-codex`):
    # glob -> a route name or provider/model, tried in order for a name that is not one already.
    model_aliases: dict[str, str] = {}

    @model_validator(mode="after")
    def _cross_check(self) -> Config:
        names = [p.name for p in self.providers]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise Located(f"providers[{i}].name", f"duplicate provider {name!r}")
        route_names = [r.name for r in self.routes]
        for i, route in enumerate(self.routes):
            if route_names.index(route.name) != i:
                raise Located(f"routes[{i}].name", f"duplicate route {route.name!r}")
        expand_routes(self.providers, self.routes)  # tags -> models; private -> local only
        if self.routes and "default" not in route_names:
            raise Located("routes", "a route named 'default' is required to catch the rest")
        if self.memory.wal.enabled and not self.storage.url.startswith("sqlite:"):
            raise Located(
                "memory.wal.enabled",
                "the file WAL is for SQLite only: with PostgreSQL a write is acknowledged once "
                "committed there, and must not wait on one replica's local disk",
            )
        for glob, alias in self.model_aliases.items():
            provider, _, model = alias.partition("/")
            if alias not in route_names and not (model and provider in names):
                raise Located(
                    f"model_aliases.{glob}",
                    f"{alias!r} is neither a route ({', '.join(route_names)}) "
                    "nor provider/model with a configured provider",
                )
        for path, ref in (
            ("intent.llm_route", self.intent.llm_route),
            ("safety.llm_judge", self.safety.llm_judge),
            ("pipeline.answer_model", self.pipeline.answer_model),
        ):
            provider, _, model = (ref or "").partition("/")
            known = ref in (None, "auto") or ref in route_names
            if not known and not (model and provider in names):
                raise Located(
                    path,
                    f"{ref!r} is neither 'auto', a route ({', '.join(route_names)}) "
                    "nor provider/model with a configured provider",
                )
        return self

    def provider(self, name: str) -> ProviderConfig:
        return next(p for p in self.providers if p.name == name)


def parse_config(data: Any, environ: Mapping[str, str] | None = None) -> Config:
    """Validate a parsed YAML document. Raises ConfigError naming every bad key (`.problems`;
    `.path` is the first one's)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the config must be a mapping of sections", path="<root>")
    if not data.get("providers") and not data.get("routes"):
        data = {**data, "providers": DEFAULT_PROVIDERS, "routes": DEFAULT_ROUTES}
    env = os.environ if environ is None else environ
    unset: list[tuple[str, str]] = []
    data = decrypt_tree(interpolate(expand_presets(data), env, unset), env)
    try:
        config = Config.model_validate(data)
    except ValidationError as e:
        found = problems(e.errors(), Config)
        if len(found) == 1:
            raise ConfigError(found[0][1], path=found[0][0], problems=found) from None
        error = ConfigError(summary(found), problems=found)
        error.path = found[0][0]
        raise error from None
    for path, var in unset:  # a key asked for in an unset variable: say which one
        index, _, key = path.removeprefix("providers[").partition("].")
        if key == "api_key" and index.isdigit() and int(index) < len(config.providers):
            config.providers[int(index)]._key_env = var
    return config


def find_config_file(path: str | None, environ: Mapping[str, str]) -> Path | None:
    if path:
        return Path(path)
    if environ.get("NERVE_CONFIG"):
        return Path(environ["NERVE_CONFIG"])
    local = Path("nerve.yaml")
    return local if local.exists() else None


def load_config(path: str | None = None, environ: Mapping[str, str] | None = None) -> Config:
    env = os.environ if environ is None else environ
    file = find_config_file(path, env)
    if file is None:
        return parse_config({}, env)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config file {file}: {e.strerror}") from None
    return parse_config_text(text, env, source=str(file))


def parse_config_text(
    text: str, environ: Mapping[str, str] | None = None, *, source: str = "the config"
) -> Config:
    """Validate a config file's text (what `load_config` reads, and what a reload receives)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"{source} is not valid YAML{where}: {getattr(e, 'problem', e)}"
        ) from None
    return parse_config(data, environ)


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
