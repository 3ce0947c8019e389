"""Anchored scans give exactly the matches of the plain scans they replace.

``tide_core.text.anchored`` tries a pattern only where one of its start words occurs (one
Aho-Corasick pass over the case-folded note, ``tide_core.text.refold``), or, for patterns without
start words, skips the scan when the note lacks a character every match needs.  Recognizers use it
in three ways, all checked here against the reference they replay:

- :class:`PatternSet` groups (person names, organisations, places, person roles, facility and
  organisation head words): ``scan(text).finditer(p)`` must equal ``p.finditer(text)``;
- ``finditer_at`` with starts the recognizer computes (credential frames, e-mail addresses,
  organisation suffixes, counties): must equal ``pattern.finditer(text)``;
- the other start-word shortcuts of the same commit (identifier candidates, capitalised words
  among e-mail words, propagation's occurrence finder) against the definitions they document.

Texts: the benchmark corpora, windows before their gold spans (how roles and places use their
sets), case and Unicode variants of the notes, hand-written adversarial strings and seeded fuzz.
Matches are compared by pattern, span, every group's span and ``lastindex`` (``Match.pos``, where
the attempt was made, is the one field the module documents as different).
"""

from __future__ import annotations

import functools
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

import pytest

from benchmarks.corpora import load_corpus
from tide_core.recognizers import facilities, id_shapes, organisations, person_names, places
from tide_core.steps import person_roles
from tide_core.steps.propagate import _Finder, _occurrences
from tide_core.text.anchored import (
    PatternSet,
    finditer_at,
    pattern_anchors,
    required_chars,
    run_start,
    run_starts,
)
from tide_core.text.refold import fold_char, re_fold

CORPORA = ("inhouse", "oog-clinical", "oog-messages")
SOURCES = ("corpora", "windows", "variants", "adversarial", "fuzz")

# --- helpers ----------------------------------------------------------------------------------

MatchKey = tuple[int, tuple[int, int], int | None, tuple[tuple[int, int], ...]]


def _key(m: re.Match[str] | None) -> MatchKey | None:
    if m is None:
        return None
    return (id(m.re), m.span(), m.lastindex, tuple(m.span(g) for g in range(1, m.re.groups + 1)))


def _keys(matches: Iterable[re.Match[str]]) -> list[MatchKey | None]:
    return [_key(m) for m in matches]


def _head_set(cls: type[facilities.HeadWordRecognizer]) -> PatternSet:
    # exactly the call HeadWordRecognizer.analyze makes
    return facilities._head_patterns(cls.tail_re, cls.tail_cased_re, cls.lead_re)


#: Every PatternSet a recognizer builds.
PATTERN_SETS: dict[str, PatternSet] = {
    "person_names": person_names._PATTERNS,
    "organisations": organisations._PATTERNS,
    "places": places._CUES,
    "person_roles": person_roles._BEFORE,
    "facilities": _head_set(facilities.FacilityRecognizer),
    "org_heads": _head_set(facilities.OrganisationHeadRecognizer),
}


def _org_suffix(rx: re.Pattern[str]) -> Callable[[str], Iterable[re.Match[str]]]:
    return lambda text: finditer_at(rx, text, organisations._suffix_starts(text))


#: finditer_at with recognizer-computed starts: (reference finditer, the recognizer's replay).
REPLAYS: dict[str, tuple[Callable[[str], Iterable[re.Match[str]]], Callable[[str], Iterable[re.Match[str]]]]] = {
    "person_names.credential_frame": (
        person_names._CLINICIAN_FRAMES[0].finditer,
        person_names._credential_frame_matches,
    ),
    "person_names.email": (person_names._EMAIL.finditer, person_names._email_matches),
    "organisations.suffix": (organisations._SUFFIX_RE.finditer, _org_suffix(organisations._SUFFIX_RE)),
    "organisations.suffix_upper": (organisations._SUFFIX_UPPER.finditer, _org_suffix(organisations._SUFFIX_UPPER)),
    "places.county": (
        places._COUNTY.finditer,
        lambda text: finditer_at(places._COUNTY, text, places._county_starts(text)),
    ),
}

