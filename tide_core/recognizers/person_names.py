"""People named by a known given name (``tide.names``): "Hana Yamamoto", "GUERRERO, ABIGAIL".

Names in portal messages, letters and social histories often come with no title, role word
or field label ("Hi, this is Dmitri Volkov", "her friend Elodie Moreau called").  This
recognizer labels PATIENT a run of two or three capitalised words whose first word is a known
given name and whose last word is a known surname or a word rare in English, and the inverted
form "Surname, Given".  The given names are the 8,672 of
``tide_core/data/surrogates/first_names.txt`` (Faker's lists over 16 locales) and, since version 3,
the 11,573 more of ``data/names/given_names_more.txt`` (all of Faker's locales, for recognition
only: :mod:`tide_core.recognizers.given_names`).  Titles mark clinicians elsewhere (the regex layer's
"Dr." patterns win ties as DOCTOR); this recognizer is the title-free fallback.

Since version 4 a name word may hold any Latin letter ("Jan Novák", "Łukasz Żółć", "José Núñez"):
the upper- and lower-case classes are the Latin letters of the Unicode database, the shapes are
unchanged, and a word with diacritics is a known name when its plain spelling is ("Núñez" is
listed as "Nunez").

Single words are names in frames that say so: a chat speaker, a greeting, a sign-off, a labelled
contact field, a self-introduction.  Strong frames (version 2) take a word whatever it is, an
everyday word or a month included, because the frame itself says "person": a speaker after a
timestamp ("[03:54] Peregrine: ok", "2017-02-11 06:12 - May: hi"), a bare speaker in a note
that reads as a chat log, "Hi Will,", a valediction line, a dash sign-off near the end, an e-mail
display name ("Bo E. Tremblay <b@x.org>"), a relation noun before a capitalised word ("his
daughter May"), and a capitalised word that is also a word of an e-mail address in the same
note ("Contact Ignatius at ignatius_h@x.com").

Version 6 adds frames seen in clinical notes: a relation noun at the end of a wrapped line before a
known or rare name ("help from her neighbour\nPeregrine"), a role word before a given name that is also a
verb ("-- RN Will Quillfeather"), a two-letter name before a credential ("Ty (LICSW)"), an initial and a
surname in capitals or in a table column ("K. QUILLFEATHER"), a rare given name before a double-barrelled
surname with a known half, a message left for or a plan gone over with a known name ("voicemail for
Anselm", "reviewed with Hope."), "Surname, Given" after a patient or subject label ("Re: MARCHBANKS,
THADDEUS") and a lower-case display name before an address that holds one of its words; a person a
report or a call came from ("after a report from Anselm"); a given name that is also a month right
before a credential or after "Surname," in a labelled field ("May (MSW)", "Pt = Quillfeather, May").

Version 7 adds a name and a credential filling a table cell on their own ("Will RN", "oriel rn" in a
flowsheet's initials column; label DOCTOR), a self-introduction followed by the writer's details ("it's
will, my date of birth is ...") and a last line repeating a name found in the note, a relative named
between commas or in lower case ("her cousin from the choir, Will, drives her", "her nephew eamon"), a
full name alone in a From, To or signature field, one word rare in English after "a report from", and a
month given name after a role word ("MÉDECIN: May Quenneville").

A run is not a name when a clinical noun follows it ("Bence Jones protein": an eponym), or when
a word is an everyday English word (Zipf frequency >= 4.5 by
``wordfreq``: "Will Power", "May Day" are left to the model), a month or weekday, or a clinical
head word ("Grace Hospital" is a facility).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.given_names import more_given_sha256, recognition_given_names
from tide_core.recognizers.patterns import COUNTRIES, STATE_NAMES
from tide_core.recognizers.places import _CLINICAL_HEADS as _PLACE_CLINICAL_HEADS
from tide_core.recognizers.places import _fold, load_place_names
from tide_core.spans import RecognizerResult
from tide_core.steps.propagate import name_lexicon
from tide_core.text.anchored import PatternScan, PatternSet, finditer_at, run_starts
from tide_core.text.refold import re_fold
from tide_core.text.word_frequency import english_frequencies

#: A word this common in English is not taken as a surname on its own evidence.
COMMON_ZIPF = 4.5


def _latin_letters() -> tuple[str, str]:
    """(upper, lower): the letters of the Basic Multilingual Plane whose Unicode name starts with
    "LATIN", by general category: Lu and Lt ("É", "Ł", "ǅ"), then Ll ("é", "ł", "ß", "ə")."""
    upper: list[str] = []
    lower: list[str] = []
    for c in map(chr, range(0x10000)):
        category = unicodedata.category(c)
        if category in ("Lu", "Lt", "Ll") and unicodedata.name(c, "").startswith("LATIN "):
            (lower if category == "Ll" else upper).append(c)
    return "".join(upper), "".join(lower)


def _class_body(chars: str) -> str:
    """``chars`` as the body of a regex character class, in ranges: "A-Z\u00c0-\u00d6..."."""
    points = sorted({ord(c) for c in chars})
    parts: list[str] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        lo, hi = chr(points[i]), chr(points[j])
        parts.append(re.escape(lo) if i == j else f"{re.escape(lo)}-{re.escape(hi)}")
        i = j + 1
    return "".join(parts)


#: Upper-case (and title-case) Latin letters, lower-case Latin letters, both: "Novák", "Łukasz
#: Żółć", "Zoë Brontë", "José Núñez" have the shapes of "Novak", "Lukasz Zolc" (version 4).
_UPPER_CHARS, _LOWER_CHARS = _latin_letters()
_UP = _class_body(_UPPER_CHARS)
_LO = _class_body(_LOWER_CHARS)
_AL = _UP + _LO
_WORD = (
    rf"[{_UP}][{_LO}'\u2019]+(?:[{_UP}][{_LO}]+)?(?:-[{_UP}][{_LO}'\u2019]+(?:[{_UP}][{_LO}]+)?)?"  # "McGillicuddy"
    rf"|[{_UP}]['\u2019]?[{_UP}]+(?:-[{_UP}]+)?"
)
#: Generational suffixes after a name: not its last word, but part of the span ("John Smith Jr.").
_GENERATION = r"(?:Jr|Sr|JR|SR|II|III|IV)\b"
#: Surname particles: "Ansgar von der Heydt", "Sanne de Vries", "A. ter Horst", "G. Lo Russo" (version 5).
_PARTICLES = r"(?:von|van|de|der|den|ter|te|la|le|di|da|del|della|dos|das|du|lo|Lo|La|De|Di|Da|Van|Von|Le|Ter)"
_RUN = re.compile(
    rf"(?<![\w.'\u2019-])(?P<a>{_WORD})(?: {{1,2}}(?P<mid>[{_UP}]\.?(?: {{0,2}}[{_UP}]\.)?|{_WORD}))? {{1,2}}"
    rf"(?P<part>(?:{_PARTICLES} ){{1,2}})?(?!{_GENERATION})(?P<b>{_WORD})(?![\w'\u2019-])"
)
_GENERATION_AFTER = re.compile(rf",?[ \t]+{_GENERATION}")
#: A nickname in quotes or brackets between the given name and the surname: 'Robert "Bobby" Lane'.
_NICKNAME = re.compile(
    rf"(?<![\w.'\u2019-])(?P<a>{_WORD})[ \t]+[\"\u201c'\u2018(](?P<nick>{_WORD})[\"\u201d'\u2019)][ \t]+(?P<b>{_WORD})"
    rf"(?![\w'\u2019-])"
)
#: An initial and a known surname: "P. Salazar graduated", "-- F. Hoang", "Agent: T. Moriarty".
_INITIAL_SURNAME = re.compile(
    rf"(?<![\w.'\u2019-])(?P<n>[{_UP}]\.(?:-?[{_UP}]\.)?[ \t]?(?:[{_UP}]\.[ \t]?)?(?:{_PARTICLES}[ \t]+){{0,2}}"
    rf"(?P<b>[{_UP}][{_LO}'\u2019]+(?:-[{_UP}][{_LO}'\u2019]+)?|[{_UP}]{{2,}}(?:-[{_UP}]{{2,}})?))(?![\w'\u2019-])"
)
_TITLE_BEFORE = re.compile(r"(?i:\b(?:dr|mr|mrs|ms|mx|prof|doctor|nurse|rn|np|pa|md)\.?[ \t]*)$")
#: Species written with a genus initial ("E. Coli", "S. Aureus"): not a person.
_SPECIES = frozenset(
    """coli aureus pylori diff difficile aeruginosa pneumoniae gonorrhoeae burgdorferi tuberculosis gondii influenzae
