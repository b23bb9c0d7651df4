"""Language: which of seven languages a text uses, and its keywords in English (SPEC LG-1..LG-3).

nerve.language owns detection of English, Hindi, Tamil, Telugu, Kannada, Malayalam and Bengali,
in native script and romanized, and of their mixtures (code-switching), plus keyword
normalization. Its seam is two functions: `detect(text) -> LanguageResult` and
`normalize(text, languages)`. Everything runs offline from the word lists in `lexicons/`.

To add a word, add a line to `lexicons/<lang>.tsv` (format in `lexicon.py`). To add a language,
add its code to `LANGS` in `tokens.py`, its lexicon file and, for a native script, its block.
"""

from nerve.language.detect import LanguageResult, detect
from nerve.language.normalize import normalize
from nerve.language.tokens import LANGS

__all__ = ["LANGS", "LanguageResult", "detect", "normalize"]
