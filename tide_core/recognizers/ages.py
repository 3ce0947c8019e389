"""Ages written beside a name, as news reports and court narratives write them (``tide.ages``).

Press and court prose give a person's age in apposition, with no age word at all: "Jane Doe, 47,
of Leeds, was named ...", "the driver, Tom Ryan, 19, was killed", "Anna Kovács (63) told the
court". The regex layer knows ages after age words ("aged 47", "a 47-year-old", "47 yo"); this
recognizer labels AGE a number of 0–125 that stands

- between commas right after a capitalised word (any script: "Παπαδόπουλος, 52, ...") and before
  a lower-case word ("of", "was", "from", "who", "and" ...), or
- in parentheses after a name whose first word is a known given name ("Anna Kovács (63)"), followed
  by a space or punctuation (so lab values in parentheses, "Blood Glucose (95)", stay unmarked).

The word before must not be a month, a weekday, a statute, page or list word ("Article 8, 12, ...",
"March, 12, ...", "Table (3)"), so references and enumerations stay unmarked, and the number must
not be part of a larger number ("12,000", "(12.5)").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.given_names import more_given_sha256, recognition_given_names
from tide_core.spans import RecognizerResult

#: ", 47, was" / " (47)" right after a letter.
_APPOSITION = re.compile(
    r"(?<=[^\W\d_])(?:,[ \n](?P<comma>1[0-2]\d|[1-9]?\d),[ ]*\n?[ ]*(?=[^\W\d_])"
    r"|[ ]\((?P<paren>1[0-2]\d|[1-9]?\d)\)(?=[\s,.;:]|$))"
)
#: The capitalised word before the number (letters of any script, apostrophes and hyphens inside).
_WORD = r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*"
_WORD_BEFORE = re.compile(rf"(?<![\w'’-])(?P<word>{_WORD})$")
#: Two words before the number: a given name and a surname ("Anna Kovács").
_NAME_BEFORE = re.compile(rf"(?<![\w'’-])(?P<given>{_WORD})[ ](?P<word>{_WORD})$")
#: Words after which a number is a date, a reference or an item, not an age.
_NOT_A_PERSON = frozenset(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    monday tuesday wednesday thursday friday saturday sunday
    article articles art section sections paragraph paragraphs para rule rules regulation directive law act
    protocol convention schedule annex appendix chapter part page pages table figure fig note notes item items
    exhibit volume vol issue number no nos nr step stage phase grade level type version room ward bed floor
    flat unit lot plot box line route bus gate seat platform question questions count counts point points
    score scores year years total round question group class series
    """.split()
)


def _person_word(text: str, at: int) -> bool:
    """Whether the word ending at ``at`` is capitalised and could end a person's name."""
    m = _WORD_BEFORE.search(text, max(0, at - 60), at)
    if m is None:
        return False
    word = m.group("word")
    return word[0].isupper() and word.lower() not in _NOT_A_PERSON and len(word) > 1


def _full_name(text: str, at: int) -> bool:
    """Whether the two words ending at ``at`` are a known given name and a capitalised word."""
    m = _NAME_BEFORE.search(text, max(0, at - 80), at)
    if m is None or not _person_word(text, at):
        return False
    given = m.group("given")
    return given[0].isupper() and given.casefold() in recognition_given_names()


class ApposedAgeRecognizer(TideRecognizer):
    """Ages in apposition to a name ("Jane Doe, 47, of Leeds"; "Anna Kovács (63)") (label AGE)."""

    name = "tide.ages"
    version = "1"
    supported_entities = ("AGE",)

    def __init__(self, score: float = 0.8):
        self.score = float(score)

    def config(self) -> dict[str, Any]:
        """Output-affecting settings: the score of every span and the given-name list it reads."""
        return {"score": self.score, "given_names": more_given_sha256()}

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        """AGE spans for every number in apposition to a capitalised word."""
        if entities and "AGE" not in entities:
            return []
        out: list[RecognizerResult] = []
        for m in _APPOSITION.finditer(text):
            group = "comma" if m.group("comma") is not None else "paren"
            if group == "comma" and not text[m.end()].islower():
                continue  # "Leeds, 12, Manchester": a list, not an age before "of", "was", "who" ...
            if not (_person_word(text, m.start()) if group == "comma" else _full_name(text, m.start())):
                continue
            out.append(
                RecognizerResult(
                    "AGE", m.start(group), m.end(group), self.score, {"recognizer_name": self.qualified_name}
                )
            )
        return out
