"""The regex layer (``tide.regex``): dates, phones, e-mail, URLs/IPs, IDs, ages, addresses, titled names.

One pass per pattern over the text (see "Fast path" below); each match is validated (calendar dates, phone shapes, age
range), scored (higher when a context word precedes it), and the candidates are resolved
(longest wins) so the layer itself returns non-overlapping spans.

Context-dependent DATE fragments ("3/4", a bare year) are accepted either with a context word
("on 3/4") or when they continue a date already found ("3/2 - 3/4", "2015, 2017 and 2019"):
the ``chain`` pass runs to a fixed point.

Fast path (``RegexRecognizer(fast=True)``, the default): each pattern is entered only where it
can match.  Patterns that begin with literal words (``\\b(?i:MRN|Med Rec...)``, the anchors of
windowed patterns) are tried only where those words occur, all found in one Aho-Corasick pass
per note (:mod:`tide_core.text.anchored`); the others through a scan that ``re`` runs at C speed
(their FIRST-set prefilter, :mod:`tide_core.recognizers.regex_prefilter`).  ``finditer`` is
replayed exactly from those positions, so the fast path returns the very matches of the
reference path (``fast=False``), and validators and context checks run on the same matches only
(``tests/recognizers/test_regex_fast_path.py``).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tide_core.errors import ConfigError
from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.iban import iban_checksum_ok, iban_shape
from tide_core.recognizers.patterns import _NAME_LIKE_STATES, DEFAULT_PATTERNS, STATE_NAMES, STREET_SUFFIX, PhiPattern
from tide_core.recognizers.regex_prefilter import fast_finditer, prefilter_regex
from tide_core.spans import RecognizerResult, Span
from tide_core.steps.resolve import ResolutionPolicy, resolve_spans
from tide_core.text.anchored import PatternScan, PatternSet
from tide_core.types import LABELS

_STATE_NAME_SET = frozenset(STATE_NAMES)
# Between chained dates: a range or list word, or a table cell border ("Dec 26\t12/29", "2/28 | Mar 3").
_CHAIN_GAP = re.compile(r"\s*(?:-|–|—|to|through|thru|and|or|until|,|;|&|\||\t)\s*(?:(?:and|then)\s+)?", re.I)


# ------------------------------------------------------------------ validators
def _valid_mdy(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """Month-first ("09/30/1958") or day-first ("23/06/1967", "21.11.2018"): either reading will do."""
    digits = re.findall(r"\d+", text[s:e])
    a, b = int(digits[0]), int(digits[1])
    return _day_fits(a, b) or _day_fits(b, a)


def _valid_ymd(m: re.Match[str], s: int, e: int, text: str) -> bool:
    digits = re.findall(r"\d+", text[s:e])
    return _day_fits(int(digits[1]), int(digits[2]))


def _day_fits(month: int, day: int) -> bool:
    if not 1 <= month <= 12:
        return False
    return 1 <= day <= (29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)


def _valid_year_range(m: re.Match[str], s: int, e: int, text: str) -> bool:
    a, b = int(m.group("phi")), int(m.group("phi2"))
    return a < b <= a + 100


def _valid_phone(m: re.Match[str], s: int, e: int, text: str) -> bool:
    value = text[s:e]
    core = re.split(r"(?i)x|ext", value)[0]
    digits = re.sub(r"\D", "", core)
    if len(digits) == 11 and not digits.startswith("1"):
        return False
    if value.count("(") != value.count(")"):
        return False
    return len(digits) in (10, 11)


def _valid_phone_international(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """E.164: at most 15 digits after the "+"/"00" (the "(0)" trunk digit not counted), at least 8."""
    value = text[s:e].replace("(0)", "")
    digits = re.sub(r"\D", "", value)
    if value.startswith("00"):
        digits = digits[2:]
    return 8 <= len(digits) <= 15


def _valid_phone_national(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """A national number with its trunk "0": 9 to 11 digits in all ("02 7623 0792", "06 77 25 84 90")."""
    return 9 <= len(re.sub(r"\D", "", text[s:e])) <= 11


def _valid_ipv6(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """An address Python's ``ipaddress`` accepts, with at least three non-empty groups."""
    value = text[s:e]
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return sum(1 for g in value.split(":") if g) >= 3


def _valid_iban(m: re.Match[str], s: int, e: int, text: str) -> bool:
    return iban_shape(text[s:e]) and iban_checksum_ok(text[s:e])