#: Characters whose re.IGNORECASE behaviour is special (long s, Kelvin, dotless/dotted i, sharp s ...).
ODD_CHARS = "ſ\u212aıİßẞµμΩ\u2126Å\u212bẛṡιͅ\u1fbeςσΣ"
#: Separators for fuzz, NBSP, zero-width and ideographic space included.
SEPARATORS = (
    *[" ", "  ", "\t", "\n", "\n\n", "\r\n", ", ", ": ", ". ", "-", "--", "'", "\u2019", "(", ")"],
    *["[", "] ", "@", "<", ">", "%", ".", "\u00a0", "\u200b", "", "", "\u2014 ", "\u3000", "\u2028", "\x85"],
)
FILLERS = (
    *"Anna Lee SMITH smith O'Neil Mary-Jane J. Dr. Dr dr MD M.D. md RN rn PhD pa-c ( , Inc Inc. Co. Co-op".split(),
    *"Bank BANK County COUNTY Parish General Hospital hospital St. & and of the Acme ACME Steel Works".split(),
    *"x.y@z.org a%b@c.com bo+1@mail.co @ % 12345 123456 A12B34 MRN-0012345 ab--1 a.b.c.d.e.f.g1 1.5".split(),
    *"his wife May dear Hi Hello Best regards -- \u2014 ~ > [10:22] Speaker: Tamsin".split(),
    *"\u212aelly ſmith İpek ıan STRAßE 😀 \U0001d400 Ѕmith Нospital Dr\u200b. Mr\u00a0Lee".split(),
)
ADVERSARIAL = (
    "",
    "a",
    "D",
    "\n",
    "@",
    " ",
    *ODD_CHARS,
    "ſ\u212aıİßẞ",
    "Dr Smith",
    "Dr. Smith, MD",
    "Seen by Dr",
    "seen by dr",
    "his wife",
    "wife",
    "wifewife wife\u200bwife wife\u00a0Anna",
    "hospitalhospital hospital",
    "Hospital " * 40,
    "HOSPITAL",
    "hOsPiTaL",
    "hoſpital Hoſpital HOſPITAL",  # long s: folds to s
    "\u212alinikum \u212aLINIKUM Klinikum",  # Kelvin sign: folds to k
    "clınıc Clİnİc CLİNİC clinic",  # dotless and dotted i
    "Нospital Ноspital hоspital",  # Cyrillic look-alikes: not the Latin word
    "Hos\u200bpital Saint\u00a0Mary Hospital",
    "İstanbul Hospital, İzmir Clinic",
    "Straße Hospital STRASSE HOSPITAL",
    "😀 his wife Anna 😀 Dr Lee, MD 😀 \U0001d400 works at Acme Steel Works",
    "\U0001f600" * 5 + " Mercy Hospital",
    "wife" + "\U0001f600" + "wife Anna",
    "Best,\nAnna\n-- Tamsin",
    "-- Lorcan",
    "\u2014 Will",
    "Hi Will,",
    "HI WILL,",
    "Regards\n\nTheodora",
    "[03:54] Peregrine: ok\n[03:55] Bo: fine",
    "Bo E. Tremblay <b@x.org>",
    "Contact: Norbert\nNext of kin:\tNorbert",
    "i'm Seraphina, aged 82. I\u2019M Ana. IT'S Ann.",
    "retired Acme Steel employee. Former ACME worker",
    "works at Acme Steel Works. WORKS AT ACME",
    "lives in Boston. moved to the city of Springfield",
    "in ",
    "from the town of ",
    "Ann Lee, MD",
    "ann lee (md)",
    "Lee County and MINER COUNTY and Saint Lucie Parish",
    "Acme Bank and Trust, ACME STEEL WORKS, Acme Co.",
    "a.b@x.org a%b%c@y.com x@y@z.com _a@b.co _%b@y.com .%c@x.org %%d@e.fr",
    "MRN-00123 A1B2C3D4 ab--1 12345678 a.b.c.d.e.f.g1",
    "Dr" + " " * 300 + "Smith",
    "a  shift at Acme Steel. Dear  Anna, retired \t Acme Steel employee. works\t\tat  ACME",
    "sent 0759 - Tamsin: ok\ncall 9) Anna: hi\n0 - Bo: yes",
    "Xx A" + "a" * 300 + ", MD",  # a name run longer than run_start's 256-character chunk
    "Zz L" + "e" * 300 + " County",
    "Xx Acm" + "e" * 300 + " Steel Works",
    "(& Acme Steel Works)\n& Sons Bank and Trust; 'O'Hara-Lee & Co.",
    "x" * 600 + " Hospital",
    "clinic",
    "end with hospital",
    "end with Dr",
    "Hospital at start",
)


