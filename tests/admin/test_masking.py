"""Secrets out of config text and back (the admin config editor), and in-place key edits."""

from __future__ import annotations

import pytest
import yaml

from nerve.admin.keystore import masked, set_key_text
from nerve.admin.masking import find_secrets, mask, unmask
from nerve.errors import NotFound, RequestError

CONFIG = """\
# comment kept
server:
  api_keys: [client-key-1, "client-key-2"]
providers:
  - name: a   # first
    base_url: http://x
    api_key: sk-literal-1
  - {name: b, base_url: "http://y", api_key: 'enc:gAAAAAB-cipher'}
  - name: c
    base_url: http://z
    api_key: ${OPENAI_API_KEY}
    headers:
      Authorization: |
        Bearer abcdefgh
      X-Trace: ${TRACE_TOKEN}
  - name: d
    base_url: http://u
    api_key: ${KEY:-sk-in-a-default}
    clientSecret: s3cr3t-value
    max_tokens: 7
storage: {url: "postgresql://me:pa55word@db/nerve"}
"""
SECRET_VALUES = ["client-key-1", "client-key-2", "sk-literal-1", "enc:gAAAAAB-cipher",
                 "Bearer abcdefgh", "sk-in-a-default", "s3cr3t-value", "pa55word"]  # fmt: skip


def test_every_secret_value_is_masked_and_names_its_path() -> None:
    shown = mask(CONFIG)
    for value in SECRET_VALUES:
        assert value not in shown
    for path in ("server.api_keys[0]", "providers[0].api_key", "providers[1].api_key",
                 "providers[2].headers.Authorization", "providers[3].api_key",
                 "providers[3].clientSecret", "storage.url"):  # fmt: skip
        assert f'"<masked: {path}>"' in shown
    yaml.safe_load(shown)  # still valid YAML


def test_references_comments_and_plain_settings_stay_visible() -> None:
    shown = mask(CONFIG)
    for visible in ("# comment kept", "# first", "${OPENAI_API_KEY}", "${TRACE_TOKEN}",
                    "max_tokens: 7", "base_url: http://x"):  # fmt: skip
        assert visible in shown


def test_unmasking_an_unchanged_text_gives_the_file_back_byte_for_byte() -> None:
    assert unmask(mask(CONFIG), CONFIG) == CONFIG


def test_placeholders_follow_edits_and_moves() -> None:
    edited = mask(CONFIG).replace("base_url: http://x", "base_url: http://x2")
    restored = unmask(edited, CONFIG)
    assert restored == CONFIG.replace("base_url: http://x", "base_url: http://x2")
    single_quoted = mask(CONFIG).replace('"<masked: storage.url>"', "'<masked: storage.url>'")
    assert unmask(single_quoted, CONFIG) == CONFIG


def test_a_placeholder_for_an_unknown_path_is_refused() -> None:
    with pytest.raises(RequestError, match=r"providers\[9\]"):
        unmask('api_key: "<masked: providers[9].api_key>"', CONFIG)


def test_find_secrets_lists_values_before_interpolation() -> None:
    assert [s.value.strip() for s in find_secrets(CONFIG)] == [
        "client-key-1", "client-key-2", "sk-literal-1", "enc:gAAAAAB-cipher",
        "Bearer abcdefgh", "${KEY:-sk-in-a-default}", "s3cr3t-value",
        "postgresql://me:pa55word@db/nerve",
    ]  # fmt: skip


@pytest.mark.parametrize("provider", ["a", "b", "c", "d"])
def test_a_key_is_set_in_place_keeping_everything_else(provider: str) -> None:
    new = set_key_text(CONFIG, provider, "enc:NEW")
    rows = {r["name"]: r for r in yaml.safe_load(new)["providers"]}
    assert rows[provider]["api_key"] == "enc:NEW"
    assert "# comment kept" in new and "# first" in new
    others = {n: r for n, r in rows.items() if n != provider}
    before = {r["name"]: r for r in yaml.safe_load(CONFIG)["providers"] if r["name"] != provider}
    assert others == before


def test_a_key_line_is_added_when_the_provider_has_none() -> None:
    text = "providers:\n  - name: local   # no key\n    base_url: http://l\nroutes: []\n"
    new = set_key_text(text, "local", "enc:K")
    assert new == (
        'providers:\n  - name: local   # no key\n    api_key: "enc:K"\n'
        "    base_url: http://l\nroutes: []\n"
    )
    flow = set_key_text("providers: [{name: f, base_url: 'http://f'}]\n", "f", "enc:K")
    assert yaml.safe_load(flow)["providers"][0] == {"name": "f", "base_url": "http://f",
                                                    "api_key": "enc:K"}  # fmt: skip


def test_a_provider_missing_from_the_file_cannot_get_a_key() -> None:
    with pytest.raises(NotFound):
        set_key_text("routes: []\n", "openai", "enc:K")


def test_masked_shows_at_most_the_last_four_characters() -> None:
    assert masked("sk-abcdefghijkl") == "…ijkl"
    assert masked("short") == "set (too short to show any of it)"
    assert masked(None) == masked("") == "not set"
