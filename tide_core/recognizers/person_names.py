"""People named by a known given name (``tide.names``): "Hana Yamamoto", "GUERRERO, ABIGAIL".

Names in portal messages, letters and social histories often come with no title, role word
or field label ("Hi, this is Dmitri Volkov", "her friend Elodie Moreau called").  This
recognizer labels PATIENT a run of two or three capitalised words whose first word is a known
given name (the 8,672 given names of ``tide_core/data/surrogates/first_names.txt``, Faker's
lists over 16 locales) and whose last word is a known surname or a word rare in English, and
the inverted form "Surname, Given".  Titles mark clinicians elsewhere (the regex layer's
"Dr." patterns win ties as DOCTOR); this recognizer is the title-free fallback.

A run is not a name when a word is an everyday English word (Zipf frequency >= 4.5 by
``wordfreq``: "Will Power", "May Day" are left to the model), a month or weekday, or a clinical
head word ("Grace Hospital" is a facility).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from tide_core.propagate import name_lexicon
from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.patterns import STATE_NAMES
from tide_core.spans import RecognizerResult
from tide_core.text.word_frequency import english_frequencies

#: A word this common in English is not taken as a surname on its own evidence.
COMMON_ZIPF = 4.5
_WORD = r"[A-Z][a-z'\u2019]+(?:-[A-Z][a-z'\u2019]+)?|[A-Z]['\u2019]?[A-Z]+(?:-[A-Z]+)?"
_RUN = re.compile(
    rf"(?<![\w.'\u2019-])(?P<a>{_WORD})(?: {{1,2}}(?P<mid>[A-Z]\.?|{_WORD}))? {{1,2}}(?P<b>{_WORD})"
    rf"(?![\w'\u2019-])"
)
_INVERTED = re.compile(
    rf"(?<![\w.'\u2019-])(?P<b>{_WORD}), {{0,2}}(?P<a>{_WORD})(?: {{1,2}}(?P<mid>[A-Z]\.?))?"
    rf"(?![\w'\u2019-])"
)
_ANY = r"[A-Za-z][a-z'\u2019]+(?:-[A-Za-z][a-z'\u2019]+)?|[A-Z]{2,}(?:-[A-Z]+)?"
#: Frames that make a single word a person's name in messages and letters: a chat speaker
#: ("[10 AM] Anneliese: ok", "2/7 0750 - Tamsin > ..."), a greeting ("Hello Summer,"), a sign-off
#: ("Best,\nTheodora", "-- Lorcan"), a labelled contact field ("Next of kin:\tNorbert").
_FRAMES = (
    re.compile(rf"(?m)(?:^|\]|[0-9] -|[0-9]\)|^[-\u2014>*]+)[ \t]*(?P<n>{_ANY})[ \t]*(?::(?!\d)|>(?!=))"),
    re.compile(
        rf"\b(?:Hi|Hello|Hey|Dear|Thanks|Thank you|Morning|Good morning|Good afternoon|Hiya|Yo|hi|hello|hey|"
        rf"dear|thanks)[ \t]+(?P<n>{_ANY})(?=[ \t]*[,!.:\n])"
    ),
    re.compile(
        rf"(?:\b(?:Best|Regards|Best regards|Kind regards|Sincerely|Thanks|Thank you|Cheers|Love|Warmly|"
        rf"Respectfully|Yours|XOXO|xo)[,!.]?[ \t]*\n+|(?m:^)[ \t]*(?:--|\u2014|-|~)[ \t]*)(?P<n>{_ANY})"
        rf"(?=[ \t]*(?:,|\(|\n|$))"
    ),
    # self-introductions: "I'm Seraphina, aged 82", "this is Dmitri", "my name is Ana"
    re.compile(rf"\b(?i:i'm|i\u2019m|i am|this is|my name is|my name's|it's)[ \t]+(?P<n>{_ANY})(?=[ \t]*[,.!;:\n(]|$)"),
    re.compile(
        rf"\b(?i:emergency contact|contact|next of kin|nok|caller|called by|spoke with|from|to|cc|name|"
        rf"sender|recipient|guardian|parent|spouse|agent|passenger|customer|rep|"
        rf"representative)[ \t]*(?:[:=\t]|--?|\u2014)[ \t]*(?P<n>{_ANY})(?=[ \t]*(?:[,;<(\n+\d]|$))"
    ),
    re.compile(rf"\b(?i:handled by|assigned to|answered by|taken by)[ \t]+(?P<n>{_ANY})(?=[ \t]*(?:[,;<(\n.]|$))"),
)
#: Frames from this index on are labelled fields: only known names count there.
_LEXICON_FRAMES_FROM = 4
_CRED = (
    r"(?:m\.?d\.?|d\.?o\.?|rn|np|pa-c|pa|cnp|aprn|crna|dnp|pharmd|phd|msw|lcsw|licsw|dpt|pt|ot|cnm|fnp|"
    r"mbbs|rt|lpn|cna|crnp|rd|rph|rrt|bsn|slp|ma|scribe)"
)
_ROLE = (
    r"(?:dr|doctor|lpn|cna|lcsw|licsw|msw|rn|np|sw|pt|ot|rd|slp|chaplain|nurse|pharmacist|therapist|"
    r"social\s+worker|case\s+manager|resident|attending|fellow|intern|hospitalist|surgeon|physician|provider|"
    r"midwife|dietitian|médico\s+tratante|medico\s+tratante|m[ée]decin|arzt|ärztin)"
)
_PERSON = r"[A-Za-z][a-z'\u2019]+(?:-[A-Za-z][a-z'\u2019]+)?|[A-Z]{2,}(?:-[A-Z]+)?|[A-Za-z]\."
#: Clinician frames in any casing: "Gintaras (MSW)", "tamsin falkenrath, md", "LPN I. Kaczmarek",
#: "dr giordano", "DR WOODHOUSE", "médico tratante\tdr. kwame j. wojcik".
_CLINICIAN_FRAMES = (
    re.compile(
        rf"(?<![\w.])(?P<n>(?:{_PERSON})(?:[ \t]+(?:{_PERSON})){{0,2}})(?:,[ \t]*|[ \t]*\([ \t]*)"
        rf"(?i:{_CRED})(?![\w-])"
    ),
    re.compile(
        rf"(?<![\w])(?i:{_ROLE})\.?[ \t:\-]+(?:(?i:dr)\.?[ \t]+)?(?P<n>(?:{_PERSON})(?:[ \t]+(?:{_PERSON})){{0,2}})"
    ),
)
_LOWER_WORD = re.compile(r"(?<![\w'\u2019-])[a-z][a-z'\u2019]+(?:-[a-z]+)?(?![\w'\u2019-])")
_NOT_NAME = frozenset(
    """january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday hospital clinic center centre medical health street road
