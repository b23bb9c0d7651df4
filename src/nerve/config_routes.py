"""Routes and what they point at: targets, tag selections, `when` (SPEC GW-5, TP-3).

A route's `model` and each of its `fallbacks` is a target spec: `{provider, model}` names one
model; `{tags: [large, coding]}` selects every model a provider lists (`providers[].models`)
that carries all those tags, lower `priority` first, equal priorities taking turns (round-robin,
nerve.gateway.router.targets). `Config` expands the specs once at load (`expand_routes`): a
route's `tiers` are its concrete `Target`s grouped into turns, and `targets` is that list flat,
so everything keyed by `str(target)` (breakers, stats, learning, keys) never sees a tag.

`when` picks a route by what the message is (router/understand.py): its languages, or a task
(code, reasoning, multilingual, private). A private route may use only `local: true` providers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from nerve.config_sections import CacheConfig, GuardConfig, PathMemoryConfig
from nerve.language import LANGS

__all__ = [
    "PII_KINDS",
    "TASKS",
    "Located",
    "ProviderConfig",
    "ProviderModel",
    "RouteConfig",
    "TagTarget",
    "Target",
    "When",
    "expand_routes",
]

TASKS = ("reasoning", "code", "multilingual", "private")
PII_KINDS = ("email", "phone", "aadhaar", "pan", "card")
Task = Literal["reasoning", "code", "multilingual", "private"]
PiiKind = Literal["email", "phone", "aadhaar", "pan", "card"]
_TAG = r"^[A-Za-z0-9_.:-]+$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Located(ValueError):
    """A cross-field error that knows the key path it belongs to."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class ProviderModel(_Strict):
    """One model a provider lists, for tag targets: `{name: gpt-4o, tags: [large], priority: 1}`.
    Lower priority is served first; a higher number serves when the lower ones are skipped or
    fail, so priority is the fallback order within a tag selection."""

    name: str = Field(min_length=1)
    tags: list[Annotated[str, Field(pattern=_TAG)]] = []
    priority: int = Field(1, ge=0)


