"""Routing decision cost and quality (SPEC GW-3, GW-4, GW-16). Run: python bench/routing.py

Builds a Router over ten realistic routes (five rules and five examples each, default last) and
times `decide` on deterministic ~2 KB prompts, several thousand per layer outcome, each prompt
decided once (cold: no decision is cached). Prints median and p99 in µs per layer (median of
several runs), then the semantic layer's quality against its threshold on labelled paraphrases
that share no rule word, and on unrelated requests that should fall through to default; then
(`when_table`, SPEC GW-5/TP-3) the cost of `decide` with the `when` layers off, with six
language routes, and with those plus code/reasoning/multilingual and a private (PII) route, on
the same prompts plus romanized Indic asks. bench/routing_when.py measures their quality.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from nerve.config import RouteConfig, Target, When
from nerve.gateway.router import Router

Messages = list[dict[str, Any]]

SPECS: list[tuple[str, list[str], list[str]]] = [
    ("vision", [r"\b(image|photo|picture|screenshot|diagram|chart)s?\b", r"\bocr\b",
                r"\.(png|jpe?g|gif|webp)\b", r"\bwhat'?s in (this|the) (image|photo|picture)",
                r"\bdescribe (this|the) (image|photo)"],
     ["what is shown in this picture", "read the text in this screenshot",
      "describe the attached photo", "what breed is the dog in the image",
      "extract the numbers from this scanned receipt"]),
    ("sql", [r"\bselect\b.+\bfrom\b", r"\b(sql|postgres(ql)?|mysql|sqlite)\b",
             r"\binsert into\b|\bcreate table\b", r"\b(group|order) by\b", r"\bquery plan\b"],
     ["write a query that returns the top 10 customers by revenue",
      "how do I join the orders and users tables", "why is this query slow on a large table",
      "count rows per day in the events table", "add an index to speed up lookups by email"]),
    ("shell", [r"\b(bash|zsh|shell script|command line|terminal)\b",
               r"\b(grep|sed|awk|chmod|chown|xargs|crontab)\b", r"^\s*\$ ",
               r"\b(systemctl|journalctl)\b",
               r"\bhow do i (list|find|kill|copy|move) (files|processes)"],
     ["how do I find all files larger than 100MB", "kill the process listening on port 8080",
      "show which programs use the most memory", "rename all .txt files in a folder to .md",
      "show disk usage per directory sorted by size"]),
    ("translation", [r"\btranslat(e|ion|or)\b",
                     r"\b(in|into|to) (french|german|spanish|hindi|tamil|japanese|chinese)\b",
                     r"\bhow do you say\b", r"\bwhat does .{1,40} mean in\b",
                     r"\bin (plain )?english\b"],
     ["how would I say good morning in japanese", "put this sentence into spanish",
      "what is the german word for butterfly", "convert this paragraph from english to hindi",
      "render this menu in french for our guests"]),
    ("math", [r"\b(integral|derivative|differentiate|integrate)\b",
              r"\b(solve|simplify)\b.{0,40}\b(equation|for [a-z])\b",
              r"\b(prove|proof|theorem|lemma)\b", r"\d+\s*[\^*/]\s*\d+",
              r"\b(matrix|eigen\w*|probability)\b"],
     ["what is the area under the curve of x squared from 0 to 3",
      "find the roots of this quadratic", "how many ways can 5 people sit around a round table",
      "is the sum of two odd numbers always even",
      "calculate the expected value of rolling two dice"]),
    ("summarise", [r"\b(summari[sz]e|summary|tl;?dr)\b", r"\bkey (points|takeaways)\b",
                   r"\bin (one|two|three|a few) (sentences?|bullets?)\b", r"\bcondense\b",
                   r"\bgist\b"],
     ["give me the main points of this article", "shorten this report to a paragraph",
      "what are the highlights of this meeting transcript",
      "boil this email thread down to the decisions made",
      "make a brief overview of this chapter"]),
    ("code", [r"\b(debug|traceback|stack ?trace|exception|segfault)\b",
              r"\b(python|javascript|typescript|rust|golang|java|kotlin)\b", r"```",
              r"\b(refactor|unit tests?|compiler?|linter|regex)\b",
              r"\b(def|class|import|function|const|let)\s+\w+"],
     ["why does this function throw a KeyError when the dict is empty",
      "fix the bug in my script, it crashes on startup", "write a dockerfile for a flask app",
      "my build fails with undefined reference errors", "how do I mock an http call in my tests"]),
    ("writing", [r"\b(poem|haiku|sonnet|limerick|short story|essay|blog post)\b",
                 r"\bwrite (me )?(a|an) (story|letter|speech|toast)\b",
                 r"\b(rewrite|proofread|copy ?edit)\b", r"\b(tone|wording)\b", r"\bcover letter\b"],
     ["write a short poem about autumn leaves",
      "draft a friendly email inviting the team to a party",
      "help me make this paragraph sound more professional",
      "give me a catchy slogan for a coffee shop",
      "write a bedtime story about a dragon who is afraid of the dark"]),
    ("reasoning", [r"\b(analy[sz]e|compare|trade-?offs?|pros and cons)\b", r"\broot cause\b",
                   r"\b(strategy|architecture|design review)\b", r"\bstep by step\b",
                   r"\bwhy (does|do|is|are|did)\b"],
     ["compare the pros and cons of renting versus buying a house",
      "think through whether we should migrate to microservices",
      "what are the second order effects of raising interest rates",
      "evaluate this business plan and point out weak assumptions",
      "help me decide between two job offers"]),
    ("default", [], []),
]  # fmt: skip

# Requests phrased without any rule word: the semantic layer's job.
PARAPHRASES: dict[str, list[str]] = {
    "vision": ["what can you see in this pic", "tell me what this photograph shows",
               "can you read the handwriting in the attached scan",
               "what kind of bird is in this snapshot",
               "identify the objects visible in the attached file",
               "what does the sign in this shot say"],
    "sql": ["which customers spent the most last month, as a query",
            "the query on the orders table takes forever",
            "get the number of signups per week from the users table",
            "how do I combine rows from two tables on customer id",
            "delete duplicate rows in the table keeping the newest",
            "the index on email is not being used"],
    "shell": ["how can I see which process uses port 3000",
              "find every file modified in the last day",
              "free up disk space, what is using it", "move all jpg files into a new folder",
              "how do I make a script run every night at 2am",
              "show the last 100 lines of the log file and follow it"],
    "translation": ["how do the french say thank you very much", "give me this text in german",
                    "what is the spanish for library", "say 'where is the station' in japanese",
                    "render this letter into italian", "what is cheese in hindi"],
    "math": ["what are the roots of x^2 - 5x + 6", "find the area of a circle with radius 4",
             "how many ways to choose 3 cards from 52", "is 97 a prime number",
             "what is the expected number of coin flips to get two heads",
             "compute the sum of the first 100 odd numbers"],
    "summarise": ["give me the main points of the following text",
                  "shorten this article to a few lines", "what are the highlights of this call",
                  "boil the following down for a busy executive",
                  "make a brief overview of the report below",
                  "the short version of this thread please"],
    "code": ["my script crashes with a KeyError on startup", "the build fails with a linker error",
             "how do I mock a network call in my tests", "fix this bug where the loop never ends",
             "write a dockerfile for my node app", "why does my function return None"],
    "writing": ["compose a few verses about the ocean at night",
                "draft an email inviting my colleagues to a farewell lunch",
                "make this paragraph sound friendlier", "come up with a catchy slogan for a bakery",
                "a bedtime story about a brave little fox",
                "help me write a heartfelt birthday message for my sister"],
    "reasoning": ["should we migrate our monolith to microservices",
                  "help me decide between two apartments",
                  "evaluate the risks of this business plan",
                  "what are the consequences of raising prices by 10 percent",
                  "think through whether I should go back to school",
                  "weigh renting against buying in this market"],
}  # fmt: skip
UNRELATED = [
    "what's the weather like in paris tomorrow", "recommend a good restaurant near me",
    "who won the football match yesterday", "tell me a joke", "hello how are you",
    "what time is it in tokyo", "what should I cook for dinner tonight",
    "my cat keeps scratching the sofa", "best running shoes for flat feet",
    "how tall is mount everest", "when was the eiffel tower built", "good night", "thanks a lot",
    "I feel tired today", "who is the president of france", "recommend a movie for tonight",
    "how do I grow tomatoes on a balcony", "what are good gifts for a 5 year old",
    "is coffee bad for you",
]  # fmt: skip
RULE_ASKS = [  # requests that hit a rule, late routes included (their rules are tried last)
    "Here is the traceback I get, can you debug it?", "Why does this SQL query take so long?",
    "Please translate the following into French.", "Summarise the notes below in three bullets.",
    "Prove that this always holds for odd numbers.", "Rewrite this announcement in a warmer tone.",
    "Compare the two proposals below and list the trade-offs.", "What's in this image?",
    "Give me a bash one-liner that does the same.", "Analyse the root cause of this outage.",
]  # fmt: skip
FOLLOW_UPS = ["continue", "and now?", "more please", "ok do it", "go on", "keep going",
              "why?", "fix it", "same again please", "it still does not work"]  # fmt: skip

_WHO = [
    "the team",
    "our client",
    "the new manager",
    "my neighbour",
    "the committee",
    "a bakery",
    "the city council",
    "our cousin",
    "the vendor",
    "the board",
    "the landlord",
    "a visitor",
]
_DID = [
    "discussed",
    "announced",
    "postponed",
    "reviewed",
    "celebrated",
    "questioned",
    "approved",
    "described",
    "mentioned",
    "planned",
    "welcomed",
    "cancelled",
    "moved",
    "praised",
]
_WHAT = [
    "the spring festival",
    "a new parking policy",
    "the quarterly budget",
    "the garden",
    "a charity run",
    "the office move",
    "the holiday schedule",
    "a partnership with a school",
    "the recycling programme",
    "the annual picnic",
    "the new coffee machine",
    "opening hours",
    "the bicycle lanes",
    "a choir concert",
    "the library renovation",
    "the harbour walk",
]
_WHEN = [
    "after a long debate",
    "on tuesday morning",
    "despite the rain",
    "with some hesitation",
    "in front of everyone",
    "before the deadline",
    "for the third time",
    "over lunch",
    "without much enthusiasm",
    "at the town hall",
    "late in the evening",
    "at short notice",
]


def body(rng: random.Random, size: int) -> str:
    """Pasted material of about `size` chars: plain notes that contain no rule word."""
    sentences: list[str] = []
    length = 0
    while length < size:
        s = f"{rng.choice(_WHO)} {rng.choice(_DID)} {rng.choice(_WHAT)} {rng.choice(_WHEN)}."
        sentences.append(s[0].upper() + s[1:] + ("\n" if rng.random() < 0.15 else " "))
        length += len(sentences[-1])
    return "".join(sentences)[:size]


def prompt(rng: random.Random, ask: str, size: int = 2048) -> str:
    """A request stated before or after ~2 KB of pasted notes."""
    notes = body(rng, size - len(ask) - 2)
    return f"{ask}\n\n{notes}" if rng.random() < 0.5 else f"{notes}\n\n{ask}"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def conversations(rng: random.Random, n: int) -> dict[str, list[Messages]]:
    asks = [q for qs in PARAPHRASES.values() for q in qs]
    made: dict[str, list[Messages]] = {}
    made["rules"] = [[user(prompt(rng, rng.choice(RULE_ASKS)))] for _ in range(n)]
    made["semantic"] = [[user(prompt(rng, rng.choice(asks)))] for _ in range(n)]
    made["default"] = [[user(prompt(rng, rng.choice(UNRELATED)))] for _ in range(n)]
    made["context"] = []
    for _ in range(n):  # 1-4 earlier 2 KB requests, each answered, then a bare follow-up
        chat: Messages = []
        for _ in range(rng.randint(1, 4)):
            chat += [user(prompt(rng, rng.choice(RULE_ASKS + asks))),
                     {"role": "assistant", "content": "Sure, here it is."}]  # fmt: skip
        made["context"].append([*chat, user(rng.choice(FOLLOW_UPS))])
    made["oversize"] = [[user(body(rng, 150_000))] for _ in range(n // 10)]  # 150 KB each
    return made


def cost_table(router: Router, n: int, runs: int) -> None:
    """Times every decision and files it under the layer that made it."""
    made = conversations(random.Random(2026), n)
    chats = [chat for group in made.values() for chat in group]
    by_layer: dict[str, list[list[int]]] = {}
    clock = time.perf_counter_ns
    for run in range(runs):
        gc.collect()
        for chat in chats:
            start = clock()
            layer = router.decide(chat).layer
            elapsed = clock() - start
            by_layer.setdefault(layer, [[] for _ in range(runs)])[run].append(elapsed)
    print(f"decide() on ~2 KB prompts, {len(SPECS)} routes, median of {runs} runs, µs")
    print(f"{'layer':<10} {'decisions':>9} {'median':>8} {'p99':>8}")
    for layer in ("rules", "semantic", "context", "default", "oversize"):
        samples = by_layer.get(layer)
        if not samples:
            continue
        median = statistics.median(_quantile(ns, 0.5) for ns in samples)
        p99 = statistics.median(_quantile(ns, 0.99) for ns in samples)
        print(f"{layer:<10} {len(samples[0]):>9} {median:>8.1f} {p99:>8.1f}")


def _quantile(ns: list[int], q: float) -> float:
    ordered = sorted(ns)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def quality_table(routes: list[RouteConfig]) -> None:
    rng = random.Random(7)
    sets: dict[str, tuple[list[tuple[str, str]], list[str]]] = {
        "short": ([(r, q) for r, qs in PARAPHRASES.items() for q in qs], UNRELATED),
        "2 KB": (
            [(r, prompt(rng, q)) for r, qs in PARAPHRASES.items() for q in qs],
            [prompt(rng, q) for q in UNRELATED],
        ),
    }
    print("\nsemantic layer vs threshold: paraphrases with no rule word routed right / wrong,")
    print(f"and unrelated requests falling through to default ({len(UNRELATED)} of them)")
    print(f"{'threshold':>9} {'prompts':>7} {'right':>6} {'wrong':>6} {'unrelated->default':>19}")
    for threshold in (0.15, 0.18, 0.20, 0.22, 0.25, 0.30):
        router = Router(routes, threshold=threshold)
        for name, (labelled, unrelated) in sets.items():
            decided = [(want, router.decide([user(q)])) for want, q in labelled]
            right = sum(d.route == want for want, d in decided) / len(decided)
            wrong = sum(d.route not in (want, "default") for want, d in decided)
            falls = sum(router.decide([user(q)]).route == "default" for q in unrelated)
            print(f"{threshold:>9.2f} {name:>7} {right:>6.0%} {wrong:>6} {falls:>19}")


INDIC_ASKS = [  # everyday romanized requests, one per language and then some
    "mujhe kal ki meeting ka summary bhejo", "is report ko chhota karke bhejo",
    "naan inniki office ku late ah varuven", "indha file ah csv ah convert pannu",
    "nenu repu office ki vastanu", "ee file ni summary cheyyi",
    "naanu naale office ge baruttene", "ee report na chikkadagi maadi",
    "njan naale officil varum", "ee file onnu churukki tharumo",
    "ami kal office e jabo", "ei report ta chhoto kore dao",
]  # fmt: skip


def when_table(routes: list[RouteConfig], n: int, runs: int) -> None:
    """p50/p99 of decide over all prompts together, with the `when` layers off and on."""
    made = conversations(random.Random(2026), n)
    rng = random.Random(11)
    made["indic"] = [[user(prompt(rng, rng.choice(INDIC_ASKS)))] for _ in range(n)]
    long = [chat for name, group in made.items() if name != "oversize" for chat in group]
    asks = [*(q for qs in PARAPHRASES.values() for q in qs), *UNRELATED, *RULE_ASKS, *INDIC_ASKS]
    short = [[user(q)] for q in asks * (len(long) // len(asks))]
    model, *rest, default = routes
    langs = [RouteConfig(name=f"lang-{code}", when=When(languages=[code]), model=model.model)
             for code in ("hi", "ta", "te", "kn", "ml", "bn")]  # fmt: skip
    tasks = [RouteConfig(name=f"task-{t}", when=When.model_validate({"task": t}), model=model.model)
             for t in ("code", "reasoning", "multilingual")]  # fmt: skip
    private = RouteConfig(name="private", when=When(task="private"), model=model.model)
    setups = {
        "off": routes,
        "languages": [model, *rest, *langs, default],
        "all when": [private, model, *rest, *langs, *tasks, default],
    }
    print("\ndecide() with `when` off, with 6 language routes, and with those plus code,")
    print(f"reasoning, multilingual and private (PII) routes; {len(long)} ~2 KB prompts ({n} with")
    print(f"a romanized Indic ask) and {len(short)} short asks; median of {runs} runs, µs")
    print(f"{'setup':<10} {'prompts':>7} {'p50':>7} {'p99':>7}  layers that decided")
    clock = time.perf_counter_ns
    for name, setup in setups.items():
        router = Router(setup)
        for size, chats in (("2 KB", long), ("short", short)):
            p50s, p99s = [], []
            layers: dict[str, int] = {}
            for _ in range(runs):
                gc.collect()
                samples = []
                for chat in chats:
                    start = clock()
                    decision = router.decide(chat)
                    samples.append(clock() - start)
                    layers[decision.layer] = layers.get(decision.layer, 0) + 1
                p50s.append(_quantile(samples, 0.5))
                p99s.append(_quantile(samples, 0.99))
            total = sum(layers.values())
            shares = " ".join(f"{k} {v / total:.0%}" for k, v in sorted(layers.items()))
            p50, p99 = statistics.median(p50s), statistics.median(p99s)
            print(f"{name:<10} {size:>7} {p50:>7.1f} {p99:>7.1f}  {shares}")


def main(argv: Sequence[str] = sys.argv[1:]) -> None:
    parser = argparse.ArgumentParser(
        description="Routing decision cost (µs per layer) and semantic quality per threshold."
    )
    parser.add_argument("prompts", nargs="?", type=int, default=3000, help="prompts per layer")
    n = parser.parse_args(argv).prompts
    model = Target(provider="bench", model="m")
    routes = [RouteConfig(name=a, rules=r, examples=e, model=model) for a, r, e in SPECS]
    cost_table(Router(routes), n, runs=3)
    quality_table(routes)
    when_table(routes, n // 3, runs=3)


if __name__ == "__main__":
    main()