def _valid_iban_shape(m: re.Match[str], s: int, e: int, text: str) -> bool:
    return iban_shape(text[s:e])


def _valid_ssn(m: re.Match[str], s: int, e: int, text: str) -> bool:
    area, group, serial = text[s:e].split("-")
    return area != "000" and group != "00" and serial != "0000"


def _valid_month_day(m: re.Match[str], s: int, e: int, text: str) -> bool:
    md = re.search(r"(\d{1,2})/(\d{1,2})", text[s:e])
    return md is not None and _day_fits(int(md.group(1)), int(md.group(2)))


def _valid_month_late_day(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """m/d with a day of 13 or more: no score, fraction or ratio is written that way ("4/10 pain",
    "5/5 strength", "2/6 murmur" all have small second numbers)."""
    md = re.search(r"(\d{1,2})/(\d{1,2})", text[s:e])
    return md is not None and int(md.group(2)) >= 13 and _day_fits(int(md.group(1)), int(md.group(2)))


def _valid_id_token(m: re.Match[str], s: int, e: int, text: str) -> bool:
    token = text[s:e]
    if sum(c.isdigit() for c in token) < 2:
        return False
    # "Nampa, ID 83658": Idaho and a ZIP code, not an identifier.
    if _ZIP.fullmatch(token) and re.search(r"(?<![A-Za-z])ID[ ,]*$", text[max(0, s - 6) : s]):
        return False
    return True


_ZIP = re.compile(r"\d{5}(?:-\d{4})?")
_COMMON_UPPER = frozenset(
    """OR ED ER IV PO IM SQ SC PR NG OT PT RT ICU CCU PACU MICU SICU NICU BP HR RR IN ON AT TO
AM PM MD DO RN NP PA NO OK US UK HX DX RX TX SX FX CT MR XR EKG ECG EEG EMG MRI CBC BMP CMP LFT ABG UA UDS HIV HCV HBV
COPD CHF CKD ESRD DM HTN CAD PE DVT GI GU ENT OB GYN ALS MS CVA TIA SOB CP LOC AMA DNR DNI POA SW ID IS IT AS BE
WE HE ME MY BY UP SO IF OF AN ALL AND THE FOR ARE BUT NOT YOU HAS HAD WAS""".split()
)


def _valid_initials(m: re.Match[str], s: int, e: int, text: str) -> bool:
    return text[s:e] not in _COMMON_UPPER


def _valid_local_phone(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """A seven-digit number, not a round range such as "250-1000"."""
    head, tail = text[s:e].split("-")
    return not (head.endswith("0") and tail.endswith("00"))


def _valid_two_tokens(m: re.Match[str], s: int, e: int, text: str) -> bool:
    value = text[s:e]
    return "," in value or len(value.split()) >= 2


_AFTER_STREET = re.compile(r"(?:" + STREET_SUFFIX + r"|Apt|Suite|Ste|Unit|Box|Floor|Fl)\.?, $")
_NAME_COMMA_BEFORE = re.compile(r"(?:^|[^\w,.] ?)[A-Z][A-Za-z'-]+, $")


def _valid_city_not_after_name(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """Reject "Berry, Krzysztof, MA": a city right after "Word, " is usually a "Last, First" name."""
    start = m.start()  # judge the whole match, whichever group (city or state) is being checked
    before = text[max(0, start - 30) : start]
    return not _NAME_COMMA_BEFORE.search(before) or bool(_AFTER_STREET.search(before))


_GENERIC_FACILITY_WORDS = frozenset(
    """
pain wound diabetes cardiology oncology neurology surgery surgical urgent walk-in anticoagulation infusion
dialysis sleep heart eye cancer family primary care imaging health medical outpatient inpatient women's
children's memory lipid transplant travel vaccine allergy asthma general community university regional
county city state the our this that st saint hospital clinic center endocrinology dermatology urology
pulmonology gastroenterology nephrology rheumatology orthopedic orthopedics orthopaedics pediatric pediatrics
psychiatry behavioral mental rehabilitation rehab physical therapy hand spine sports breast vascular
fertility obstetrics gynecology ob/gyn gi ent hiv hepatology liver kidney lung geriatric geriatrics
palliative hospice nursing skilled memorial emergency trauma burn stroke epilepsy headache weight
support study group partners therapy primary consult consulting treatment tumor board research peer
""".split()
)


def _valid_specific_facility(m: re.Match[str], s: int, e: int, text: str) -> bool:
    """ "Pain Clinic", "University Hospital": generic words only are a service, not a named facility."""
    words = re.findall(r"[\w'/-]+", text[s:e].lower())
    return any(w not in _GENERIC_FACILITY_WORDS and w not in ("of", "and", "de", "&") for w in words)


def _valid_not_state_word(m: re.Match[str], s: int, e: int, text: str) -> bool:
    return text[s:e] not in _STATE_NAME_SET


def _valid_age(m: re.Match[str], s: int, e: int, text: str) -> bool:
    return 0 <= int(text[s:e]) <= 125


def _valid_state_name(m: re.Match[str], s: int, e: int, text: str) -> bool:
    # "New York Heart Association", "Idaho Falls", "Virginia Smith": a capitalised word right after
    # the state name makes it part of a longer name; leave that to the other recognizers.
    if re.match(r" [A-Z][a-z]", text[e : e + 3]):
        return False
    # "Washington" / "Georgia" right after a capitalised word: a person ("George Washington").
    return re.search(r"[A-Z][a-z]+ $", text[max(0, s - 20) : s]) is None or text[s:e] not in _NAME_LIKE_STATES


VALIDATORS: dict[str, Callable[[re.Match[str], int, int, str], bool]] = {
    "date_mdy": _valid_mdy,
    "date_ymd": _valid_ymd,
    "year_range": _valid_year_range,
    "phone": _valid_phone,
    "phone_international": _valid_phone_international,
    "phone_national": _valid_phone_national,
    "ssn": _valid_ssn,
    "ipv6": _valid_ipv6,
    "iban": _valid_iban,
    "iban_shape": _valid_iban_shape,
    "id_token": _valid_id_token,
    "age": _valid_age,
    "state_name": _valid_state_name,
    "month_day": _valid_month_day,
    "month_late_day": _valid_month_late_day,
    "initials": _valid_initials,
    "local_phone": _valid_local_phone,
    "two_tokens": _valid_two_tokens,
    "city_not_after_name": _valid_city_not_after_name,
    "specific_facility": _valid_specific_facility,
    "not_state_word": _valid_not_state_word,
}


#: Compiled pattern tables, by (patterns, fast path): a run creates regex recognizers per step,
#: stage and fingerprint, and compiling some hundred large patterns and their prefilters costs
#: seconds each time; what is compiled is only read afterwards.  A few entries per process (one
#: per distinct ``disable``/``labels`` choice).
_LOADED: dict[tuple[tuple[PhiPattern, ...], bool], tuple[list[_Compiled], PatternSet | None]] = {}


@dataclass
class _Compiled:
    pattern: PhiPattern
    regex: re.Pattern[str]
    context: re.Pattern[str] | None
    exclude_after: re.Pattern[str] | None
    exclude_before: re.Pattern[str] | None
    validator: Callable[[re.Match[str], int, int, str], bool] | None
    anchor: re.Pattern[str] | None = None
    fast: re.Pattern[str] | None = None  # prefilter of ``regex`` (fast path)
    anchor_fast: re.Pattern[str] | None = None  # prefilter of ``anchor``
    use_fast: bool = False

    def _scan(
        self,
        regex: re.Pattern[str],
        prefilter: re.Pattern[str] | None,
        text: str,
        lo: int = 0,
        hi: int | None = None,
        words: PatternScan | None = None,
    ) -> Iterator[re.Match[str]]:
        """``regex.finditer(text, lo, hi)``: on the fast path, at the leading words the note's
        one-pass scan found (whole text only) or through the prefilter; plain ``re`` on the
        reference path (each pattern tried at every position)."""
        if not self.use_fast:
            return regex.finditer(text, lo, len(text) if hi is None else hi)
        if words is not None and lo == 0 and hi is None and words.covers(regex):
            return words.finditer(regex)
        return fast_finditer(regex, prefilter, text, lo, hi)

    def matches(self, text: str, words: PatternScan | None = None) -> Iterator[re.Match[str]]:
        """All matches of the pattern; anchored patterns only search windows around their anchor."""
        if self.anchor is None:
            yield from self._scan(self.regex, self.fast, text, words=words)
            return
        before, after = self.pattern.anchor_window
        windows: list[list[int]] = []
        for a in self._scan(self.anchor, self.anchor_fast, text, words=words):
            lo, hi = max(0, a.start() - before), min(len(text), a.end() + after)
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], hi)
            else:
                windows.append([lo, hi])
        seen: set[tuple[int, int]] = set()
        for lo, hi in windows:
            for m in self._scan(self.regex, self.fast, text, lo, hi):
                if m.span() not in seen:
                    seen.add(m.span())
                    yield m


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    label: str
    score: float
    pattern: str


class RegexRecognizer(TideRecognizer):
    """Rule-based PHI patterns; see ``tide_core.recognizers.patterns`` for the table.

    ``labels`` restricts the layer to some labels; ``disable`` drops patterns by name;
    ``patterns`` replaces the whole table (``DEFAULT_PATTERNS + extra`` to extend it).
    ``fast=False`` selects the reference scan (same spans, slower; kept for tests and benchmarks).
    """

    name = "tide.regex"
    version = "4"

    def __init__(
        self,
        patterns: Sequence[PhiPattern] | None = None,
        labels: Sequence[str] | None = None,
        disable: Sequence[str] = (),
        min_score: float = 0.0,
        fast: bool = True,
    ):
        self.fast = bool(fast)
        table = tuple(patterns) if patterns is not None else DEFAULT_PATTERNS
        known = {p.name for p in table}
        missing = sorted(set(disable) - known)
        if missing:
            raise ConfigError(
                "E201",
                f"tide.regex: unknown pattern name(s) in disable: {', '.join(missing)}",
                hint=f"pattern names: {', '.join(sorted(known))}",
            )
        for lab in labels or ():
            if lab not in LABELS:
                raise ConfigError("E202", f"tide.regex: unknown label {lab!r}", hint=f"use one of {', '.join(LABELS)}")
        self._labels = tuple(labels) if labels else None
        self._patterns = tuple(
            p for p in table if p.name not in set(disable) and (self._labels is None or p.labels() & set(self._labels))
        )
        self.min_score = float(min_score)
        self.supported_entities = sorted({lab for p in self._patterns for lab in p.labels()})
        self._compiled: list[_Compiled] | None = None
        self._words: PatternSet | None = None

    # ------------------------------------------------------------------ setup
    def load(self) -> None:
        if self._compiled is not None:
            return
        key = (self._patterns, self.fast)
        hit = _LOADED.get(key)
        if hit is None:
            hit = _LOADED[key] = self._compile()
        self._compiled, self._words = hit

    def _compile(self) -> tuple[list[_Compiled], PatternSet | None]:
        """Compile the patterns, their prefilters and the anchor scan (see :data:`_LOADED`)."""
        compiled = []
        for p in self._patterns:
            try:
                rx = re.compile(p.regex, re.IGNORECASE if p.case_insensitive else 0)
                ctx = None
                if p.context:
                    words = "|".join(re.escape(w) for w in sorted(p.context, key=lambda w: (-len(w), w)))
                    ctx = re.compile(r"(?:^|(?<=[^\w]))(?:" + words + r")(?=[^\w]|$)", re.IGNORECASE)
                after = re.compile(p.exclude_after) if p.exclude_after else None
                before = re.compile(p.exclude_before) if p.exclude_before else None
            except re.error as exc:
                raise ConfigError(
                    "E203",
                    f"tide.regex: pattern {p.name!r} does not compile ({exc.msg} at {exc.pos})",
                    hint="fix the regular expression in the pattern table",
                ) from None
            if p.validator and p.validator not in VALIDATORS:
                raise ConfigError(
                    "E204",
                    f"tide.regex: pattern {p.name!r} names unknown validator {p.validator!r}",
                    hint=f"validators: {', '.join(sorted(VALIDATORS))}",
                )
            anchor = re.compile(p.anchor) if p.anchor else None
            fast = anchor_fast = None
            if self.fast:
                fast = prefilter_regex(p.regex, re.IGNORECASE if p.case_insensitive else 0)
                anchor_fast = prefilter_regex(p.anchor) if p.anchor else None
            compiled.append(
                _Compiled(
                    p,
                    rx,
                    ctx,
                    after,
                    before,
                    VALIDATORS.get(p.validator) if p.validator else None,
                    anchor,
                    fast,
                    anchor_fast,
                    self.fast,
                )
            )
        # one Aho-Corasick pass per note finds the leading words of every whole-text scan that has
        # them (``PatternScan.covers``); the others keep their FIRST-set prefilter
        whole = [c.anchor if c.anchor is not None else c.regex for c in compiled]
        return compiled, PatternSet(whole) if self.fast and whole else None

    def config(self) -> dict[str, Any]:
        table = json.dumps([asdict(p) for p in self._patterns], sort_keys=True)
        return {
            "patterns": hashlib.sha256(table.encode()).hexdigest()[:16],
            "n_patterns": len(self._patterns),
            "labels": list(self._labels) if self._labels else None,
            "min_score": self.min_score,
        }

    @property
    def patterns(self) -> tuple[PhiPattern, ...]:
        return self._patterns

    # ------------------------------------------------------------------ matching
    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None
    ) -> list[RecognizerResult]:
        self.load()
        wanted = set(entities) if entities else None
        accepted: list[_Candidate] = []
        words = self._words.scan(text) if self._words is not None else None
        deferred: list[_Candidate] = []
        for c in self._compiled:  # type: ignore[union-attr]
            p = c.pattern
            if wanted is not None and not (p.labels() & wanted):
                continue
            for m in c.matches(text, words):
                for group, label in p.span_groups():
                    if wanted is not None and label not in wanted:
                        continue
                    s, e = m.span(group)
                    if s < 0 or e <= s:
                        continue
                    if p.trim:
                        while e > s and text[e - 1] in p.trim:
                            e -= 1
                        if e <= s:
                            continue
                    if c.validator is not None and not c.validator(m, s, e, text):
                        continue
                    if c.exclude_after is not None and c.exclude_after.match(text, e):
                        continue
                    if c.exclude_before is not None and c.exclude_before.search(text[max(0, s - 40) : s]):
                        continue
                    has_ctx = bool(c.context and c.context.search(text, max(0, s - p.window), s))
                    score = p.context_score if (has_ctx and p.context_score is not None) else p.score
                    cand = _Candidate(s, e, label, float(score), p.name)
                    if p.requires_context and not has_ctx:
                        if p.chain:
                            deferred.append(cand)
                        continue
                    accepted.append(cand)
        if deferred:
            accepted.extend(self._chain(text, accepted, deferred))
        results = [
            RecognizerResult(
                c.label, c.start, c.end, c.score, {"recognizer_name": self.qualified_name, "pattern": c.pattern}
            )
            for c in accepted
            if c.score >= self.min_score
        ]
        return self._resolve(results)

    @staticmethod
    def _chain(text: str, accepted: list[_Candidate], deferred: list[_Candidate]) -> list[_Candidate]:
        """Accept date fragments that directly continue an accepted DATE ("3/2-3/4", "2015 and 2017")."""
        ends = {c.end for c in accepted if c.label == "DATE"}
        starts = {c.start for c in accepted if c.label == "DATE"}
        added: list[_Candidate] = []
        pending = sorted(set(deferred), key=lambda c: c.start)
        changed = True
        while changed and pending:
            changed = False
            rest = []
            for c in pending:
                hit = False
                for end in ends:
                    if end <= c.start <= end + 16 and _CHAIN_GAP.fullmatch(text, end, c.start) is not None:
                        hit = True
                        break
                if not hit:  # "between 11/28 and 12/03/2018": the fragment comes first
                    for start in starts:
                        if c.end <= start <= c.end + 16 and _CHAIN_GAP.fullmatch(text, c.end, start) is not None:
                            hit = True
                            break
                if hit:
                    added.append(_Candidate(c.start, c.end, c.label, max(c.score, 0.7), c.pattern))
                    ends.add(c.end)
                    starts.add(c.start)
                    changed = True
                else:
                    rest.append(c)
            pending = rest
        return added

    def _resolve(self, results: list[RecognizerResult]) -> list[RecognizerResult]:
        spans = [Span("_", r.start, r.end, r.entity_type, r.score, r.recognition_metadata["pattern"]) for r in results]
        kept = resolve_spans(spans, _LAYER_POLICY)
        return [
            RecognizerResult(
                s.label, s.start, s.end, s.score, {"recognizer_name": self.qualified_name, "pattern": s.recognizer}
            )
            for s in kept
        ]


_LAYER_POLICY = ResolutionPolicy(merge_same_label_overlaps=False)