faecalis faecium monocytogenes lamblia epidermidis pyogenes agalactiae trachomatis vaginalis albicans marcescens
cloacae mirabilis fragilis perfringens botulinum tetani jirovecii carinii neoformans fumigatus vulnificus cholerae
typhi enteritidis jejuni baumannii maltophilia cepacia capitis hominis haemolyticus lugdunensis saprophyticus mutans
sanguinis mitis bovis avium kansasii marinum leprae pallidum pertussis henselae quintana rickettsii burnetii
tularensis pestis anthracis cereus subtilis vulgaris oxytoca aerogenes freundii stuartii rettgeri morganii glabrata
krusei auris catarrhalis meningitidis intracellulare abscessus falciparum vivax malariae ovale histolytica""".split()
)
_INVERTED = re.compile(
    rf"(?<![\w.'\u2019-])(?P<part>(?:{_PARTICLES} ){{1,2}})?(?P<b>{_WORD}), {{0,2}}(?P<a>{_WORD})"
    rf"(?: {{1,2}}(?P<mid>[{_UP}]\.?))?(?![\w'\u2019-])"
)
#: A clinical noun right after a run makes it an eponym, not a person: "Bence Jones protein",
#: "Stevens Johnson syndrome", "Glasgow Coma Scale" (checked for the two- and three-word runs).
_EPONYM_AFTER = re.compile(
    r"[ \t]+(?i:proteins?|syndromes?|disease|diseases|sign|signs|score|scores|criteria|reflex|reflexes|"
    r"maneuvers?|manoeuvres?|catheters?|fractures?|tubes?|procedures?|classification|scales?|ulcers?|palsy|"
    r"phenomenon|murmurs?|nodes?|nodules?|triad|bodies|repair|operation|lesions?|diverticulum|"
    r"ring|rings|hernia|stage|staging|grade|grading|sarcoma|lymphoma|tumou?rs?|anomaly|malformation|"
    r"contracture|deformity|esophagus|oesophagus|dystrophy|ataxia|chorea|encephalopathy|neuroma|cyst|cysts)\b"
)
_ANY = rf"[{_AL}][{_LO}'\u2019]+(?:-[{_AL}][{_LO}'\u2019]+)?|[{_UP}]{{2,}}(?:-[{_UP}]+)?"
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
_PERSON = rf"[{_AL}][{_LO}'\u2019]+(?:-[{_AL}][{_LO}'\u2019]+)?|[{_UP}]{{2,}}(?:-[{_UP}]+)?|[{_AL}]\."
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
#: A credential after a comma or an opening bracket: where the first clinician frame ends.
_CRED_AFTER = re.compile(rf"[,(][ \t]*(?i:{_CRED})(?![\w-])")
#: What the first clinician frame's names are made of: the characters of ``_PERSON`` and blanks.
_NAME_RUN = _UPPER_CHARS + _LOWER_CHARS + "'\u2019.- \t"
_LETTERS = frozenset(_UPPER_CHARS + _LOWER_CHARS)
#: A letter after a blank, an apostrophe or a hyphen: where a name word may start inside a run.
_NAME_START = re.compile(rf"(?<=[ \t'\u2019-])[{_AL}]")


def _clinician_frame_matches(text: str, scan: PatternScan) -> Iterator[tuple[int, re.Match[str]]]:
    """(frame index, match) for each clinician frame in turn, the matches of ``finditer``."""
    for m in _credential_frame_matches(text):
        yield 0, m
    for m in scan.finditer(_CLINICIAN_FRAMES[1]):
        yield 1, m


def _credential_frame_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_CLINICIAN_FRAMES[0].finditer(text)`` ("Gintaras (MSW)", "tamsin
    falkenrath, md"), the frame tried only in front of a credential.

    A match is name words and the blanks between them (characters of ``_NAME_RUN``), then a comma
    or an opening bracket followed by a credential (``_CRED_AFTER`` matches there).  So it starts
    in the run of ``_NAME_RUN`` characters that ends right before such a comma or bracket, at a
    letter that begins the run or follows a blank, an apostrophe or a hyphen (the frame's
    lookbehind refuses a letter after a letter or a dot).  Those positions are tried with the
    rules of ``finditer``: leftmost first, then on from the end of the match.
    """
    return finditer_at(_CLINICIAN_FRAMES[0], text, _credential_frame_starts(text))


def _credential_frame_starts(text: str) -> list[int]:
    """Where the first clinician frame may start (see :func:`_credential_frame_matches`), in order."""
    tails = (m.start() for m in _CRED_AFTER.finditer(text))
    return run_starts(text, tails, _NAME_RUN, _NAME_START, _LETTERS)


_LOWER_WORD = re.compile(rf"(?<![\w'\u2019-])[{_LO}][{_LO}'\u2019]+(?:-[{_LO}]+)?(?![\w'\u2019-])")
_NOT_NAME = frozenset(
    """january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday hospital clinic center centre medical health street road
avenue drive lane county school church university college department unit floor room bed disease syndrome""".split()
)


