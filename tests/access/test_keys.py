"""Making managed keys (SPEC KY-2): a random key shown once, a policy validated as the config
file's keys are, a clear error naming the field otherwise; the `USD/PERIOD` budget syntax."""

from __future__ import annotations

import re

import pytest

from nerve.access.keys import key_views, new_key, parse_budget
from nerve.access.principal import Budget, digest
from nerve.config_sections import KeyConfig
from nerve.errors import RequestError


def test_a_new_key_is_random_and_known_afterwards_only_by_its_hash_and_last_4() -> None:
    secret, record = new_key({"name": "ci", "users": "ci-bot, qa"}, now=5.0)
    again, _ = new_key({"name": "ci"})
    assert re.fullmatch(r"nrv-[A-Za-z0-9_-]{43}", secret) and secret != again
    assert record.digest == digest(secret.encode()) and record.created_at == 5.0
    p = record.principal
    assert (p.name, p.client, p.hint, p.managed) == ("ci", "key:ci", secret[-4:], True)
    assert p.users == ("ci-bot", "qa") and p.routes is None and p.budget is None
    assert secret not in str(record.view()) and record.view()["key"] == f"…{secret[-4:]}"


@pytest.mark.parametrize(
    ("text", "budget"),
    [("20/month", Budget(20.0, "month")), ("$0.5/day", Budget(0.5, "day")),
     (" 100/week ", Budget(100.0, "week")), ("7/total", Budget(7.0, "total"))],
)  # fmt: skip
def test_a_budget_is_usd_per_period(text: str, budget: Budget) -> None:
    assert parse_budget(text) == budget


@pytest.mark.parametrize("text", ["20", "20/year", "month", "/month", "0/day", "-5/day",
                                  "nan/day", "inf/day", "twenty/month", "20/month/x"])  # fmt: skip
def test_a_budget_in_another_form_is_refused_with_the_form_to_use(text: str) -> None:
    with pytest.raises(ValueError, match=r"write USD/PERIOD, e\.g\. 20/month .*day, week"):
        parse_budget(text)


@pytest.mark.parametrize(
    ("fields", "named"),
    [({}, "name: Field required"),
     ({"name": "has space"}, "name: 1 to 64 letters, digits"),
     ({"name": "x" * 65}, "name: 1 to 64"),
     ({"name": "ci", "rpm": 0}, "rpm: Input should be greater than or equal to 1"),
     ({"name": "ci", "budget": "20/year"}, "budget '20/year': write USD/PERIOD"),
     ({"name": "ci", "budget": {"usd": 0}}, "budget.usd: Input should be greater than 0"),
     ({"name": "ci", "colour": "red"}, "colour: unknown field (known: name, routes"),
     ({"name": "ci", "key": "sk-mine-12345"}, "key: keys are generated, not given")],
)  # fmt: skip
def test_a_bad_field_is_a_request_error_naming_it(fields: dict[str, object], named: str) -> None:
    with pytest.raises(RequestError) as bad:
        new_key(fields)
    assert named in bad.value.message and bad.value.status == 400


def test_a_config_file_key_name_is_taken() -> None:
    with pytest.raises(RequestError, match="'ci' is in the config file") as taken:
        new_key({"name": "ci"}, taken={"ci"})
    assert taken.value.code == "key_exists"


def test_views_show_config_keys_then_managed_ones_and_never_a_key() -> None:
    config = [KeyConfig(name="ops", key="sk-config-key-9876", rpm=10)]
    secret, record = new_key({"name": "ci"}, now=3.0)
    views = key_views(config, [record])
    assert [(v["name"], v["key"], v["managed"], v["created_at"]) for v in views] == [
        ("ops", "…9876", False, None), ("ci", f"…{secret[-4:]}", True, 3.0)
    ]  # fmt: skip
    assert views[0]["rpm"] == 10 and "sk-config-key-9876" not in str(views)
    assert secret not in str(views)
