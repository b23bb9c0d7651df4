"""The routing cascade: rules -> semantic -> context -> default (SPEC GW-3, GW-4, GW-16)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nerve.config import RouteConfig, Target
from nerve.gateway.router import Decision, Router
from nerve.gateway.router.rules import RuleSet

MODEL = Target(provider="p", model="m")

CODE = RouteConfig(
    name="code",
    rules=[r"\b(debug|traceback|stack ?trace|exception)\b", r"\b(python|rust|golang)\b"],
    examples=[
        "why does this function throw a KeyError when the dict is empty",
        "fix the bug in my script, it crashes on startup",
        "write a dockerfile for a flask app",
        "how do I mock an http call in my tests",
    ],
    model=MODEL,
)
WRITING = RouteConfig(
    name="writing",
    rules=[r"\b(poem|haiku|sonnet|essay)\b"],
    examples=[
        "draft a friendly email inviting the team to a party",
        "give me a catchy slogan for a coffee shop",
        "write a bedtime story about a dragon who is afraid of the dark",
    ],
    model=MODEL,
)
SQL = RouteConfig(
    name="sql",
    rules=[r"\b(sql|postgres|sqlite)\b", r"\bselect\b.+\bfrom\b"],
    examples=["write a query that returns the top 10 customers by revenue"],
    model=MODEL,
)
DEFAULT = RouteConfig(name="default", model=MODEL)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def decide(routes: list[RouteConfig], *messages: dict[str, Any], **kw: Any) -> Decision:
    return Router(routes, **kw).decide(list(messages))


NOTES = " ".join(
    f"The committee {verb} the spring festival on day {i}." for i, verb in enumerate(
        ["discussed", "postponed", "reviewed", "approved", "celebrated"] * 12
    )
)  # fmt: skip


def test_a_rule_hit_routes_to_its_route_with_full_score() -> None:
    """GW-3: a regex rule decides first; the detail names the pattern that matched."""
    d = decide([CODE, WRITING, DEFAULT], user("Can you DEBUG this for me?"))
    assert d == Decision("code", "rules", 1.0, d.detail)
    assert "debug|traceback" in d.detail


def test_the_first_route_in_list_order_wins_when_several_rules_match() -> None:
    """GW-3: first match wins, in the order the routes are listed."""
    text = user("a poem about a python traceback")
    assert decide([CODE, WRITING, DEFAULT], text).route == "code"
    assert decide([WRITING, CODE, DEFAULT], text).route == "writing"


def test_rules_are_compiled_once_when_the_router_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """GW-3: the router holds compiled, case-insensitive patterns; deciding compiles nothing."""
    router = Router([CODE, WRITING, DEFAULT])
    assert [r.pattern for r in router.rules.rules] == [*CODE.rules, *WRITING.rules]
    for rule in router.rules.rules:
        assert isinstance(rule.regex, re.Pattern)
        assert rule.regex.flags & re.IGNORECASE

    def no_compiling(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("re.compile called while deciding")

    monkeypatch.setattr(re, "compile", no_compiling)
    assert router.decide([user("a haiku, please")]).route == "writing"
    assert router.decide([user("nothing to see here")]).route == "default"


def test_a_paraphrase_with_no_rule_word_routes_by_its_nearest_example() -> None:
    """GW-3: the semantic layer matches what the rules miss; detail names the nearest example."""
    d = decide([CODE, WRITING, DEFAULT], user("my script keeps crashing right at startup"))
    assert (d.route, d.layer) == ("code", "semantic")
    assert 0.22 <= d.score <= 1.0
    assert "fix the bug in my script" in d.detail


def test_unrelated_text_falls_through_to_default() -> None:
    """GW-3: below the similarity threshold nothing matches and the default route answers."""
    for text in ["what's the weather like in paris tomorrow", "who won the match yesterday"]:
        d = decide([CODE, WRITING, SQL, DEFAULT], user(text))
        assert (d.route, d.layer, d.score) == ("default", "default", 0.0)


def test_a_long_message_is_judged_by_its_request_not_the_pasted_text() -> None:
    """GW-3: a request before or after 2 KB of pasted notes is still recognised."""
    ask = "fix the bug in my script, it crashes when it starts"
    for text in [f"{ask}\n\n{NOTES}", f"{NOTES}\n\n{ask}"]:
        assert len(text) > 2000
        d = decide([CODE, WRITING, DEFAULT], user(text))
        assert (d.route, d.layer) == ("code", "semantic")


def test_continue_after_a_debugging_message_stays_on_the_code_route() -> None:
    """GW-4: a bare follow-up is routed by the weighted history of user messages."""
    for follow_up in ["continue", "and now?", "more please", "ok do it", "it still doesn't work"]:
        d = decide(
            [CODE, WRITING, DEFAULT],
            user("debug this python traceback"),
            assistant("Sure, the error comes from line 3."),
            user(follow_up),
        )
        assert (d.route, d.layer) == ("code", "context"), follow_up
        assert "1 message(s) back" in d.detail


def test_an_old_keyword_does_not_override_a_clearly_different_latest_message() -> None:
    """GW-4: an informative latest message decides on its own, even against older keywords."""
    history = [user("debug this python traceback"), assistant("Done.")]
    latest = user("write a poem about the sea")
    assert decide([CODE, WRITING, DEFAULT], *history, latest).route == "writing"
    d = decide([CODE, DEFAULT], *history, latest)
    assert (d.route, d.layer) == ("default", "default")


def test_the_weighted_history_favours_the_most_recent_topic() -> None:
    """GW-4: weights fall off going back, so the latest routed topic leads."""
    d = decide(
        [CODE, WRITING, DEFAULT],
        user("debug this python traceback"),
        user("now a haiku about autumn"),
        user("continue"),
    )
    assert (d.route, d.layer) == ("writing", "context")


def test_a_follow_up_after_an_unroutable_topic_change_goes_to_default() -> None:
    """GW-4: the look back stops at a message about something no route covers."""
    d = decide(
        [CODE, DEFAULT],
        user("debug this python traceback"),
        user("tell me about the weather in paris"),
        user("more please"),
    )
    assert (d.route, d.layer) == ("default", "default")


def test_only_the_last_five_user_messages_count() -> None:
    """GW-4: a keyword six user messages back is out of the window."""
    follow_ups = [user("go on"), assistant("..."), user("ok"), user("more"), user("next")]
    old = decide([CODE, DEFAULT], user("debug this python traceback"), *follow_ups, user("again"))
    assert old.route == "default"
    recent = decide([CODE, DEFAULT], user("debug this python traceback"), *follow_ups)
    assert (recent.route, recent.layer) == ("code", "context")


def test_only_user_messages_are_classified() -> None:
    """GW-4: system and assistant text never routes a request."""
    d = decide(
        [CODE, DEFAULT],
        {"role": "system", "content": "You are a python expert who reads every traceback."},
        assistant("Here is a python traceback explained."),
        user("continue"),
    )
    assert d.route == "default"


def test_content_given_as_parts_is_classified_and_images_are_ignored() -> None:
    """GW-3: list content counts its text parts; image parts and None content are skipped."""
    parts = [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "what is wrong with this"},
        {"type": "text", "text": "python traceback?"},
    ]
    assert decide([CODE, DEFAULT], user(parts)).route == "code"
    images_only = [{"type": "image_url", "image_url": {"url": "https://x/python.png"}}]
    assert decide([CODE, DEFAULT], user(images_only)).route == "default"
    assert decide([CODE, DEFAULT], user(None)).route == "default"


def test_no_user_messages_go_to_default() -> None:
    """GW-3: with nothing to classify the default route answers."""
    assert decide([CODE, DEFAULT]) == Decision("default", "default", 0.0, "no user message")
    d = decide([CODE, DEFAULT], {"role": "system", "content": "debug python"})
    assert (d.route, d.layer) == ("default", "default")


def test_oversize_input_skips_classification_and_goes_to_default() -> None:
    """GW-16: user text over the limit is not classified at all, not even by the regexes."""
    router = Router([CODE, DEFAULT], max_classify_chars=1000)

    class Untouchable(RuleSet):
        def match(self, text: str) -> Any:
            raise AssertionError("rules ran over oversize input")

    router.rules = Untouchable([])
    d = router.decide([user("debug this python traceback " + "x" * 1000)])
    assert (d.route, d.layer, d.score) == ("default", "oversize", 0.0)
    # the limit is on the user messages considered: a huge system prompt does not count
    big_system = {"role": "system", "content": "x" * 5000}
    assert Router([CODE, DEFAULT], max_classify_chars=1000).decide(
        [big_system, user("debug it")]
    ) == Decision("code", "rules", 1.0, "rule /\\b(debug|traceback|stack ?trace|exception)\\b/")


def test_a_route_with_no_rules_or_examples_is_never_chosen_except_default() -> None:
    """GW-3: only `default` catches what nothing else matched."""
    bare = RouteConfig(name="bare", model=MODEL)
    routes = [bare, CODE, DEFAULT]
    texts = ["", "continue", "hello", "debug this python", "my script crashes", "bare bare"]
    for text in texts:
        assert decide(routes, user(text)).route != "bare"
    assert decide(routes, user("debug this python")).route == "code"


PATTERNS = [
    r"\b(image|photo|picture)s?\b",
    r"\bwhat'?s in (this|the) (image|photo)",
    r"\btranslat(e|ion|or)\b",
    r"\bhow do i (list|find) (files|processes)",
    r"\b(def|class)\s+\w+",
    r"\b(summari[sz]e|tl;?dr)\b",
    r"\.(png|jpe?g)\b",
    r"\bselect\b.+\bfrom\b",
    r"(?-i:SQL)",
    r"\b(foo\w+|bar)\b",
    r"x(?:hello)?world",
    r"\bstreet\b",
    r"\bİstanbul\b",
    r"\b(ab|cd){1,2}\b",
    r"\d+\s*[*/]\s*\d+",
]
TEXTS = [
    "What's in the IMAGE?",
    "whats in this photo",
    "Translation please",
    "translated it",
    "How do I list processesX",
    "class   Foo:",
    "classy",
    "TL;DR",
    "tldr of this",
    "cat.JPEG here",
    "SELECT a\nFROM b",
    "select a from b",
    "sql",
    "SQL",
    "foobar and foot",
    "XWORLD",
    "xhelloworld",
    "STREET",
    "ſtreet",  # long s: IGNORECASE matches it to s
    "İSTANBUL",
    "istanbul",
    "abcd cdab ab",
    "12 / 4",
    "nothing at all",
]


@pytest.mark.parametrize("text", TEXTS)
def test_needles_never_change_which_rule_matches(text: str) -> None:
    """GW-3: the literal prefilter only skips regexes that could not have matched."""
    rules = RuleSet([(f"r{i}", [p]) for i, p in enumerate(PATTERNS)])
    expected = next((p for p in PATTERNS if re.search(p, text, re.IGNORECASE)), None)
    found = rules.match(text)
    assert (found.pattern if found else None) == expected
    for i, pattern in enumerate(PATTERNS):  # and each rule on its own
        single = RuleSet([(f"r{i}", [pattern])]).match(text)
        assert (single is not None) == bool(re.search(pattern, text, re.IGNORECASE)), pattern


def test_a_config_with_only_a_catch_all_decides_default_without_reading_messages() -> None:
    """GW-3: nothing to match means no classification work at all."""
    router = Router(
        [RouteConfig.model_validate({"name": "default", "model": {"provider": "p", "model": "m"}})]
    )
    decision = router.decide([{"role": "user", "content": "python traceback " * 10}])
    assert (decision.route, decision.layer) == ("default", "default")