@functools.cache
def _fuzz_words(pset: PatternSet) -> tuple[str, ...]:
    """The start words of a set's patterns, and some of their matches in the corpora (so fuzz
    built from them matches often, in every casing)."""
    words: set[str] = set()
    for p in pset.patterns:
        found = pattern_anchors(p)
        if found is not None:
            words |= {w.strip() for w in found[0] if w.strip()}
        seen = [m.group(0) for t in (*_texts("corpora"), *ADVERSARIAL) for m in p.finditer(t)]
        words |= set(random.Random(5).sample(seen, min(len(seen), 40)))
    return tuple(sorted(words))


def _recase(word: str, rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.3:
        return word
    if pick < 0.45:
        return word.upper()
    if pick < 0.55:
        return word.lower()
    if pick < 0.65:
        return word.title()
    if pick < 0.85:
        return "".join(c.swapcase() if rng.random() < 0.5 else c for c in word)
    # Unicode case oddities that re.IGNORECASE equates with ASCII letters
    odd = {"s": "ſ", "k": "\u212a", "i": "ı", "I": "İ", "K": "\u212a", "S": "ſ"}
    return "".join(odd.get(c, c) if rng.random() < 0.5 else c for c in word)


def _fuzz(words: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = [*words, *FILLERS]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 24)):
            parts.append(_recase(rng.choice(pool), rng))
            parts.append(rng.choice(SEPARATORS))
        if rng.random() < 0.5:
            parts.pop()  # end on a word
        out.append("".join(parts))
    return out


def _oddify(text: str, rng: random.Random) -> str:
    """Case oddities, look-alikes, zero-width and no-break spaces sprinkled over a note."""
    subs = {"s": "ſ", "k": "\u212a", "i": "ı", "I": "İ", "e": "е", "o": "о", " ": "\u00a0"}
    out = []
    for c in text:
        r = rng.random()
        if c in subs and r < 0.08:
            out.append(subs[c])
        elif r < 0.01:
            out.append(c + "\u200b")
        else:
            out.append(c)
    return "".join(out)


@functools.cache
def _gold() -> tuple:
    return tuple(doc for name in CORPORA for doc in load_corpus(name, 100, seed=5).gold)