#: Words that fill the frames but are not names ("From: Pharmacy", "To: All", "Contact: none").
_FRAME_STOP = frozenset(
    """all none n/a na unknown self patient pt team staff clinic pharmacy office home work
mom dad mother father wife husband son daughter me you us them him her everyone anyone someone nobody admin support
billing scheduling nurse doctor dr provider front desk reception subject re fwd fw date time sent
médecin medecin médico medico arzt ärztin""".split()
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

    return _fold(surface).lower() in load_place_names().tiers or surface.casefold() in _US_STATES


_US_STATES = frozenset(name.casefold() for name in STATE_NAMES)
_COUNTRIES = frozenset(name.casefold() for name in COUNTRIES)


def _town_and_country(town: str, country: str) -> bool:
    """ "Ratlam, India", "Fatehābād, India": a town only ever a place name, then a country (which
    may be a given name too: "India", "Kenya"), not "Surname, Given"."""
    return country.casefold() in _COUNTRIES and load_place_names().tiers.get(_fold(town).casefold()) == "distinctive"


def _rare(word: str) -> bool:
    """Rare in English (Zipf < 3): "Falkenrath" yes, "reviewed" no."""
    f = _zipf().get(word.casefold(), 0.0)
    return f == 0 or math.log10(f) + 9 < 3.0


def _common(word: str) -> bool:
    f = _zipf().get(word.casefold(), 0.0)
    return f > 0 and math.log10(f) + 9 >= COMMON_ZIPF


class _Covered:
    """The ranges already labelled, in text order.  They never overlap (a range is added only
    where :meth:`overlaps` says it is free), so the one starting last before ``e`` also ends last."""

    def __init__(self, ranges: Iterable[tuple[int, int]]):
        self.starts: list[int] = []
        self.ends: list[int] = []
        for s, e in ranges:
            self.add(s, e)

    def overlaps(self, s: int, e: int) -> bool:
        """Whether ``[s, e)`` overlaps a range already added."""
        i = bisect.bisect_left(self.starts, e)  # the ranges starting before e
        return i > 0 and self.ends[i - 1] > s

    def add(self, s: int, e: int) -> None:
        i = bisect.bisect_left(self.starts, s)
        self.starts.insert(i, s)
        self.ends.insert(i, e)


class PersonNameRecognizer(TideRecognizer):
    """Title-free person names by a known given name (label PATIENT)."""

    name = "tide.names"
    # 5: runs retried after a capitalised word that is not a name ("Customer Jasper Rios"), nicknames,
    # generational suffixes, two initials, a rare given name before an everyday word, more relation and
    # verb frames, an initial and a known surname, names in Greek and Cyrillic script
    # 6: a relation noun at a line end, "RN Will Quillfeather", two-letter names before a credential, an
    # initial and a surname in capitals or in a table column, a rare given name and a double-barrelled
    # surname, "voicemail for X", "reviewed with X", "Pt -- SURNAME, GIVEN", lower-case display names,
    # "a report from X", month given names in name frames
    # 7: a name and a credential filling a table cell ("Will RN", "solveig rn"), "this is X, my birthday",
    # "a friend from church, X,", a last line repeating a name, "a report from" a word English never
    # uses, a month given name after a role word ("MÉDECIN: May Hightower")
    version = "7"
    supported_entities = ("PATIENT", "DOCTOR")

    def __init__(self, score: float = 0.6):
        self.score = float(score)

    def config(self) -> dict[str, Any]:
        return {"score": self.score, "common_zipf": COMMON_ZIPF, "more_given_names": more_given_sha256()}

    def load(self) -> None:
        _lexicons()
        _zipf()

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        if entities and not {"PATIENT", "DOCTOR"} & set(entities):
            return []
        given, surnames = _lexicons()
        scan = _PATTERNS.scan(text)  # where the frames' cue words are
        out: list[RecognizerResult] = []
        taken = -1
        matches = sorted(
            [*_runs_with_retries(text), *_INVERTED.finditer(text), *_NICKNAME.finditer(text)],
            key=lambda m: (m.start(), -m.end()),
        )
        for m in matches:
            if m.start() < taken:
                continue
            a, b = m.group("a"), m.group("b")
            mid = m.group("mid") if m.re is not _NICKNAME else None
            if not self._is_name(a, b, mid, given, surnames, m.re is _INVERTED) or _is_place(m.group(0)):
                continue
            if m.re is not _INVERTED and _EPONYM_AFTER.match(text, m.end()):
                continue
            end = m.end()
            generation = _GENERATION_AFTER.match(text, end) if m.re is not _INVERTED else None
            if generation is not None:
                end = generation.end()  # "John Smith Jr.", "Mary Jones III"
            out.append(
                RecognizerResult("PATIENT", m.start(), end, self.score, {"recognizer_name": self.qualified_name})
            )
            taken = end
        covered = _Covered((r.start, r.end) for r in out)
        # lower-case text (portal messages): "wendell cormier" when both words are known names
        words = list(_LOWER_WORD.finditer(text))
        firsts = [i for i, w in enumerate(words[:-1]) if w.group(0) in given]  # the pairs' first words
        for w1, w2 in ((words[i], words[i + 1]) for i in firsts):
            gap = text[w1.end() : w2.start()]
            if not gap or gap.strip(" \t"):
                continue
            a, b = w1.group(0), w2.group(0)
            if b in surnames and not _common(a) and not _common(b):
                if not covered.overlaps(w1.start(), w2.end()):
                    covered.add(w1.start(), w2.end())
                    out.append(
                        RecognizerResult(
                            "PATIENT", w1.start(), w2.end(), self.score, {"recognizer_name": self.qualified_name}
                        )
                    )
        for i, frame in enumerate(_FRAMES):
            for m in scan.finditer(frame):
                s, e = m.span("n")
                lexicon_only = i >= _LEXICON_FRAMES_FROM  # labelled fields: known names only
                if covered.overlaps(s, e) or not self._single(
                    m.group("n"), given, surnames, lexicon_only, speaker=i == 0
                ):
                    continue
                covered.add(s, e)
                out.append(RecognizerResult("PATIENT", s, e, self.score, {"recognizer_name": self.qualified_name}))
        for s, e in _strong_frame_names(text, given, surnames, scan):
            if covered.overlaps(s, e):
                continue
            covered.add(s, e)
            out.append(RecognizerResult("PATIENT", s, e, self.score, {"recognizer_name": self.qualified_name}))
        for s, e in _more_frame_names(text, given, surnames, scan):  # version 5
            if covered.overlaps(s, e):
                continue
            covered.add(s, e)
            out.append(RecognizerResult("PATIENT", s, e, self.score, {"recognizer_name": self.qualified_name}))
        for i, m in _clinician_frame_matches(text, scan):
            s, e = self._clinician(m, given, surnames, from_right=i == 0)
            if e <= s or covered.overlaps(s, e):
                continue
            covered.add(s, e)
            out.append(RecognizerResult("DOCTOR", s, e, self.score, {"recognizer_name": self.qualified_name}))
        for label, s, e in _clinical_note_frames(text, given, surnames):  # version 7
            if covered.overlaps(s, e):
                continue
            covered.add(s, e)
            out.append(RecognizerResult(label, s, e, self.score, {"recognizer_name": self.qualified_name}))
        labels = {text[r.start : r.end].casefold(): r.entity_type for r in out}
        for s, e in _final_line_names(text, set(labels)):  # a sign-off repeating a name (version 7)
            if not covered.overlaps(s, e):
                covered.add(s, e)
                label = labels[text[s:e].casefold()]
                out.append(RecognizerResult(label, s, e, self.score, {"recognizer_name": self.qualified_name}))
        return sorted(out, key=lambda r: r.start)

    @staticmethod
    def _clinician(
        m: re.Match[str], given: frozenset[str], surnames: frozenset[str], from_right: bool
    ) -> tuple[int, int]:
        """The name words of a clinician frame: the run of name-like words next to the credential
        (``from_right``) or the role word; (0, 0) when there is none."""
        words = list(re.finditer(r"\S+", m.group("n")))
        if from_right:
            words.reverse()
        keep: list[re.Match[str]] = []
        for i, w in enumerate(words):
            tok = w.group(0)
            f = tok.casefold().rstrip(".")
            if len(f) == 1 and tok.endswith("."):  # an initial
                keep.append(w)
                continue
            if (
                (f in _CLINICIAN_STOP or f in _MONTH_GIVEN and not keep)
                and not from_right
                and _title_before_name(tok, words[i + 1 : i + 2], given, surnames)
            ):
                # "RN Will Quillfeather": a capitalised word that is also a verb, then a name (version 6);
                # "MÉDECIN: May Hightower": a given name that is also a month, then a name (version 7)
                keep.append(w)
                continue
            before = words[i + 1].group(0).casefold() if from_right and i + 1 < len(words) else ""
            if from_right and not keep and f in _MONTH_GIVEN and tok[:1].isupper() and before not in _MONTH_PREP:
                keep.append(w)  # "May (MSW)": a name that is also a month, right before a credential (version 6)
                continue
            if f in _NOT_NAME or f in _FRAME_STOP or f in _CLINICIAN_STOP:
                break
            if not (f in given or f in surnames or _rare(tok) or from_right and _short_name(tok)):
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
        if fa not in given and not inverted and fb in given and not _common(b) and not _common(a):
            # surname first, as Hungarian writes it: "Fekete Zoltán", "HORVÁTH Enikő" (version 5)
            return (fa in surnames or _rare(a)) and not _is_place(a) and not _clinical_word(a) and fa not in _NOT_NAME
        if fa not in given and not inverted and _known_parts(fb, surnames) and _rare(a) and a[1:].islower():
            return not _is_place(a) and not _clinical_word(a) and fa not in _NOT_NAME  # version 6
        if fa not in given or fa in _NOT_NAME or fb in _NOT_NAME:
            return False
        if inverted and (_is_place(a) or _town_and_country(b, a) or not (fb in surnames or _rare(b))):
            return False  # "Logansport, Indiana" is a town and a state, not "Surname, Given"
        if mid and len(mid.rstrip(".")) > 1 and "." not in mid and (mid.casefold() in _NOT_NAME or _common(mid)):
            return False
        if _common(a) and _common(b):
            return False
        if fb in surnames or fb in given or not _common(b):
            return True
        # a rare given name and a capitalised everyday word: "Ximena Rivers", "Oksana Brown" (version 5)
        return (
            not inverted
            and _rare(a)
            and b[1:].islower()
            and fb not in _FRAME_STOP
            and fb not in _STRONG_STOP
            and not _clinical_word(b)
        )


# ---------------------------------------------------------------------------------------------
# Strong frames: positions where a word is a person's name whatever the word is ("Hi Will,",
# "[03:54] Peregrine: ok", "Bo E. Tremblay <b@x.org>", "Contact Ignatius at ignatius_h@x.com").
# Here even an everyday English word or a month is taken ("may: omw"); only the frame fillers
# below are not names ("Hi all,", "[09:12] System: ...").

_STRONG_STOP = _FRAME_STOP | frozenset(
    """there again both folks guys gang friends friend sir madam maam ma'am doc doctor everybody yall y'all
sweetie honey dear love buddy mate team all system bot auto automated notification reminder link note notes
update edit ps fyi http https www mailto subject info noreply no-reply donotreply customer service services
care and or the a an of in on at for with your our my his her their this that these those it we i
portal support account accounts number satisfaction feedback relations experience success id""".split()
)
#: A chat speaker after a timestamp or bracket: "[03:54] Peregrine: ok", "2017-02-11 06:12 - May: hi".
_TIMED_SPEAKER = re.compile(
    rf"(?m)^[ \t]*(?:\[[^\]\n]{{1,30}}\]|\(?[0-9][0-9:/.\-T ]{{2,24}}(?:[ \t]?[AaPp]\.?[Mm]\.?)?\)?"
    rf"[ \t]*[-\u2013\u2014|])"
    rf"[ \t]*(?P<n>{_ANY})[ \t]*(?::(?!\d)|>(?!=))"
)
#: A speaker with no timestamp: "bo: send it", "mark > link". Taken only in a note that reads as a
#: chat log (two or more speaker lines with a timestamp or a ">").
_BARE_SPEAKER = re.compile(rf"(?m)^[ \t]*(?P<n>{_ANY})[ \t]*(?P<sep>:(?![\d/])|>(?!=))[ \t]")
_GREETING = re.compile(
    rf"(?m)(?:^|(?<=[.!?][ \t]))[ \t]*(?:Hi|Hello|Hey|Dear|Hiya|Howdy|Morning|Good morning|Good afternoon|"
    rf"Good evening|HI|HELLO|HEY|DEAR)[ \t,]+(?P<n>(?:{_WORD})(?:[ \t]+(?:{_WORD})){{0,2}})(?=[ \t]*[,!:\n])"
)
_VALEDICTION = re.compile(
    rf"\b(?:Best|Regards|Best regards|Kind regards|Warm regards|Sincerely|Thanks|Thank you|Cheers|Love|Warmly|"
    rf"Respectfully|Yours|Yours truly|Take care|Talk soon|XOXO|xo|BEST|REGARDS|THANKS|CHEERS|SINCERELY)[,!.]?[ \t]*\n+"
    rf"[ \t]*(?P<n>(?:{_WORD})(?:[ \t]+(?:[{_UP}]\.|{_WORD})){{0,2}})(?=[ \t]*(?:,|\(|\n|$))"
)
#: A sign-off dash on one of the last lines: "-- Dmitri (Tier 2)", "\u2014 Will" (a single "-" is
#: how the normalised view writes every dash, "\u2014" included).
_DASH_SIGNOFF = re.compile(
    rf"(?m)^[ \t]*(?:--?|\u2014|\u2013|~)[ \t]*(?P<n>(?:{_WORD})(?:[ \t]+(?:[{_UP}]\.|{_WORD})){{0,2}})"
    rf"(?=[ \t]*(?:,|\(|$))"
)
#: An e-mail display name: "Bo E. Tremblay <tremblayb@fastmail.fm>", "FROM\tOksana <o.m@gmx.de>".
_DISPLAY_NAME = re.compile(
    rf"(?<![\w.'\u2019-])(?P<n>(?:{_WORD})(?:[ \t]+(?:[{_UP}]\.|{_WORD})){{0,3}})[ \t]*<[^<>@\s]+@"
)
#: A relation or role noun before a capitalised word: "his daughter May", "coworker Bill", "Pastor Kwame".
_RELATION_NOUNS = (
    r"(?i:wife|husband|spouse|partner|son|daughter|mother|father|mom|dad|mum|brother|sister|twin|sibling|"
    r"grandmother|grandfather|grandson|granddaughter|grandma|grandpa|niece|nephew|aunt|uncle|cousin|"
    r"stepdaughter|stepson|stepmother|stepfather|fianc[ée]e?|boyfriend|girlfriend|friend|neighbou?r|roommate|"
    r"coworker|co-worker|colleague|boss|landlord|landlady|caregiver|guardian|pastor|reverend|rabbi|imam|"
    r"manager|supervisor|customer|client|passenger|tenant|employee|teacher|coach|sponsor|attorney|lawyer|"
    r"godmother|godfather|stepbrother|stepsister|half-brother|half-sister|ex-wife|ex-husband|relative)"
)
_RELATION = re.compile(
    r"\b"
    + _RELATION_NOUNS
    + rf"(?i:-in-law)?(?P<gap>[ \t,]{{1,2}}|[ \t]*\n[ \t]*)(?P<n>(?:{_WORD})(?:[ \t]+(?:{_WORD})){{0,2}})"
)
_WEEKDAY_WORDS = frozenset("monday tuesday wednesday thursday friday saturday sunday today tonight tomorrow".split())
_EMAIL = re.compile(r"(?<![\w.+-])(?P<local>[^\W_][\w.%+-]*)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_CAP_WORD = re.compile(rf"(?<![\w@.'\u2019-])(?:[{_UP}][{_LO}'\u2019]+|[{_UP}]{{2,}})(?![\w@'\u2019-])")
_HEADER_LEAD = frozenset("from to cc bcc reply-to sender attn re fw fwd".split())


def _email_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_EMAIL.finditer(text)``, the pattern tried only in front of an "@".

    A match is a local part (word characters and ``.%+-``) and an "@", so it starts in the run of
    those characters that ends at an "@": where the run starts or right after a "%" (the pattern's
    lookbehind refuses a start after any other character of the run).  Those positions are tried
    with the rules of ``finditer``: leftmost first, then on from the end of the match.
    """
    return finditer_at(_EMAIL, text, _email_starts(text))


def _email_starts(text: str) -> Iterator[int]:
    """Where ``_EMAIL`` may start (see :func:`_email_matches`), in order."""
    at = text.find("@")
    while at >= 0:
        start = at
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.%+-"):
            start -= 1  # \w is a letter, a digit or "_"; the run never reaches back past an "@"
        if start < at:
            yield start
        percent = text.find("%", start, at)
        while percent >= 0:
            if percent + 1 < at:
                yield percent + 1
            percent = text.find("%", percent + 1, at)
        at = text.find("@", at + 1)


def _cap_words_among(text: str, words: set[str]) -> list[re.Match[str]]:
    """The matches of ``_CAP_WORD.finditer(text)`` whose case fold is one of ``words``, in order.

    ``_CAP_WORD`` matches words of letters and apostrophes, each after a character that cannot be
    inside one.  In an ASCII text a word's case fold is its lower case, as in ``re_fold``, so such
    a match starts where the folded text holds one of ``words``: only those places are tried.  A
    text with other letters ("Straße" folds to "strasse") is scanned whole.
    """
    if not text.isascii():
        return [m for m in _CAP_WORD.finditer(text) if m.group(0).casefold() in words]
    folded = re_fold(text)
    starts: set[int] = set()
    for word in words:
        at = folded.find(word)
        while at >= 0:
            starts.add(at)
            at = folded.find(word, at + 1)
    found = (_CAP_WORD.match(text, at) for at in sorted(starts))
    return [m for m in found if m is not None and m.group(0).casefold() in words]


#: Latin letters with a stroke or a ligature, which Unicode does not decompose into a base letter
#: and a mark ("Łukasz" is spelt "Lukasz" in ASCII name lists).
_UNDECOMPOSED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ŧ": "t", "ŀ": "l"})


def _ascii_key(word: str) -> str:
    """A case-folded word without its diacritics: "núñez" -> "nunez", "łukasz" -> "lukasz"."""
    return _fold(word.translate(_UNDECOMPOSED))


class _Lexicon(frozenset[str]):
    """Case-folded names that also hold a word with diacritics whose plain spelling they hold:
    the surname list spells "Novak", "Nunez"; a note writes "Novák", "Núñez"."""

    def __contains__(self, word: object) -> bool:
        if super().__contains__(word):
            return True
        return isinstance(word, str) and not word.isascii() and super().__contains__(_ascii_key(word))


@functools.lru_cache(maxsize=1)
def _lexicons() -> tuple[_Lexicon, _Lexicon]:
    """(given names, surnames) of :func:`recognition_given_names` and :func:`name_lexicon`."""
    return _Lexicon(recognition_given_names()), _Lexicon(name_lexicon()[1])


def _strong_word(word: str) -> bool:
    f = word.casefold().rstrip(".")
    return bool(f) and f not in _STRONG_STOP and not f.isdigit()


def _name_run(text: str, m: re.Match[str], given: frozenset[str], surnames: frozenset[str]) -> tuple[int, int] | None:
    """The name words of a multi-word strong frame, leading header words dropped ("FROM Oksana")."""
    words = list(re.finditer(r"\S+", m.group("n")))
    while words and words[0].group(0).casefold().rstrip(":") in _HEADER_LEAD:
        words.pop(0)
    if not words or not all(_strong_word(w.group(0)) for w in words if len(w.group(0).rstrip(".")) > 1):
        return None
    if all(w.group(0).casefold() in _NOT_NAME and w.group(0).casefold() not in given for w in words):
        return None
    base = m.start("n")
    return base + words[0].start(), base + words[-1].end()


def _strong_frame_names(
    text: str, given: frozenset[str], surnames: frozenset[str], scan: PatternScan | None = None
) -> list[tuple[int, int]]:
    """Offsets of names in strong frames (see above), in text order, overlapping ones dropped
    (``scan`` is ``_PATTERNS.scan(text)`` when the caller has it)."""
    scan = _PATTERNS.scan(text) if scan is None else scan
    found: list[tuple[int, int]] = []
    timed = list(_TIMED_SPEAKER.finditer(text))
    bare = list(_BARE_SPEAKER.finditer(text))
    cued = len(timed) + sum(1 for m in bare if m.group("sep") == ">")
    chat = cued >= 1 and cued + sum(1 for m in bare if m.group("sep") == ":") >= 2
    speakers = {m.group("n").casefold() for m in timed}
    speakers |= {m.group("n").casefold() for m in bare if m.group("sep") == ">"}
    for m in timed:
        if _strong_word(m.group("n")):
            found.append(m.span("n"))
    for m in bare:
        w = m.group("n")
        if not _strong_word(w):
            continue
        if m.group("sep") == ">" and chat or chat and (w.casefold() in speakers or len(w) <= 12 and w[:1].islower()):
            found.append(m.span("n"))
    for rx in (_GREETING, _VALEDICTION, _DISPLAY_NAME):
        for m in scan.finditer(rx):
            span = _name_run(text, m, given, surnames)
            if span:
                found.append(span)
    for m in scan.finditer(_RELATION):
        words = list(re.finditer(r"\S+", m.group("n")))
        keep: list[re.Match[str]] = []
        for w in words:  # the name words: stop at the first filler ("his son May flew" keeps "May")
            f = w.group(0).casefold()
            if not _strong_word(f) or f in _WEEKDAY_WORDS or f in _NOT_NAME and f not in given and keep:
                break
            if keep and _common(f) and f not in given and f not in surnames:
                break
            if not keep and w.group(0).isupper() and _common(f) and f not in given:
                break  # "CUSTOMER ASKED US": a verb in capitals, not a name
            keep.append(w)
        if keep and "\n" in m.group("gap"):  # a line wrap after the noun: a known or rare name only (version 6)
            first = keep[0].group(0)
            if not (first.casefold() in given or first.casefold() in surnames or _rare(first)):
                continue
        if keep and keep[0].group(0).casefold() not in _WEEKDAY_WORDS:
            found.append((m.start("n") + keep[0].start(), m.start("n") + keep[-1].end()))
    tail = len(text.rstrip()) - 400  # a dash sign-off is near the end of a message
    for m in scan.finditer(_DASH_SIGNOFF):
        if m.start() >= tail:
            span = _name_run(text, m, given, surnames)
            if span:
                found.append(span)
    # a capitalised word that is also a word of an e-mail address's local part in the same note
    chunks: set[str] = set()
    for m in _email_matches(text):
        chunks.update(c.casefold() for c in re.findall(r"[^\W\d_]{3,}", m.group("local")))
    if chunks:
        for m in _cap_words_among(text, chunks):
            f = m.group(0).casefold()
            if f in chunks and _strong_word(f) and (f in given or f in surnames or not _common(f)):
                found.append(m.span())
    found.sort(key=lambda x: (x[0], -x[1]))
    out: list[tuple[int, int]] = []
    for s, e in found:
        if out and s < out[-1][1]:
            continue
        out.append((s, e))
    return out


def matches_before(
    pattern: re.Pattern[str], text: str, anchor: re.Pattern[str], back: int = 120, ahead: int = 24
) -> list[re.Match[str]]:
    """The matches of ``pattern`` that start at most ``back`` characters before a match of ``anchor``
    (a word every match of ``pattern`` holds near its end), each window searched on its own: a
    pattern that starts with a character class is tried only near its anchors, not at every
    character of a long note.  ``ahead`` characters after the anchor stay visible to lookaheads."""
    out: dict[tuple[int, int], re.Match[str]] = {}
    for a in anchor.finditer(text):
        for m in pattern.finditer(text, max(0, a.start() - back), min(len(text), a.end() + ahead)):
            if m.start() <= a.start() < m.end():
                out.setdefault(m.span(), m)
    return [out[k] for k in sorted(out)]


def _runs_with_retries(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_RUN``, and for each the runs starting at its second and third words: a
    capitalised word before a name ("Customer Jasper Rios", "Signed: Will Beauchesne") must not
    hide it when the longer run is refused."""
    for m in _RUN.finditer(text):
        yield m
        for group in ("mid", "b"):
            at = m.start(group) if m.group(group) else -1
            if at > m.start():
                sub = _RUN.match(text, at)
                if sub is not None:
                    yield sub


#: Single names in frames of messages and letters (version 5): a name before a speech or life verb
#: ("also Tamsin says", "Edwina has been employed by", "Magnus was born on") or after a pick-up or
#: pass-on verb ("pick up Tariq from", "pass this on to Darnell at", "hey its Nanami,").
_VERB_AFTER = re.compile(
    rf"(?<![\w'\u2019-])(?P<n>{_ANY})[ \t]+(?:says|said|asked|called|texted|wrote|replied|has[ \t]+been[ \t]+employed|"
    r"is[ \t]+employed|was[ \t]+employed|was[ \t]+born|turns|reports[ \t]+that|graduated|joined|met)\b"
)
_CAP_NAME_WORD = rf"[{_UP}][{_LO}'\u2019]+(?:-[{_AL}][{_LO}'\u2019]+)?|[{_UP}]{{2,}}"
#: A pick-up or drop-off: only known names count ("pick up Keppra from the pharmacy" is a drug).
_PICK_UP = re.compile(
    r"\b(?i:pick[ \t]+up|picked[ \t]+up|drop[ \t]+off|dropped[ \t]+off)[ \t]+"
    rf"(?P<n>(?:{_ANY})(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{0,2}})(?=[ \t]*(?:[,.;!?:\n(]|from|at|to|and|$))"
)
_VERB_ANCHOR = re.compile(
    r"[ \t](?:says|said|asked|called|texted|wrote|replied|has[ \t]+been|is[ \t]+employed|was[ \t]+employed|"
    r"was[ \t]+born|turns|reports[ \t]+that|graduated|joined|met)\b"
)
_VERB_BEFORE = re.compile(
    r"\b(?i:pass[ \t]+this[ \t]+on[ \t]+to|pass[ \t]+this[ \t]+to|"
    r"pass[ \t]+it[ \t]+on[ \t]+to|forward[ \t]+this[ \t]+to|give[ \t]+this[ \t]+to|its|it's|it\u2019s|copies[ \t]+to|"
    r"copy[ \t]+to|cc'd|cc)[ \t]*:?[ \t]+"
    rf"(?P<n>(?:{_ANY})(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{0,2}})(?=[ \t]*(?:[,.;!?:\n(]|from|at|to|and|says|$))"
)
#: A person after a patient or contact field label, in either order: "Patient = JARAMILLO, BABAJIDE",
#: "Family contact=Eulalia Yilmaz", "CONTACT ABROAD:Chidi Achterberg", "FAMILY CONTACT | Gintaras Sutherland".
_LABELLED_PERSON = re.compile(
    r"\b(?i:patient|pt|patient name|name|family contact|contact abroad|emergency contact|next of kin|nok|"
    r"passenger|guarantor|subscriber|insured|caregiver)[ \t]*(?:[:=|\t]|--?)[ \t]*"
    rf"(?P<n>(?:{_CAP_NAME_WORD})(?:,[ \t]*(?:{_CAP_NAME_WORD})|(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{1,2}}))"
    r"(?=[ \t]*(?:[,;|<(\n+\d]|$))"
)
#: A person a message was left for or a plan was gone over with (version 6): "left a voicemail for
#: Anselm at ...", "precautions reviewed with Hope.", "discussed with Anselm and his wife".
_MESSAGE_FOR = re.compile(
    r"\b(?i:voicemail|voice[ \t]+mail|voice[ \t]+message|message|msg|vm)[ \t]+for[ \t]+"
    rf"(?P<n>(?:{_CAP_NAME_WORD})(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{0,2}})"
    r"(?=[ \t]*(?:[,.;!?:\n(]|at|on|to|and|$))"
)
_GONE_OVER_WITH = re.compile(
    r"\b(?:reviewed|discussed|went[ \t]+over|gone[ \t]+over|spoke|spoken|talked|met)[ \t]+with[ \t]+"
    rf"(?P<n>(?:{_CAP_NAME_WORD})(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{0,2}})(?=[ \t]*(?:[,.;!?\n(]|and|who|$))"
)
#: Someone a report or a call came from: "opened after a report from Anselm.", "a call from Ottilie
#: Zwanenburg" (version 6).  A single word must be a known name; two or three words rare in English
#: will do ("report from Pathology" is neither).
_REPORT_FROM = re.compile(
    r"\b(?:report|reports|referral|call|calls|phone[ \t]+call|message|complaint|concerns?|letter|tip)[ \t]+from[ \t]+"
    rf"(?P<n>(?:{_CAP_NAME_WORD})(?:[ \t]+(?:[{_UP}]\.|{_CAP_NAME_WORD})){{0,2}})(?=[ \t]*(?:[,.;!?\n(]|and|who|$))"
)
#: Given names that are also month names: a month in a name frame ("Spoke with May (MSW)", "Pt =
#: Balogun, May") is the person (version 6).
_DEPARTMENT = re.compile(r"(?i:ology|ologists?|iatry|iatrics|ics|ery|ary|ward|unit|team|office)$")
_MONTH_GIVEN = frozenset({"april", "may", "june", "august"})
#: Words before a month that make it a date ("in May (PT)"), not a name.
_MONTH_PREP = frozenset("in on since until till by of from during before after early late mid next last this".split())
#: "Surname, Given" after a patient or subject label: "Pt -- MARCHBANKS, SUMMER", "Re: QUILLFEATHER,
#: THADDEUS" (version 6).
_LABELLED_INVERTED = re.compile(
    r"\b(?i:patient|pt|patient name|name|re|regarding|subject|client)[ \t]*(?:[:=|\t]|--?)[ \t]*"
    rf"(?P<n>(?P<b>{_CAP_NAME_WORD}),[ \t]*(?P<a>{_CAP_NAME_WORD}))"
    r"(?=[ \t]*(?:[,;|<(\n+\d-]|$)|[ ]{2}|\t)"
)
#: A display name in lower case before an address that holds one of its words:
#: "from\tdmitri quillfeather <thedmitri79@example.com>" (version 6).
_LOWER_DISPLAY_NAME = re.compile(
    rf"(?<![\w.'\u2019-])(?P<n>[{_LO}]{{2,}}(?:[ \t]+[{_LO}]{{2,}}){{1,2}})[ \t]*<(?P<local>[^<>@\s]+)@"
)
#: Greek and Cyrillic capitalised words (names in other scripts).
_GR_CY_WORD = (
    r"(?:[\u0386\u0388-\u038f\u0391-\u03ab][\u0390\u03ac-\u03ce\u1f00-\u1ffe]+|[\u0400-\u042f][\u0430-\u045f]+)"
)
_GR_CY_INITIAL = r"[\u0391-\u03ab\u0400-\u042f]\.[ \t]?"
_GR_CY_RUN = re.compile(rf"(?<![\w.-])(?P<n>(?:{_GR_CY_INITIAL})?{_GR_CY_WORD}(?:[ \t]+{_GR_CY_WORD}){{0,2}})(?![\w-])")
_GR_CY_CUE = re.compile(
    r"(?i:\b(?:emergency contact|contact|next of kin|name|patient|pt|mr|mrs|ms|dr|cc|from|to|spoke with|caller|"
    r"wife|husband|spouse|partner|son|daughter|mother|father|brother|sister|friend|neighbou?r|guardian)|"
    r"сын|дочь|жена|муж|мать|отец|брат|сестра|пациент|пациентка|фио|врач|контакт|"
    r"ασθενής|γιος|κόρη|σύζυγος|μητέρα|πατέρας|αδελφός|αδελφή|όνομα|επαφή|γιατρός|δρ\.|κ\.|κα\.)"
    rf"[ \t]*[:.,\-]?[ \t]*(?P<n>{_GR_CY_WORD}(?:[ \t]+{_GR_CY_WORD}){{0,2}})"
)


def _more_frame_names(
    text: str, given: frozenset[str], surnames: frozenset[str], scan: PatternScan
) -> list[tuple[int, int]]:
    """Names in the frames of version 5 (see ``_VERB_AFTER``, ``_VERB_BEFORE``, ``_INITIAL_SURNAME``
    and the Greek and Cyrillic patterns), in text order."""
    found: list[tuple[int, int]] = []
    for rx in (_VERB_AFTER, _VERB_BEFORE, _PICK_UP):
        for m in matches_before(rx, text, _VERB_ANCHOR, 40) if rx is _VERB_AFTER else scan.finditer(rx):
            words = [w for w in m.group("n").split() if len(w.rstrip(".")) > 1]
            if rx is _PICK_UP and not any(w.casefold() in given for w in words):
                continue
            if all(_frame_word(w, given, surnames) for w in words):
                found.append(m.span("n"))
    for rx in (_MESSAGE_FOR, _GONE_OVER_WITH):
        for m in rx.finditer(text):
            words = [w for w in m.group("n").split() if len(w.rstrip(".")) > 1]
            # a capitalised given name here is a name even when it is an everyday word ("with Hope.")
            known = any(w.casefold() in given or w.casefold() in surnames for w in words)
            if known and all(w.casefold() in given or _frame_word(w, given, surnames) for w in words):
                found.append(m.span("n"))
    for m in _REPORT_FROM.finditer(text):
        words = [w for w in m.group("n").split() if len(w.rstrip(".")) > 1]
        known = any(w.casefold() in given or w.casefold() in surnames for w in words)
        if not all(w.casefold() in given or _frame_word(w, given, surnames) for w in words):
            continue
        if known or len(words) >= 2 and all(w[1:].islower() and not _DEPARTMENT.search(w) for w in words):
            found.append(m.span("n"))
        elif len(words) == 1 and _single_rare_name(words[0]):
            found.append(m.span("n"))  # "a report from Olamide": a title-case word English never uses (version 7)
    for m in _LABELLED_INVERTED.finditer(text):
        a, b = m.group("a"), m.group("b")
        fa, fb = a.casefold(), b.casefold()
        surname_like = fb not in _NOT_NAME and fb not in _FRAME_STOP and (fb in surnames or not _common(b))
        # a month as the given name ("Balogun, May") only after a known surname
        if surname_like and (fa in given or fa in _MONTH_GIVEN and (fb in surnames or _rare(b))):
            if a.isupper() == b.isupper() and fa not in _COUNTRIES and fa not in _US_STATES:
                found.append(m.span("n"))
    if "<" in text:
        for m in _LOWER_DISPLAY_NAME.finditer(text):
            pieces = list(re.finditer(r"\S+", m.group("n")))
            while pieces and pieces[0].group(0) in _HEADER_LEAD:
                pieces.pop(0)
            local = m.group("local").casefold()
            if len(pieces) >= 2 and any(len(w.group(0)) >= 3 and w.group(0) in local for w in pieces):
                if all(w.group(0) not in _STRONG_STOP and not _common(w.group(0)) for w in pieces):
                    found.append((m.start("n") + pieces[0].start(), m.end("n")))
    for m in scan.finditer(_LABELLED_PERSON):
        words = [w for w in re.split(r"[ \t,]+", m.group("n")) if len(w.rstrip(".")) > 1]
        if words and all(_frame_word(w, given, surnames) for w in words):
            found.append(m.span("n"))
    for m in _INITIAL_SURNAME.finditer(text):
        fb = m.group("b").casefold()
        before = text[max(0, m.start() - 12) : m.start()]
        if fb in _SPECIES or fb in _NOT_NAME or _clinical_word(fb) or _TITLE_BEFORE.search(before):
            continue
        if fb in surnames or _known_parts(fb, surnames) or _rare(fb) and _SIGN_CONTEXT.search(before):
            found.append(m.span("n"))
    if not text.isascii() and _GREEK_OR_CYRILLIC.search(text):
        for m in _GR_CY_CUE.finditer(text):
            found.append(m.span("n"))
        if _mostly_latin(text):  # one to three capitalised Greek or Cyrillic words in a Latin-script note
            found.extend(m.span("n") for m in _GR_CY_RUN.finditer(text))
    found.sort(key=lambda x: (x[0], -x[1]))
    out: list[tuple[int, int]] = []
    for s, e in found:
        if out and s < out[-1][1]:
            continue
        out.append((s, e))
    return out


#: A name and a credential filling a table cell on their own (version 7): "Will RN", "solveig rn",
#: "MAY LPN" in a flowsheet's initials column.  The cell is bounded by a line edge, a tab, a pipe or
#: a run of spaces; a word naming a shift or a role ("Charge RN", "Float RN") is not a name.
_CELL_EDGE = r"(?:^|\t|[ ]{2,}|\|)"
_CELL_CREDS = r"rn|lpn|lvn|cna|np|pct|cma|aprn|bsn"
_CELL_CREDENTIAL = re.compile(
    rf"(?m){_CELL_EDGE}[ \t]*(?P<n>(?:{_ANY})(?:[ ](?:{_ANY}))?)"
    rf"(?:(?:[ ]|,[ ]?)(?i:{_CELL_CREDS})|[ ]?\((?i:{_CELL_CREDS})\))"
    r"(?=[ \t]*(?:$|\t|[ ]{2}|\|))"
)
_CELL_STOP = frozenset(
    """charge float night nights day days evening evenings morning primary staff travel traveler traveling agency
student triage bedside admitting covering oncoming offgoing outgoing incoming signed sign signature by per new grad
senior lead clinic home health school registered licensed certified visiting hospice nurse nurses unit floor icu er
ed pacu or ob l&d ld cath resource relief pool float-pool initials init sig time vitals pain temp bp hr rr spo2
comment comments note notes by""".split()
)
#: A self-introduction followed by the writer's own details (version 7): "this is will, my birthday
#: is ...", "This is May from the 4th floor": the word is the writer's name whatever it is.
_SELF_INTRO_DETAILS = re.compile(
    rf"\b(?i:this is|it is|it's|it\u2019s)[ \t]+(?P<n>{_ANY})(?=[ \t]*,[ \t]*(?i:my)[ \t]+"
    r"(?i:birthday|birth[ \t]*date|date[ \t]+of[ \t]+birth|dob|d\.o\.b|name|number|mrn|phone|cell)\b"
    r"|[ \t]+(?i:from|calling)\b)"
)
#: A relative or friend named in commas after where they come from (version 7): "a friend from
#: church, Will, helps", "her neighbour at the farm, seraphina oyelaran, drives her".
_RELATION_APPOSITIVE = re.compile(
    r"\b"
    + _RELATION_NOUNS
    + r"[ \t]+(?i:from|at|of)[ \t]+(?:(?i:the|her|his|their|my|our|your)[ \t]+)?[^\W\d_]+,[ \t]+"
    + rf"(?P<n>(?:{_ANY})(?:[ \t]+(?:{_ANY})){{0,2}}),"
)


#: A relative named in lower case (version 7): "help from neighbour eamon on weekdays", "her son
#: bartholomew visits"; the word must be rare in English and not a clinical word.
_RELATION_LOWER = re.compile(
    r"\b" + _RELATION_NOUNS + rf"(?i:-in-law)?[ \t]+(?P<n>[{_LO}][{_LO}'\u2019]+(?:-[{_LO}]+)?)(?![\w'\u2019-])"
)
#: A header field holding a full name and nothing else (version 7): "From : Will Nwosu", "SENDER = Ana
#: Okafor"; the last word must be rare in English ("To : Refill Requests" is a queue).
_HEADER_PERSON = re.compile(
    rf"(?m)^[ \t]*(?i:from|sender|to|cc|attn|signed|electronically signed(?:[ \t]+by)?|signed[ \t]+by)[ \t]*[:=]?"
    rf"[ \t]*(?P<n>(?P<a>{_CAP_NAME_WORD})[ \t]+(?:[{_UP}]\.[ \t]+)?(?P<b>{_CAP_NAME_WORD}))"
    r"(?=[ \t]*(?:$|[,(<]|\d))"
)


def _clinical_note_frames(text: str, given: frozenset[str], surnames: frozenset[str]) -> list[tuple[str, int, int]]:
    """(label, start, end) of names in the frames of version 7 (see ``_CELL_CREDENTIAL``,
    ``_SELF_INTRO_DETAILS``, ``_RELATION_APPOSITIVE``), in text order."""
    found: list[tuple[str, int, int]] = []
    for m in _CELL_CREDENTIAL.finditer(text):
        words = m.group("n").split()
        if all(_cell_name_word(w) for w in words):
            found.append(("DOCTOR", *m.span("n")))
    for m in _SELF_INTRO_DETAILS.finditer(text):
        f = m.group("n").casefold()
        if f not in _STRONG_STOP and f not in _WEEKDAY_WORDS and f not in _DAYPART:
            found.append(("PATIENT", *m.span("n")))
    for m in _RELATION_LOWER.finditer(text):
        w = m.group("n")
        if (w in given or w in surnames) and _rare(w) and w not in _STRONG_STOP and not _clinical_word(w):
            found.append(("PATIENT", *m.span("n")))
    for m in _HEADER_PERSON.finditer(text):
        a, b = m.group("a"), m.group("b")
        fa = a.casefold()
        known = fa in given or fa in _MONTH_GIVEN
        if a.isupper() != b.isupper() or not (_rare(b) or known and not _common(b)) or _is_place(b):
            continue
        if _clinical_word(b) or b.casefold() in _NOT_NAME:
            continue
        if fa not in _STRONG_STOP and fa not in _FRAME_STOP and (fa not in _NOT_NAME or fa in _MONTH_GIVEN):
            found.append(("PATIENT", *m.span("n")))
    for m in _RELATION_APPOSITIVE.finditer(text):
        words = m.group("n").split()
        if all(_appositive_word(w, given) for w in words):
            found.append(("PATIENT", *m.span("n")))
    return sorted(found, key=lambda x: (x[1], -x[2]))


#: Words after "this is" that name a time, not a person ("this is tuesday, my ...").
_DAYPART = frozenset("morning afternoon evening night tonight today tomorrow yesterday".split())


def _cell_name_word(word: str) -> bool:
    """A word of a name in a table cell before a credential: one casing, not a shift or role word."""
    f = word.casefold()
    cased = word.islower() or word.isupper() or word[:1].isupper() and word[1:].islower()
    if f in _CLINICIAN_STOP and not (word[:1].isupper() and word[1:].islower()):
        return False  # "called to cna": a verb in a cell; a title-case "Will RN" is a name
    return cased and f not in _CELL_STOP and f not in _FRAME_STOP and not _clinical_word(f)


def _appositive_word(word: str, given: frozenset[str]) -> bool:
    """A word of a name set off by commas after a relation: not a filler, and a lower-case word
    only when it is not an everyday word ("a friend from work, however, ..." is no name)."""
    f = word.casefold()
    if f in _STRONG_STOP or f in _WEEKDAY_WORDS or (f in _NOT_NAME and f not in given) or _clinical_word(f):
        return False
    return not (word.islower() and _common(word))


def _final_line_names(text: str, names: set[str]) -> list[tuple[int, int]]:
    """The last non-empty line when it is, on its own, a name already found in the note (a
    sign-off: "this is will, ..." then "will" alone at the end; version 7)."""
    body = text.rstrip()
    start = body.rfind("\n") + 1
    line = body[start:]
    word = line.strip()
    if not word or word.casefold() not in names:
        return []
    s = start + (len(line) - len(line.lstrip()))
    return [(s, s + len(word))]


#: Where an initial and a surname rare in English stand for a person: a sign-off dash, a field label,
#: "to", "by", "from", "with", "cc", a line start.
_SIGN_CONTEXT = re.compile(
    r"(?:^|\n|\t|[ ]{2}|[-\u2013\u2014:|,;(]|\b(?i:to|by|from|with|and|cc|sergeant|sgt|constable|inspector|officer|"
    r"mme|mlle|herr|frau|sr|sra|sig|signora|mevrouw|dhr|pan|pani|κ|κα))[ \t]*$"
)


def _single_rare_name(word: str) -> bool:
    """One title-case word rare in English (Zipf < 3), not a
    department, a clinical word or a place: "Olamide" yes, "Pathology", "Radiology", "Boston" no."""
    if not (word[:1].isupper() and word[1:].islower()) or _DEPARTMENT.search(word) or _clinical_word(word):
        return False
    return _rare(word) and not _is_place(word)


def _clinical_word(word: str) -> bool:
    """A clinical noun or eponym head ("Scale", "Esophagus", "Sign"): not a surname."""
    m = _EPONYM_AFTER.match(" " + word)
    return (m is not None and m.end() == len(word) + 1) or word.casefold() in _PLACE_CLINICAL_HEADS


def _known_parts(word: str, surnames: frozenset[str]) -> bool:
    """A double-barrelled surname with a known half: "abernathy-quillfeather" (case-folded)."""
    parts = word.split("-")
    return len(parts) == 2 and all(len(p) >= 3 for p in parts) and any(p in surnames for p in parts)


#: Two-letter words that are English, not names, before a credential ("seen by (PT)" aside).
_SHORT_NOT_NAME = frozenset("of to in on at by is it as an or be we he me my no so up us do go if am".split())


def _short_name(word: str) -> bool:
    """A two-letter name right before a credential: "Ty (LICSW)", "- ty (cna)" (version 6)."""
    return len(word) == 2 and word.isalpha() and word.casefold() not in _SHORT_NOT_NAME


def _title_before_name(
    word: str, after: Sequence[re.Match[str]], given: frozenset[str], surnames: frozenset[str]
) -> bool:
    """A title-case word followed by a capitalised known or rare name word: "Will Quillfeather"."""
    if not (word[:1].isupper() and word[1:].islower()) or not after:
        return False
    nxt = after[0].group(0)
    f = nxt.casefold()
    if not nxt[:1].isupper() or f in _NOT_NAME or f in _FRAME_STOP or f in _CLINICIAN_STOP:
        return False
    return f in surnames or f in given or _rare(nxt)


def _frame_word(word: str, given: frozenset[str], surnames: frozenset[str]) -> bool:
    """A word of a name in a verb frame: a known name that is not an everyday word, or a word
    rare in English (Zipf < 3: "Tamsin", "Nanami") in one casing."""
    f = word.casefold()
    if _common(word) or f in _NOT_NAME or f in _STRONG_STOP or f in _FRAME_STOP:
        return False
    cased = word[:1].isupper() and (word[1:].islower() or word.isupper() and len(word) > 3) or word.islower()
    return f in given or f in surnames or cased and _rare(word)


_GREEK_OR_CYRILLIC = re.compile("[\u0370-\u045f\u1f00-\u1fff]")
_ASCII_LETTER = re.compile("[A-Za-z]")


def _mostly_latin(text: str) -> bool:
    """More than twice as many ASCII letters as Greek and Cyrillic ones."""
    return len(_ASCII_LETTER.findall(text)) > 2 * len(_GREEK_OR_CYRILLIC.findall(text))


#: The frames with cue words, tried only where those words occur (the same matches as ``finditer``).
_PATTERNS = PatternSet(
    [
        *_FRAMES,
        _CLINICIAN_FRAMES[1],
        _GREETING,
        _VALEDICTION,
        _DISPLAY_NAME,
        _RELATION,
        _DASH_SIGNOFF,
        _VERB_BEFORE,
        _PICK_UP,
        _LABELLED_PERSON,
    ]
)
