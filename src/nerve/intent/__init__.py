"""Intent: what a request asks for, as `{intent, parameters, confidence, source}` (SPEC IN-1, IN-2).

nerve.intent owns turning one request (English, or romanized Indic mixed with English, ideally
already keyword-normalized by nerve.language) into one of INTENTS with its parameters; a text
that is no command (greetings, thanks, praise, small talk) is `chat`, decided before the seven
intents (chat.py, shape.py; SPEC RT-2). Its seam is
`IntentClassifier.classify`: an injected model first, deterministic rules as the fallback
(`classify_rules`, also usable alone). It never raises.

To teach the rules a word, add it to the lists in `lexicon.py` (a thing that can be deleted:
`objects.py`); to add an intent, add it to
INTENTS and ModelAnswer (model.py), give it cue words in `lexicon.py` and a weight in `rules.py`.
"""

from nerve.intent.llm import Complete, IntentClassifier
from nerve.intent.model import ACTIONS, INTENTS, Intent
from nerve.intent.rules import classify_rules

__all__ = ["ACTIONS", "INTENTS", "Complete", "Intent", "IntentClassifier", "classify_rules"]