avenue drive lane county school church university college department unit floor room bed disease syndrome""".split()
)


#: Words that fill the frames but are not names ("From: Pharmacy", "To: All", "Contact: none").
_FRAME_STOP = frozenset(
    """all none n/a na unknown self patient pt team staff clinic pharmacy office home work
mom dad mother father wife husband son daughter me you us them him her everyone anyone someone nobody admin support
billing scheduling nurse doctor dr provider front desk reception subject re fwd fw date time sent""".split()
)


#: Words after a role word that are not a name ("nurse notified", "RN to follow", "Dr. on call").
_CLINICIAN_STOP = frozenset(
    """notified aware called to at on in with and or the a an of for by was is will has had
note notes visit visited saw sees said says reports reported states stated following follow here there today
daily weekly recommends recommended agrees agreed team service consult consulted cleared""".split()
)


_zipf = english_frequencies


def _is_place(surface: str) -> bool:
    """A real place name ("Coral Gables", "Indiana"): left to the place recognizer."""
    from tide_core.recognizers.places import _fold, load_place_names

    return _fold(surface).lower() in load_place_names().tiers or surface.casefold() in _US_STATES


_US_STATES = frozenset(name.casefold() for name in STATE_NAMES)


def _rare(word: str) -> bool:
    """Rare in English (Zipf < 3): "Falkenrath" yes, "reviewed" no."""
    f = _zipf().get(word.casefold(), 0.0)
    return f == 0 or math.log10(f) + 9 < 3.0


def _common(word: str) -> bool:
    f = _zipf().get(word.casefold(), 0.0)
    return f > 0 and math.log10(f) + 9 >= COMMON_ZIPF


class PersonNameRecognizer(TideRecognizer):
    """Title-free person names by a known given name (label PATIENT)."""

    name = "tide.names"
    version = "1"
    supported_entities = ("PATIENT", "DOCTOR")

    def __init__(self, score: float = 0.6):
        self.score = float(score)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "common_zipf": COMMON_ZIPF}

    def load(self) -> None:
        name_lexicon()
        _zipf()

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and not {"PATIENT", "DOCTOR"} & set(entities):
            return []
        given, surnames, _ = name_lexicon()
        out: list[RecognizerResult] = []
        taken = -1
        matches = sorted([*_RUN.finditer(text), *_INVERTED.finditer(text)], key=lambda m: (m.start(), -m.end()))
        for m in matches:
            if m.start() < taken:
                continue
            a, b = m.group("a"), m.group("b")
            if not self._is_name(a, b, m.group("mid"), given, surnames, m.re is _INVERTED) or _is_place(m.group(0)):
                continue
            out.append(
                RecognizerResult("PATIENT", m.start(), m.end(), self.score, {"recognizer_name": self.qualified_name})
            )
            taken = m.end()
        covered = [(r.start, r.end) for r in out]
        # lower-case text (portal messages): "wendell cormier" when both words are known names
        words = list(_LOWER_WORD.finditer(text))
        for w1, w2 in zip(words, words[1:], strict=False):
            gap = text[w1.end() : w2.start()]
            if not gap or gap.strip(" \t"):
                continue
            a, b = w1.group(0), w2.group(0)
            if a in given and b in surnames and not _common(a) and not _common(b):
                if not any(x < w2.end() and w1.start() < y for x, y in covered):
                    covered.append((w1.start(), w2.end()))
                    out.append(
                        RecognizerResult(
                            "PATIENT", w1.start(), w2.end(), self.score, {"recognizer_name": self.qualified_name}
                        )
                    )
        for i, frame in enumerate(_FRAMES):
            for m in frame.finditer(text):
                s, e = m.span("n")
                lexicon_only = i >= _LEXICON_FRAMES_FROM  # labelled fields: known names only
                if any(a < e and s < b for a, b in covered) or not self._single(
                    m.group("n"), given, surnames, lexicon_only, speaker=i == 0
                ):
                    continue
                covered.append((s, e))
                out.append(RecognizerResult("PATIENT", s, e, self.score, {"recognizer_name": self.qualified_name}))
        for i, frame in enumerate(_CLINICIAN_FRAMES):
            for m in frame.finditer(text):
                s, e = self._clinician(m, given, surnames, from_right=i == 0)
                if e <= s or any(a < e and s < b for a, b in covered):
                    continue
                covered.append((s, e))
                out.append(RecognizerResult("DOCTOR", s, e, self.score, {"recognizer_name": self.qualified_name}))
        return sorted(out, key=lambda r: r.start)

    @staticmethod
    def _clinician(m: re.Match, given: frozenset[str], surnames: frozenset[str], from_right: bool) -> tuple[int, int]:
        """The name words of a clinician frame: the run of name-like words next to the credential
        (``from_right``) or the role word; (0, 0) when there is none."""
        words = list(re.finditer(r"\S+", m.group("n")))
        if from_right:
            words.reverse()
        keep = []
        for w in words:
            tok = w.group(0)
            f = tok.casefold().rstrip(".")
            if len(f) == 1 and tok.endswith("."):  # an initial
                keep.append(w)
                continue
            if f in _NOT_NAME or f in _FRAME_STOP or f in _CLINICIAN_STOP:
                break
            if not (f in given or f in surnames or _rare(tok)):
                break
            keep.append(w)
        if from_right:
            keep.reverse()
        while keep and len(keep[-1].group(0).rstrip(".")) == 1:
            keep.pop()  # a trailing initial is not a name
        while keep and len(keep[0].group(0).rstrip(".")) == 1 and from_right and len(keep) == 1:
            keep.pop()
        if not keep:
            return 0, 0
        base = m.start("n")
        return base + keep[0].start(), base + keep[-1].end()

    @staticmethod
    def _single(
        word: str, given: frozenset[str], surnames: frozenset[str], lexicon_only: bool, speaker: bool = False
    ) -> bool:
        """One word in a name frame: a known name, or (not in labelled fields) a title-case or
        capitalised word English text almost never uses (Zipf < 2: "Kasimir" yes, "Dispo" or "HPI"
        no). A chat speaker may be a name that is also a month ("may: omw")."""
        f = word.casefold()
        if (f in _NOT_NAME and not (speaker and f in given)) or f in _FRAME_STOP:
            return False
        if f in given or f in surnames:
            return True
        cased = word[:1].isupper() and (word[1:].islower() or (word.isupper() and len(word) > 3))
        if lexicon_only or not cased:
            return False
        return _zipf().get(f, 0.0) < 1e-7

    @staticmethod
    def _is_name(
        a: str, b: str, mid: str | None, given: frozenset[str], surnames: frozenset[str], inverted: bool = False
    ) -> bool:
        fa, fb = a.casefold(), b.casefold()
        if fa not in given or fa in _NOT_NAME or fb in _NOT_NAME:
            return False
        if inverted and (_is_place(a) or not (fb in surnames or _rare(b))):
            return False  # "Logansport, Indiana" is a town and a state, not "Surname, Given"
        if mid and len(mid.rstrip(".")) > 1 and (mid.casefold() in _NOT_NAME or _common(mid)):
            return False
        if _common(a) and _common(b):
            return False
        return fb in surnames or fb in given or not _common(b)