def _texts(source: str, fuzz_words: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The texts of one source (``fuzz_words``: what fuzz is built from)."""
    return _source_texts(source, fuzz_words if source == "fuzz" else ())


@functools.cache
def _source_texts(source: str, fuzz_words: tuple[str, ...]) -> tuple[str, ...]:
    if source == "corpora":
        return tuple(doc.text for doc in _gold())
    if source == "windows":  # the 40 characters before each gold span, as roles and places scan them
        return tuple(dict.fromkeys(doc.text[max(0, s.start - 40) : s.start] for doc in _gold() for s in doc.spans))
    if source == "variants":
        rng = random.Random(5)
        notes = [doc.text for doc in _gold()][::4]
        windows = _texts("windows")[::5]
        return (
            *(v for t in notes for v in (t.upper(), t.lower(), t.swapcase(), _oddify(t, rng))),
            *(v for t in windows for v in (t.upper(), t.swapcase(), _oddify(t, rng))),
        )
    if source == "adversarial":
        return ADVERSARIAL
    if source == "fuzz":
        return tuple(_fuzz(list(fuzz_words), 300, seed=5))
    raise AssertionError(source)


@functools.cache
def _all_fuzz_words() -> tuple[str, ...]:
    """The fuzz words of every set, and some matches of the replayed and other shortcut patterns."""
    words = {w for pset in PATTERN_SETS.values() for w in _fuzz_words(pset)}
    rng = random.Random(5)
    for reference, _ in REPLAYS.values():
        seen = [m.group(0) for t in (*_texts("corpora"), *ADVERSARIAL) for m in reference(t)]
        words |= set(rng.sample(seen, min(len(seen), 40)))
    return tuple(sorted(words))


def test_every_recognizer_set_uses_the_anchored_path():
    """Each set has anchored patterns, so the equality tests below exercise the Aho-Corasick path."""
    for name, pset in PATTERN_SETS.items():
        assert any(pset._anchored), name
    # the patterns that must be anchored for the speed-up: relation words, head words, cue words
    for pset, rx in (
        (person_names._PATTERNS, person_names._RELATION),
        (person_names._PATTERNS, person_names._DASH_SIGNOFF),
        (person_roles._BEFORE, person_roles._STAFF_BEFORE),
        (places._CUES, places._CUE_BEFORE),
        (PATTERN_SETS["facilities"], facilities._TAIL_RE),
    ):
        assert pset._anchored[pset._slot[rx]], rx.pattern[:40]


# --- PatternSet groups --------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("set_name", sorted(PATTERN_SETS))
def test_pattern_set_scan_equals_finditer(set_name, source):
    pset = PATTERN_SETS[set_name]
    words = _fuzz_words(pset) if source == "fuzz" else ()
    found = 0
    for text in _texts(source, words):
        scan = pset.scan(text)
        for p in pset.patterns:
            expected = _keys(p.finditer(text))
            assert _keys(scan.finditer(p)) == expected, (set_name, p.pattern[:60], text[:200])
            assert _key(scan.search(p)) == (expected[0] if expected else None)
            found += len(expected)
    if source in ("windows", "fuzz"):  # roles and places patterns end with $: they match in windows
        assert found > 0, "no match at all: the comparison would be vacuous"


def test_every_pattern_of_every_set_matches_somewhere():
    """Across the corpora, windows and fuzz every pattern of every set matches somewhere (so no
    pattern's equality above is vacuous)."""
    missing = []
    for set_name, pset in PATTERN_SETS.items():
        texts = [
            *_texts("corpora"),
            *_texts("windows"),
            *_texts("fuzz", _fuzz_words(pset)),
            *ADVERSARIAL,
        ]
        for p in pset.patterns:
            if not any(p.search(t) for t in texts):
                missing.append((set_name, p.pattern[:60]))
    assert not missing


def test_pattern_outside_the_set_is_scanned_as_is():
    scan = person_roles._BEFORE.scan("his wife Anna, seen by Dr Lee")
    rx = re.compile(r"\b[A-Z][a-z]+")
    assert _keys(scan.finditer(rx)) == _keys(rx.finditer(scan.text))


# --- finditer_at replays ------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("replay", sorted(REPLAYS))
def test_recognizer_replays_equal_finditer(replay, source):
    reference, anchored = REPLAYS[replay]
    found = 0
    for text in _texts(source, _all_fuzz_words()):
        expected = _keys(reference(text))
        assert _keys(anchored(text)) == expected, (replay, text[:200])
        found += len(expected)
    if source in ("corpora", "fuzz"):
        assert found > 0, "no match at all: the comparison would be vacuous"


@pytest.mark.parametrize("source", SOURCES)
def test_identifier_candidates_keep_every_candidate_that_can_be_an_identifier(source):
    """``_digit_candidates`` tries ``_CANDIDATE`` only at runs holding a digit: every candidate it
    gives is a ``finditer`` match, every ``finditer`` match holding a digit is among them, and the
    ones it leaves out can never be kept (``_is_identifier`` of the trimmed token is False)."""
    found = 0
    for text in _texts(source, _all_fuzz_words()):
        reference = list(id_shapes._CANDIDATE.finditer(text))
        got = id_shapes._digit_candidates(text)
        ref_keys = _keys(reference)
        got_keys = _keys(got)
        got_set = set(got_keys)
        assert got_keys == [k for k in ref_keys if k in got_set], text[:200]  # a subsequence
        digit = [_key(m) for m in reference if any(c.isdigit() for c in m.group("id"))]
        assert [k for k in got_keys if k in set(digit)] == digit, text[:200]
        for m in reference:
            if _key(m) not in got_set:
                assert not id_shapes._is_identifier(id_shapes._trim(m.group("id"), m.end("id"))[0]), m.group("id")
        found += len(digit)
    if source in ("corpora", "fuzz"):
        assert found > 0


@pytest.mark.parametrize("source", SOURCES)
def test_capitalised_words_among_equal_the_filtered_finditer(source):
    rng = random.Random(5)
    found = 0
    for text in _texts(source, _all_fuzz_words()):
        candidates = sorted({w.casefold() for w in re.findall(r"[^\W\d_]{3,}", text)})
        words = {w for w in candidates if rng.random() < 0.5} | {"smith", "anna", "o'neil", "straße", "ſmith"}
        expected = [m for m in person_names._CAP_WORD.finditer(text) if m.group(0).casefold() in words]
        assert _keys(person_names._cap_words_among(text, words)) == _keys(expected), text[:200]
        found += len(expected)
    if source in ("corpora", "fuzz"):
        assert found > 0


def _needles(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[str, bool]]:
    surfaces = {text[a:b] for a, b in spans}
    surfaces |= {s.upper() for s in surfaces} | {s.lower() for s in surfaces}
    surfaces |= {"Smith", "smith", "ſmith", "\u212aelly", "İpek", "ipek", "Anna Lee", "  ", "x", "MRN-0012345"}
    return [(s, cs) for s in sorted(surfaces) for cs in (False, True)]


@pytest.mark.parametrize("source", SOURCES)
def test_propagation_finder_equals_the_regex_definition(source):
    """``propagate._Finder.occurrences`` (one Aho-Corasick pass over the folded note) gives the
    matches of ``_occurrences`` (one IGNORECASE or case-sensitive regex per needle)."""
    rng = random.Random(5)
    found = 0
    if source in ("corpora", "variants"):
        docs = _gold()[:: 3 if source == "corpora" else 12]
        cases = [(d.text, [(s.start, s.end) for s in d.spans]) for d in docs]
        if source == "variants":
            cases = [(v, spans) for t, spans in cases for v in (t.upper(), t.swapcase(), _oddify(t, rng))]
    else:
        texts = _texts(source, _all_fuzz_words())[:: 10 if source == "windows" else 1]
        cases = [(t, [m.span() for m in re.finditer(r"\w+(?: \w+)?", t)][:8]) for t in texts]
    for text, spans in cases:
        needles = _needles(text, spans)
        finder = _Finder(text, needles)
        for needle, cs in needles:
            expected = list(_occurrences(text, needle, cs))
            assert list(finder.occurrences(needle, cs)) == expected, (needle, cs, text[:200])
            found += len(expected)
    assert found > 0


# --- reading the parse tree ---------------------------------------------------------------------


@pytest.mark.parametrize("flags", [0, re.IGNORECASE])
def test_start_words_are_read_from_the_parse_tree(flags):
    def anchors(pattern: str) -> tuple[frozenset[str], bool] | None:
        return pattern_anchors(re.compile(pattern, flags))

    assert anchors(r"\b(?:Doctor|Nurse)\.? [A-Z]\w+") == (frozenset({"Doctor", "Nurse"}), False)
    assert anchors(r"(?<![\w'])(?P<head>hospital|clinic)(?![\w])") == (frozenset({"hospital", "clinic"}), False)
    assert anchors(r"(?:ab)?cd") == (frozenset({"abcd", "cd"}), False)  # optional part: with and without
    assert anchors(r"[Hh]ospital") == (frozenset({"Hospital", "hospital"}), False)  # short sets expanded
    assert anchors(r"(?m)^foo|bar") == (frozenset({"bar"}), True)  # a line start
    assert anchors(r"(?:^|\])[ \t]*\w+:") == (frozenset({"]"}), True)
    assert anchors(r"(?:Mr|Mrs)\.?[ \t]+[A-Z]") == (frozenset({"Mr"}), False)  # the common prefix
    assert anchors(r"@\w+") == (frozenset({"@"}), False)  # one character, but not a letter or digit
    assert anchors(r"(?:[0-2] -|[7-9]\))\w") == (frozenset({"0 -", "1 -", "2 -", "7)", "8)", "9)"}), False)
    assert anchors(r"ab[ \t]+cd") == (frozenset({"ab ", "ab\t"}), False)  # a repeat: its first character only
    found = anchors(r"ward\s+\d")  # \s expanded to every space character, the repeat taken once
    assert found is not None and not found[1]
    assert {"ward ", "ward\t", "ward\n", "ward\u00a0", "ward\u3000"} <= found[0]
    assert all(len(w) == 5 and w.startswith("ward") and w[4].isspace() for w in found[0])
    # Python's parser rewrites "Dr|Doctor" as "D(?:r|octor)": the group's alternatives are expanded
    assert anchors(r"\b(?:Dr|Doctor)\.? [A-Z]\w+") == (frozenset({"Dr", "Doctor"}), False)
    found = anchors(r"\b(?:MRN|MR|Med)\b")  # nested: M(?:R(?:N|)|ed) or similar
    assert found is not None and {"MR", "Med"} <= found[0] <= {"MRN", "MR", "Med"}
    # an alternative without a literal prefix leaves only the one letter before the group: rejected
    assert anchors(r"\bD(?:r|\w)x") is None


@pytest.mark.parametrize("flags", [0, re.IGNORECASE])
def test_hand_written_patterns_scan_like_finditer(flags):
    patterns = [
        re.compile(r"\b(?:Dr|Doctor)\.? [A-Z]\w+", flags),
        re.compile(r"\b(?:Doctor|Nurse)\.? [A-Z]\w+", flags),
        re.compile(r"(?:ab)?cd", flags),
        re.compile(r"(?m)^foo|bar", flags),
        re.compile(r"aba", flags),
        re.compile(r"\w+@\w+", flags),
    ]
    pset = PatternSet(patterns)
    texts = [
        "Dr Smith and Doctor Jones; dr. smith, DOCTOR JONES, Nurse Ratched, NURSE RATCHED",
        "abcd cd abcdcd xcd ABCD aBcD",
        "foo\nfoo bar\n foo barbar\r\nfoo",
        "ababababa ABABA",
        "a@b c@d @ e@",
        "",
        "ſ\u212aıİ Doctor Ǆ",
    ]
    for text in texts:
        scan = pset.scan(text)
        for p in patterns:
            assert _keys(scan.finditer(p)) == _keys(p.finditer(text)), (p.pattern, text)


def test_patterns_without_start_words_fall_back_to_a_full_scan():
    for pattern in (r"\w+@\w+", r"[A-Z]\w+", r"\s*foo", r"\d{3}", r"(?=\d)\d{3}", r"(?>ab)c"):
        assert pattern_anchors(re.compile(pattern)) is None, pattern
    rx = re.compile(r"(?:[A-Z]\w+ ){2}")
    pset = PatternSet([rx])
    assert pset._anchored == [False]
    text = "Ann Lee Bo Tremblay x Yy Zz "
    assert _keys(pset.scan(text).finditer(rx)) == _keys(rx.finditer(text))
    assert len(list(rx.finditer(text))) == 3


def test_one_letter_start_words_are_rejected():
    assert pattern_anchors(re.compile(r"x\w+")) is None
    assert pattern_anchors(re.compile(r"(?:a|bc)\d")) is None  # "a" is one letter, though "bc" is not
    assert pattern_anchors(re.compile(r"[0-9]{3}-")) is None  # ten one-digit words
    assert pattern_anchors(re.compile(r"(?i)(?:é|xy)\d")) is None
    assert pattern_anchors(re.compile(r"(?:bc|de)\d")) == (frozenset({"bc", "de"}), False)


def test_patterns_that_can_match_empty_are_not_anchored():
    assert pattern_anchors(re.compile(r"(?:foo)?")) is None
    assert pattern_anchors(re.compile(r"\bfoo|")) is None


def test_required_characters_skip_the_scan_only_when_a_text_lacks_them():
    email = re.compile(r"\w+@\w+")
    assert required_chars(email) == frozenset("@")
    pset = PatternSet([email])
    assert pset._anchored == [False]
    assert list(pset.scan("no at sign in here, only words").finditer(email)) == []
    text = "mail ann@example or bo@mail; not @ alone"
    assert _keys(pset.scan(text).finditer(email)) == _keys(email.finditer(text))
    assert len(_keys(email.finditer(text))) == 2

    # literals under IGNORECASE, in lookarounds, in optional parts or alternatives are not required
    cases = {
        r"(?i)\w*x@y": ("AX@Y", frozenset()),  # (?i) covers "@" too: only case-sensitive literals count
        r"\w+(?=@)": ("abc@", frozenset()),
        r"\w+(?:@x)?\w": ("ab", frozenset()),
        r"\w(?:@|#)\w": ("a#b", frozenset()),
        r"\w+(?:-\w+)+": ("a-b", frozenset("-")),
        r"\w+(?i:q)\w": ("aQb", frozenset()),
    }
    for pattern, (text, required) in cases.items():
        rx = re.compile(pattern)
        assert required_chars(rx) == required, pattern
        assert pattern_anchors(rx) is None, pattern
        expected = _keys(rx.finditer(text))
        assert expected, pattern
        assert _keys(PatternSet([rx]).scan(text).finditer(rx)) == expected, pattern


def test_finditer_at_replays_finditer_order_and_non_overlap():
    rx = re.compile("aba")
    text = "ababababa"
    expected = _keys(rx.finditer(text))
    assert expected == _keys(finditer_at(rx, text, [0, 2, 4, 6]))  # overlapping candidates skipped
    assert expected == _keys(finditer_at(rx, text, range(len(text))))  # extra positions are fine
    assert [m.span() for m in finditer_at(rx, text, [2, 6])] == [(2, 5), (6, 9)]  # only where told
    assert list(finditer_at(rx, "", [])) == []
    # lookbehind and ^ see the text before the position, as a scan from 0 does ("cd" at 2 follows "b")
    word = re.compile(r"(?<![\w])cd")
    assert [m.span() for m in finditer_at(word, "abcd cd", [2, 5])] == [(5, 7)]
    line = re.compile(r"^x", re.MULTILINE)
    assert [m.start() for m in finditer_at(line, "ax\nx", [1, 3])] == [3]


def test_run_start_and_run_starts():
    assert run_start("xx  abc", 7, "abc ") == 2
    assert run_start("abc", 3, "abc") == 0
    assert run_start("abc#", 4, "abc") == 4  # no run ends there
    assert run_start("#" + "a" * 1000, 1001, "a") == 1  # runs longer than one 256-character chunk
    assert run_start("a" * 600, 600, "a") == 0
    assert run_start("#" + "a" * 256, 257, "a") == 1  # a run exactly one chunk long
    for n in range(250, 520, 7):
        text = "#" + "ab" * n
        assert run_start(text, len(text), "ab") == 1
    text = "Dr Ann O'Neil-Lee, MD; x Bo Li (RN)"
    tails = [text.index(","), text.index("(")]
    word_start = re.compile(r"(?<=[ \t'\u2019-])[A-Za-z]")
    letters = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    starts = run_starts(text, tails, person_names._NAME_RUN, word_start, letters)
    assert starts == sorted(starts)
    assert [text[s:].split()[0] for s in starts] == ["Dr", "Ann", "O'Neil-Lee,", "Neil-Lee,", "Lee,", "x", "Bo", "Li"]


# --- refold -------------------------------------------------------------------------------------


@functools.cache
def _fold_sample() -> tuple[str, ...]:
    """Latin-1, Latin Extended-A and -B, IPA, Greek, Cyrillic, every cased BMP character and the odd ones."""
    sample = [chr(c) for c in range(0x0000, 0x0530)]
    sample += [chr(c) for c in range(0x10000) if chr(c).lower() != chr(c) or chr(c).upper() != chr(c)]
    sample += list(ODD_CHARS) + ["\u1e9e", "\u0130", "\u0131", "\u017f", "\u1c80", "\u1c88", "\uab70", "\U00010400"]
    sample += ["\U00010428", "\U0001e900", "\U0001e922", "\u00a0", "\u200b", "\ufeff", "\U0001f600"]
    return tuple(c for c in dict.fromkeys(sample) if not 0xD800 <= ord(c) <= 0xDFFF)


def test_refold_agrees_with_ignorecase_for_every_character_of_the_sample():
    """``re_fold(a) == re_fold(b)`` exactly when ``a`` matches ``b`` under ``re.IGNORECASE``
    (the module docstring's promise), checked for every pair of the sample."""
    sample = _fold_sample()
    haystack = "".join(sample)
    folds = [re_fold(c) for c in sample]
    by_fold: dict[str, set[int]] = defaultdict(set)
    for i, f in enumerate(folds):
        by_fold[f].add(i)
    wrong = []
    for a, fa in zip(sample, folds, strict=True):
        matched = {m.start() for m in re.finditer(re.escape(a), haystack, re.IGNORECASE)}
        if matched != by_fold[fa]:
            wrong.append((a, sorted(haystack[i] for i in matched ^ by_fold[fa])[:5]))
    assert not wrong


def test_refold_keeps_the_length_and_its_ascii_fast_path_agrees_with_the_per_character_fold():
    sample = _fold_sample()
    for c in map(chr, range(128)):
        assert re_fold(c) == fold_char(c) == c.lower()
    for c in sample:
        assert len(re_fold(c)) == 1 and re_fold(c) == fold_char(c)
    rng = random.Random(5)
    pool = [*map(chr, range(32, 127)), *sample[:2000:7], *ODD_CHARS, "\U0001f600"]
    for _ in range(500):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 40)))
        folded = re_fold(text)
        assert len(folded) == len(text)
        assert folded == "".join(map(fold_char, text))