class ProviderConfig(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    preset: str | None = None
    protocol: Literal["openai", "anthropic"] = "openai"
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = {}
    timeout_seconds: float = Field(60.0, gt=0)
    connect_timeout_seconds: float = Field(5.0, gt=0)
    # Whether an openai-protocol upstream serves the Responses API (`POST {base_url}/responses`):
    # then /v1/responses passes through; otherwise it is translated to chat completions.
    responses: bool = False
    # Runs on the operator's own machines: the only kind a private route may use (SPEC TP-3).
    local: bool = False
    # The models it serves, for tag targets (`model: {tags: [large]}`); optional otherwise.
    models: list[ProviderModel] = []

    @field_validator("models")
    @classmethod
    def _distinct_models(cls, models: list[ProviderModel]) -> list[ProviderModel]:
        names = [m.name for m in models]
        for i, name in enumerate(names):
            if names.index(name) != i:
                raise ValueError(f"model {name!r} is listed twice")
        return models

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://[^/\s]+", v):
            raise ValueError(f"base_url must be an http(s) URL, got {v!r}")
        return v.rstrip("/")

    # The ${VAR} the api_key named when that variable was unset (config.parse_config sets it).
    _key_env: str | None = PrivateAttr(default=None)

    @property
    def missing_key(self) -> bool:
        """A key was asked for (e.g. ${OPENAI_API_KEY}) but is empty. No key at all is keyless."""
        return self.api_key is not None and not self.api_key.strip()

    @property
    def missing_key_why(self) -> str:
        """Why the key is empty, for the warnings: the variable to set, when one was named."""
        if self._key_env:
            return f"${self._key_env} is not set"
        return "api_key is empty"


class Target(_Strict):
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


class TagTarget(_Strict):
    """Every provider model carrying all of `tags`, expanded at config load."""

    tags: list[Annotated[str, Field(pattern=_TAG)]] = Field(min_length=1)

    def __str__(self) -> str:
        return f"tags:{'+'.join(self.tags)}"


def _spec_kind(value: Any) -> str:
    # Tags prefixed "model-" are dropped from error paths (config._path): routes[0].model.tags
    tagged = isinstance(value, TagTarget) or (isinstance(value, dict) and "tags" in value)
    return "model-tags" if tagged else "model-pair"


TargetSpec = Annotated[
    Annotated[Target, Tag("model-pair")] | Annotated[TagTarget, Tag("model-tags")],
    Discriminator(_spec_kind),
]


class When(_Strict):
    """What a message must be for the route to take it; both given: both must hold."""

    languages: list[str] = []  # any of them among the detected languages (LANGS codes)
    task: Task | None = None
    pii: list[PiiKind] | None = None  # task private: the PII kinds that make a message private

    @field_validator("languages")
    @classmethod
    def _known(cls, languages: list[str]) -> list[str]:
        for code in languages:
            if code not in LANGS:
                raise ValueError(
                    f"{code!r} is not a language nerve detects; use one of {', '.join(LANGS)}"
                )
        return languages

    @model_validator(mode="after")
    def _coherent(self) -> When:
        if not self.languages and self.task is None:
            raise ValueError("give languages, a task, or both")
        if self.pii is not None and self.task != "private":
            raise ValueError("pii applies to task: private only")
        if self.task == "private" and self.languages:
            # Privacy is a constraint, not a preference: it must not depend on a detector.
            raise ValueError(
                "a private route is chosen by the x-nerve-private header or its PII check, "
                "not by language; drop languages"
            )
        return self


class RouteConfig(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    rules: list[str] = []
    examples: list[str] = []
    when: When | None = None  # by language or task (SPEC TP-3)
    model: TargetSpec
    fallbacks: list[TargetSpec] = []
    guard: GuardConfig = GuardConfig()  # the tool calls its models return (SPEC TP-1)
    memory: PathMemoryConfig = PathMemoryConfig()  # recall and store for any client (TP-2)
    cache: CacheConfig | None = None  # the exact-match response cache; None: no cache
    _tiers: tuple[tuple[Target, ...], ...] | None = PrivateAttr(default=None)

    @field_validator("rules")
    @classmethod
    def _compile(cls, rules: list[str]) -> list[str]:
        for i, rule in enumerate(rules):
            try:
                re.compile(rule)
            except re.error as e:
                raise ValueError(f"rules[{i}] is not a valid regex ({e}): {rule!r}") from e
        return rules

    @property
    def private(self) -> bool:
        return self.when is not None and self.when.task == "private"

    @property
    def specs(self) -> list[Target | TagTarget]:
        return [self.model, *self.fallbacks]

    @property
    def tiers(self) -> tuple[tuple[Target, ...], ...]:
        """The concrete candidates in order, grouped into turns: a group's members are equal
        (one tag selection's models of one priority) and take turns being first."""
        if self._tiers is not None:
            return self._tiers
        if any(isinstance(s, TagTarget) for s in self.specs):
            raise ValueError(f"route {self.name!r}: tag targets are expanded by a Config")
        return tuple((s,) for s in self.specs if isinstance(s, Target))

    @property
    def targets(self) -> list[Target]:
        return [t for tier in self.tiers for t in tier]


def expand_routes(providers: Sequence[ProviderConfig], routes: Sequence[RouteConfig]) -> None:
    """Check every route's targets against the providers and fix its tiers (Located on error)."""
    by_name = {p.name: p for p in providers}
    for i, route in enumerate(routes):
        tiers: list[tuple[Target, ...]] = []
        seen: set[Target] = set()
        for j, spec in enumerate(route.specs):
            where = f"routes[{i}].model" if j == 0 else f"routes[{i}].fallbacks[{j - 1}]"
            chosen: list[tuple[Target, ...]]
            if isinstance(spec, Target):
                if spec.provider not in by_name:
                    raise Located(
                        f"{where}.provider",
                        f"unknown provider {spec.provider!r}; known: {', '.join(by_name)}",
                    )
                chosen, path = [(spec,)], f"{where}.provider"
            else:  # a model an earlier entry already has is not added twice by a tag
                chosen, path = _select(providers, spec, f"{where}.tags"), f"{where}.tags"
            if route.private:
                _all_local(route, chosen, by_name, path)
            for tier in chosen:
                fresh = (
                    tier if isinstance(spec, Target) else tuple(t for t in tier if t not in seen)
                )
                if fresh:
                    tiers.append(fresh)
                    seen.update(fresh)
        route._tiers = tuple(tiers)


def _select(
    providers: Sequence[ProviderConfig], spec: TagTarget, path: str
) -> list[tuple[Target, ...]]:
    """The models carrying all of `spec.tags`, grouped by priority (lowest first), each group
    in config order (providers, then their models)."""
    wanted = set(spec.tags)
    found = [(m.priority, Target(provider=p.name, model=m.name))
             for p in providers for m in p.models if wanted <= set(m.tags)]  # fmt: skip
    if not found:
        tagged = [f"{p.name}/{m.name} [{', '.join(m.tags)}]" for p in providers for m in p.models
                  if m.tags]  # fmt: skip
        raise Located(
            path,
            f"no provider model carries all of [{', '.join(spec.tags)}]; tagged models: "
            + (", ".join(tagged) or "none (list them under providers[].models)"),
        )
    found.sort(key=lambda pair: pair[0])  # stable: config order among equals
    groups: dict[int, list[Target]] = {}
    for priority, target in found:
        groups.setdefault(priority, []).append(target)
    return [tuple(group) for group in groups.values()]


def _all_local(
    route: RouteConfig, chosen: list[tuple[Target, ...]],
    by_name: dict[str, ProviderConfig], path: str,
) -> None:  # fmt: skip
    for tier in chosen:
        for target in tier:
            if not by_name[target.provider].local:
                raise Located(
                    path,
                    f"route {route.name!r} is private (when.task: private), so every model it "
                    f"uses must be on a provider with local: true; {target} is not",
                )
