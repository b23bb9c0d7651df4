"""Secrets out of config text (the admin config editor), and back in on save.

`mask(text)` replaces every secret value of a YAML config, in the text itself so comments and
layout survive, with a placeholder naming its key path: `"<masked: providers[0].api_key>"`.
`unmask(edited, original)` puts the original source text back for each placeholder still present.

A value is secret when its key looks like one (api_key(s), password, secret, token,
authorization, credential(s), private_key, any header), when it is an `enc:` value, or when it
is a URL with a password in it. `${VAR}` references stay visible (they are names, not secrets)
unless they carry a literal default (`${KEY:-sk-...}`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from nerve.errors import RequestError

__all__ = ["Secret", "find_secrets", "mask", "redactor", "unmask"]

_SECRET_WORDS = {"password", "passwd", "secret", "token", "authorization", "credential",
                 "credentials", "apikey", "apikeys"}  # fmt: skip
_SECRET_PAIRS = {("api", "key"), ("api", "keys"), ("private", "key"), ("access", "key")}
_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-([^}]*))?\}")
_URL_PASSWORD = re.compile(r"://[^/@\s:]*:[^/@\s]+@")
_PLACEHOLDER = re.compile(r"""(?P<q>["']?)<masked: (?P<path>[^>\n]*)>(?P=q)""")
_STR = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class Secret:
    path: str
    start: int
    end: int  # the span of the value's source text (quotes, block indicators included)
    value: str  # the parsed value (before ${VAR} interpolation and decryption)


def _secret_key(name: str) -> bool:
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()  # apiKey → api_key
    words = re.split(r"[^a-z0-9]+", snake)
    pairs = set(itertools.pairwise(words))
    return bool(_SECRET_WORDS.intersection(words) or _SECRET_PAIRS & pairs)


def _is_secret(value: str, secret_key: bool) -> bool:
    if value.startswith("enc:") or _URL_PASSWORD.search(value):
        return True
    if not secret_key or not value:
        return False
    refs = list(_REF.finditer(value))
    if not refs or any(m.group(1) for m in refs):
        return True
    rest = _REF.sub("", value).strip().lower()
    return rest not in ("", "bearer", "basic", "token")


def _walk(node: Node, path: str, secret: bool) -> Iterator[tuple[str, ScalarNode]]:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            name = str(key.value) if isinstance(key, ScalarNode) else "?"
            child = f"{path}.{name}" if path else name
            yield from _walk(value, child, secret or _secret_key(name) or name == "headers")
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            yield from _walk(item, f"{path}[{i}]", secret)
    elif isinstance(node, ScalarNode) and node.tag == _STR and _is_secret(node.value, secret):
        yield path, node


def find_secrets(text: str) -> list[Secret]:
    """Secret values of a YAML document, in text order. Raises yaml.YAMLError."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is None:
        return []
    found: dict[int, Secret] = {}  # by start: an aliased value is listed once
    seen: set[str] = set()
    for path, node in _walk(root, "", False):
        start, end = node.start_mark.index, node.end_mark.index
        if start in found:
            continue
        label, n = path.replace(">", "?") or "<root>", 2
        while label in seen:
            label, n = f"{path}#{n}", n + 1
        seen.add(label)
        found[start] = Secret(label, start, end, node.value)
    return sorted(found.values(), key=lambda s: s.start)


def _core(text: str, secret: Secret) -> str:
    """The span without trailing line breaks (a block scalar's span ends past its last line)."""
    return text[secret.start : secret.end].rstrip("\n")


def mask(text: str) -> str:
    out, last = [], 0
    for secret in find_secrets(text):
        core = _core(text, secret)
        out += [text[last : secret.start], f'"<masked: {secret.path}>"']
        last = secret.start + len(core)
    return "".join([*out, text[last:]])


def unmask(edited: str, original: str) -> str:
    """Put the original text back for every placeholder; a placeholder for a key path that the
    original does not have is an error (it would otherwise be saved as the literal value)."""
    originals = {s.path: _core(original, s) for s in find_secrets(original)}

    def restore(match: re.Match[str]) -> str:
        path = match.group("path")
        if path not in originals:
            raise RequestError(
                f"the placeholder <masked: {path}> names no secret of the current config; "
                "type the value (or a ${VAR} reference) instead",
                param="text",
                code="unknown_placeholder",
            )
        return originals[path]

    return _PLACEHOLDER.sub(restore, edited)


def redactor(values: list[str]) -> re.Pattern[str] | None:
    """A pattern matching any of the secret values (8+ chars), to scrub them from free text."""
    longest_first = sorted({v for v in values if len(v) >= 8}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, longest_first))) if longest_first else None