def test_refold_matches_multi_character_strings_as_ignorecase_does():
    rng = random.Random(5)
    sample = _fold_sample()
    classes: dict[str, list[str]] = defaultdict(list)
    for c in sample:
        classes[re_fold(c)].append(c)
    agree = differ = 0
    for _ in range(600):
        word = "".join(rng.choice(sample) for _ in range(rng.randint(1, 8)))
        # each character replaced by one of its class (the same under IGNORECASE) or, now and then, any
        other = "".join(rng.choice(classes[re_fold(c)]) if rng.random() < 0.9 else rng.choice(sample) for c in word)
        same = re.fullmatch(re.escape(word), other, re.IGNORECASE) is not None
        assert same == (re_fold(word) == re_fold(other)), (word, other)
        agree += same
        differ += not same
    assert agree > 100 and differ > 100
    assert re_fold("ſ\u212aıİ") == "skii"
    assert re_fold("HOſPITAL Clİnİc") == "hospital clinic"
    assert re_fold("Straße") == "straße"  # one character each: ß does not become "ss"


def test_the_largest_notes_fold_in_one_call():
    """Long mixed texts: the split into ASCII and non-ASCII runs keeps every character in place."""
    text = ("Ångström ſt. \u212aelvin İpek " * 500) + "end"
    assert re_fold(text) == "".join(map(fold_char, text))
