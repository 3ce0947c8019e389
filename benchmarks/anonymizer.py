"""Structural checks and collision rates of the keyed anonymizer (the paper's Table 2, measured).

``python -m benchmarks.anonymizer [--n 2000] [--seed 7]`` prints a Markdown table:
determinism, cross-note consistency, remapping under a rotated key and interval preservation on
seeded synthetic stress sets (no PHI), collision rates for exhaustive 3/4/5-digit ID domains
(with the paper's pad-to-6-and-truncate construction measured beside ours) and for 2,000 and
20,000 distinct names, and throughput.  The stress generators are reused by the tests.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from ff3 import FF3Cipher

from tide_core.anonymize import identifiers, small_domain
from tide_core.anonymize.dates import date_part, parse_date
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.identifiers import anonymize_identifier
from tide_core.anonymize.keys import KeyRing, keyring_for_tests
from tide_core.anonymize.names import surrogate_name, surrogate_token
from tide_core.anonymize.surrogates import load_list
from tide_core.spans import Note, Span

if TYPE_CHECKING:
    from tide_core.anonymize.engine import Anonymizer

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
SUFFIXES = (
    "Street",
    "St",
    "St.",
    "Avenue",
    "Ave",
    "Road",
    "Rd.",
    "Boulevard",
    "Blvd",
    "Lane",
    "Ln",
    "Drive",
    "Dr",
    "Court",
    "Way",
    "Place",
    "Terrace",
    "Circle",
    "Parkway",
)

# ---- seeded stress generators -------------------------------------------------------------


def _pronounceable(rng: random.Random, lo: int = 4, hi: int = 9) -> str:
    cons, vow = "bcdfghjklmnprstvwz", "aeiou"
    n = rng.randint(lo, hi)
    w = "".join(rng.choice(cons if i % 2 == 0 else vow) for i in range(n))
    return w.capitalize()


def _case(rng: random.Random, s: str) -> str:
    r = rng.random()
    return s.upper() if r < 0.15 else s.lower() if r < 0.22 else s


def stress_names(rng: random.Random, n: int, unlisted: float = 0.3) -> list[str]:
    """Distinct person-name spans in many shapes (Title, UPPER, "Last, First", initials, hyphens)."""
    first, last = load_list("first_names").entries, load_list("last_names").entries
    out: dict[str, str] = {}
    while len(out) < n:
        f = _pronounceable(rng) if rng.random() < unlisted else rng.choice(first)
        l_ = _pronounceable(rng) if rng.random() < unlisted else rng.choice(last)
        shape = rng.random()
        if shape < 0.45:
            s = f"{f} {l_}"
        elif shape < 0.6:
            s = f"{l_}, {f}"
        elif shape < 0.72:
            s = f"{f} {rng.choice(string.ascii_uppercase)}. {l_}"
        elif shape < 0.82:
            s = f"{f} {l_}-{rng.choice(last)}"
        elif shape < 0.9:
            s = f"{f[0]}. {l_}"
        else:
            s = f"{f}-{rng.choice(first)} {l_}"
        s = _case(rng, s)
        out.setdefault(s.casefold(), s)
    return list(out.values())


def full_name_set(rng: random.Random, n: int, unlisted: float = 0.5) -> list[str]:
    """``n`` distinct "First Last" names (half the tokens outside the surrogate lists)."""
    first, last = load_list("first_names").entries, load_list("last_names").entries
    seen: dict[str, str] = {}
    while len(seen) < n:
        f = _pronounceable(rng) if rng.random() < unlisted else rng.choice(first)
        l_ = _pronounceable(rng) if rng.random() < unlisted else rng.choice(last)
        seen.setdefault(f"{f} {l_}".casefold(), f"{f} {l_}")
    return list(seen.values())


def _ord(d: int) -> str:
    return "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


DATE_FORMATS: dict[str, Callable[[date], str]] = {
    "m/d/yyyy": lambda d: f"{d.month}/{d.day}/{d.year}",
    "mm/dd/yyyy": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",
    "mm/dd/yy": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",
    "m/d/yy": lambda d: f"{d.month}/{d.day}/{d.year % 100:02d}",
    "mm-dd-yyyy": lambda d: f"{d.month:02d}-{d.day:02d}-{d.year}",
    "yyyy-mm-dd": lambda d: d.isoformat(),
    "yyyy/mm/dd": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
    "yyyymmdd": lambda d: d.strftime("%Y%m%d"),
    "Month d, yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
    "Mon d yyyy": lambda d: f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}",
    "Mon. d, yyyy": lambda d: f"{MONTHS[d.month - 1][:3]}. {d.day}, {d.year}",
    "d Month yyyy": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",
    "dth of Month, yyyy": lambda d: f"{d.day}{_ord(d.day)} of {MONTHS[d.month - 1]}, {d.year}",
    "Month dth, yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.day}{_ord(d.day)}, {d.year}",
    "dd-MON-yyyy": lambda d: f"{d.day:02d}-{MONTHS[d.month - 1][:3].upper()}-{d.year}",
    "MONTH D, YYYY": lambda d: f"{MONTHS[d.month - 1].upper()} {d.day}, {d.year}",
    "mm/dd/yyyy hh:mm": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year} 14:30",
    "iso T time": lambda d: f"{d.isoformat()}T03:15:00",
    "Weekday, Month d, yyyy": lambda d: f"{d.strftime('%A')}, {MONTHS[d.month - 1]} {d.day}, {d.year}",
}
PARTIAL_FORMATS: dict[str, Callable[[date], str]] = {
    "Month dth": lambda d: f"{MONTHS[d.month - 1]} {d.day}{_ord(d.day)}",
    "m/d": lambda d: f"{d.month}/{d.day}",
    "d Mon": lambda d: f"{d.day} {MONTHS[d.month - 1][:3]}",
    "Month yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.year}",
    "mm/yyyy": lambda d: f"{d.month:02d}/{d.year}",
    "yyyy": lambda d: str(d.year),
}


def stress_dates(rng: random.Random, n: int) -> list[tuple[str, date, str, str]]:
    """(patient_id, true date, format name, text) for full dates 1975..2025 in every format."""
    out = []
    names = list(DATE_FORMATS)
    for i in range(n):
        d = date(1975, 1, 1) + timedelta(days=rng.randrange(365 * 50))
        fmt = names[i % len(names)]
        out.append((f"p{rng.randrange(n // 4 + 1)}", d, fmt, DATE_FORMATS[fmt](d)))
    return out


ID_SHAPES = (
    "ddd",
    "dddd",
    "ddddd",
    "dddddd",
    "dddddddd",
    "dddddddddd",
    "ddd-dd-dddd",
    "uu-dd-dddd",
    "udddddd",
    "uuudddd",
    "uuuu",
    "ldld",
    "dd-ddddddd",
    "uuu-ddd-uuu",
    "ddddd-dddd",
    "d" * 17,
    "d" * 60,
    "ul" * 20,
    "uddduuddd",
    "dddd dddd dddd dddd",
    "uu/dddd",
    "dd.ddd.ddd",
)


def render_shape(rng: random.Random, shape: str) -> str:
    return "".join(
        rng.choice(string.digits)
        if c == "d"
        else rng.choice(string.ascii_uppercase)
        if c == "u"
        else rng.choice(string.ascii_lowercase)
        if c == "l"
        else c
        for c in shape
    )


def stress_ids(rng: random.Random, n: int) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < n:
        out[render_shape(rng, rng.choice(ID_SHAPES))] = None
    return list(out)


PHONE_SHAPES = (
    "(ddd) ddd-dddd",
    "ddd-ddd-dddd",
    "ddd.ddd.dddd",
    "ddd ddd dddd",
    "+1 (ddd) ddd-dddd",
    "1-ddd-ddd-dddd",
    "ddd-dddd",
    "(ddd) ddd-dddd ext. ddd",
    "ddd-ddd-dddd x dd",
    "+1 ddd ddd dddd",
    "dddddddddd",
)


def stress_phones(rng: random.Random, n: int) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < n:
        shape = rng.choice(PHONE_SHAPES)
        s = render_shape(rng, shape)
        digits = [i for i, c in enumerate(shape) if c == "d"]
        chars = list(s)
        lead = 2 if shape.startswith("+1") or shape.startswith("1-") else 0
        if shape.startswith("+1") or shape.startswith("1-"):
            lead = shape.index("d")
        first = [i for i in digits if i >= lead]
        if len(first) >= 10:  # valid NANP area code and exchange
            chars[first[0]] = rng.choice("23456789")
            chars[first[3]] = rng.choice("23456789")
        out["".join(chars)] = None
    return list(out)


def stress_emails(rng: random.Random, n: int) -> list[str]:
    first, last = load_list("first_names").entries, load_list("last_names").entries
    domains = ("gmail.com", "stanford.edu", "med.example.org", "acme-health.com", "yahoo.com", "clinic.net")
    out: dict[str, None] = {}
    while len(out) < n:
        f, l_ = rng.choice(first).lower(), rng.choice(last).lower()
        local = rng.choice(
            [
                f"{f}.{l_}",
                f"{f[0]}{l_}{rng.randint(1, 99)}",
                f"{f}_{l_}",
                _pronounceable(rng).lower() + str(rng.randint(1, 9999)),
            ]
        )
        out[f"{local}@{rng.choice(domains)}"] = None
    return list(out)


def stress_streets(rng: random.Random, n: int) -> list[str]:
    streets = load_list("streets").entries
    out: dict[str, None] = {}
    while len(out) < n:
        name = rng.choice(streets) if rng.random() < 0.7 else _pronounceable(rng)
        s = f"{rng.randint(1, 99999)} {rng.choice(['', 'N ', 'S. ', 'East '])}{name} {rng.choice(SUFFIXES)}"
        if rng.random() < 0.25:
            s += rng.choice([", Apt 4B", " Apt. 12", ", Suite 300", " #7"])
        out[s] = None
    return list(out)


def stress_cities(rng: random.Random, n: int) -> list[str]:
    cities = load_list("cities").entries
    out: dict[str, None] = {}
    while len(out) < n:
        c = (
            rng.choice(cities)
            if rng.random() < 0.5
            else _pronounceable(rng) + rng.choice(["", "ville", " Falls", "ton"])
        )
        out[_case(rng, c)] = None
    return list(out)


def stress_zips(rng: random.Random, n: int) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < n:
        z = f"{rng.randrange(100000):05d}"
        out[z + (f"-{rng.randrange(10000):04d}" if rng.random() < 0.3 else "")] = None
    return list(out)


STRESS = {
    "names": ("PATIENT", stress_names),
    "ids": ("ID", stress_ids),
    "phones": ("PHONE", stress_phones),
    "emails": ("EMAIL", stress_emails),
    "streets": ("LOCATION", stress_streets),
    "cities": ("LOCATION", stress_cities),
    "zips": ("LOCATION", stress_zips),
}


# ---- checks ------------------------------------------------------------------------------


def keyrings(seed: int = 7) -> tuple[KeyRing, KeyRing, KeyRing]:
    """(key A, the same key A rebuilt, rotated key B) for one synthetic study."""
    return (
        keyring_for_tests("bench", "k1", f"bench-{seed}"),
        keyring_for_tests("bench", "k1", f"bench-{seed}"),
        keyring_for_tests("bench", "k2", f"bench-{seed}-rotated"),
    )


def _in_note(
    anonymizer: Anonymizer,
    note_id: str,
    patient: str,
    prefix: str,
    value: str,
    label: str,
    note_date: str | None = None,
) -> str:

    text = f"{prefix} {value} end."
    start = len(prefix) + 1
    out = anonymizer.anonymize(
        Note(note_id, patient, text, {"note_date": note_date}), [Span(note_id, start, start + len(value), label)]
    )
    s = out.spans[0]
    surrogate: str = out.text[s.out_start : s.out_end]
    return surrogate


def clear_caches() -> None:

    small_domain.permutation.cache_clear()
    small_domain._table.cache_clear()
    identifiers._cipher.cache_clear()


def category_checks(category: str, n: int, seed: int) -> dict[str, Any]:

    label, gen = STRESS[category]
    values = gen(random.Random(seed), n)
    ka, ka2, kb = keyrings(seed)
    a, a2, b = Anonymizer(ka), Anonymizer(ka2), Anonymizer(kb)
    t0 = time.perf_counter()
    first = [a.replace_value(label, v, "p0")[0] for v in values]
    dt = time.perf_counter() - t0
    clear_caches()
    again = [a2.replace_value(label, v, "p0")[0] for v in values]
    in_notes = [_in_note(a, "n1", "p0", "Seen at", v, label) for v in values]
    in_notes2 = [_in_note(a2, "n2", "p0", "Follow-up visit; contact", v, label) for v in values]
    rotated = [b.replace_value(label, v, "p0")[0] for v in values]
    return {
        "category": category,
        "n": len(values),
        "determinism": sum(x == y for x, y in zip(first, again, strict=False)) / len(values),
        "consistency": sum(x == y == z for x, y, z in zip(first, in_notes, in_notes2, strict=False)) / len(values),
        "rotation": sum(x != y for x, y in zip(first, rotated, strict=False)) / len(values),
        "unchanged": sum(x.casefold() == v.casefold() for x, v in zip(first, values, strict=False)) / len(values),
        "values_per_s": len(values) / dt,
        "values": values,
        "surrogates": first,
        "rotated": rotated,
    }


def date_checks(n: int, seed: int) -> dict[str, Any]:

    rows = stress_dates(random.Random(seed), n)
    ka, ka2, kb = keyrings(seed)
    a, a2, b = Anonymizer(ka), Anonymizer(ka2), Anonymizer(kb)
    t0 = time.perf_counter()
    first = [a.replace_value("DATE", t, p)[0] for p, _, _, t in rows]
    dt = time.perf_counter() - t0
    clear_caches()
    again = [a2.replace_value("DATE", t, p)[0] for p, _, _, t in rows]
    notes = [_in_note(a, f"n{i}", p, "Admitted", t, "DATE") for i, (p, _, _, t) in enumerate(rows)]
    notes2 = [_in_note(a2, f"m{i}", p, "Discharge summary, seen", t, "DATE") for i, (p, _, _, t) in enumerate(rows)]
    rotated = [b.replace_value("DATE", t, p)[0] for p, _, _, t in rows]
    shifted: dict[str, list[tuple[date, date]]] = {}
    fmt_ok = 0
    for (p, d, fmt, t), out in zip(rows, first, strict=False):
        pd = parse_date(out)
        new = date(date_part(pd.year), date_part(pd.month), date_part(pd.day))
        shifted.setdefault(p, []).append((d, new))
        fmt_ok += same_format(t, out, DATE_FORMATS[fmt], new)
    pairs = ok = 0
    for items in shifted.values():
        for (d1, s1), (d2, s2) in zip(items, items[1:], strict=False):
            pairs += 1
            ok += (s2 - s1) == (d2 - d1)
    patients = sorted(shifted)
    return {
        "category": "dates",
        "n": len(rows),
        "determinism": sum(x == y for x, y in zip(first, again, strict=False)) / len(rows),
        "consistency": sum(x == y == z for x, y, z in zip(first, notes, notes2, strict=False)) / len(rows),
        "rotation": sum(x != y for x, y in zip(first, rotated, strict=False)) / len(rows),
        "interval_pairs": pairs,
        "interval": ok / max(pairs, 1),
        "format": fmt_ok / len(rows),
        "patients": len(patients),
        "values_per_s": len(rows) / dt,
    }


def same_format(original: str, out: str, fmt: Callable[[date], str], new: date) -> bool:
    """``out`` is ``new`` written in the original's format (ambiguous styles accept either reading).

    Ambiguous cases: all numeric parts two digits without a leading zero ("12/13/2021": padded or
    not?) and "May", which is a full name and an abbreviation at once.
    """
    if out == fmt(new):
        return True
    nums = re.findall(r"\d+", original)
    want, got = fmt(new).lower(), out.lower()
    if not any(len(x) == 1 or x.startswith("0") for x in nums[:2]):

        def strip(x: str) -> str:
            return re.sub(r"\b0+(\d)", r"\1", x)

        want, got = strip(want), strip(got)
    if "may" in original.lower():
        full, abbr = MONTHS[new.month - 1].lower(), MONTHS[new.month - 1][:3].lower()
        want, got = want.replace(full, abbr), got.replace(full, abbr)
    return want == got


def id_collisions(keyring: KeyRing, digits: int) -> tuple[float, float]:
    """(ours, paper's pad-to-6 + FF3 + truncate) collision rate over the whole n-digit domain."""
    values = [str(i).zfill(digits) for i in range(10**digits)]
    ours = len({anonymize_identifier(keyring, v) for v in values})
    c = FF3Cipher.withCustomAlphabet(keyring.subkey("id").hex(), "00000000000000", "0123456789")
    paper = len({c.encrypt(v.zfill(6))[-digits:] for v in values})
    return 1 - ours / len(values), 1 - paper / len(values)


def name_collisions(keyring: KeyRing, n: int, seed: int) -> dict[str, Any]:

    names = full_name_set(random.Random(seed), n)
    sur = {surrogate_name(keyring, x).casefold() for x in names}
    tokens = {t.casefold() for x in names for t in x.split()}
    sur_tokens = {surrogate_token(keyring, t).casefold() for t in tokens}
    return {
        "n": n,
        "full": 1 - len(sur) / len(names),
        "tokens": len(tokens),
        "token": 1 - len(sur_tokens) / len(tokens),
    }


def note_throughput(seed: int, n_notes: int = 300) -> float:

    rng = random.Random(seed)
    ka, _, _ = keyrings(seed)
    an = Anonymizer(ka)
    names = stress_names(rng, n_notes)
    ids = stress_ids(rng, n_notes)
    phones = stress_phones(rng, n_notes)
    notes = []
    for i in range(n_notes):
        parts = [
            ("Patient ", None),
            (names[i], "PATIENT"),
            (" (MRN ", None),
            (ids[i], "ID"),
            (") seen on ", None),
            (DATE_FORMATS["mm/dd/yyyy"](date(2020, 1, 1) + timedelta(days=i)), "DATE"),
            (". Call ", None),
            (phones[i], "PHONE"),
            (" at Stanford Hospital, ", None),
            ("Palo Alto", "LOCATION"),
            (", ", None),
            ("CA", "LOCATION"),
            (" ", None),
            (f"{94000 + i}", "LOCATION"),
            (". Age ", None),
            ("67", "AGE"),
            (".", None),
        ]
        text, spans, pos = "", [], 0
        for chunk, label in parts:
            if label:
                spans.append(Span(f"n{i}", pos, pos + len(chunk), label))
            text += chunk
            pos += len(chunk)
        notes.append((Note(f"n{i}", f"p{i % 50}", text, {"note_date": "2020-06-01"}), spans))
    t0 = time.perf_counter()
    n_spans = 0
    for note, spans in notes:
        n_spans += len(an.anonymize(note, spans).spans)
    return n_spans / (time.perf_counter() - t0)


def run(n: int = 2000, seed: int = 7, big_names: int = 20000) -> dict[str, Any]:
    cats = [category_checks(c, n, seed) for c in STRESS]
    dates_row = date_checks(n, seed)
    ka, _, _ = keyrings(seed)
    ids = {d: id_collisions(ka, d) for d in (3, 4, 5)}
    names = [name_collisions(ka, 2000, seed), name_collisions(ka, big_names, seed + 1)]
    return {"categories": cats, "dates": dates_row, "ids": ids, "names": names, "spans_per_s": note_throughput(seed)}


def _pct(x: float, digits: int = 2) -> str:
    return f"{100 * x:.{digits}f}%"


def markdown(res: dict[str, Any]) -> str:
    lines = ["| Check | Category | n | Result | Paper (TIDE 2.0, Table 2) |", "|---|---|---|---|---|"]
    d = res["dates"]
    for key, title in (
        ("determinism", "Determinism"),
        ("consistency", "Cross-note consistency"),
        ("rotation", "Remap under rotated key"),
    ):
        for c in res["categories"] + [d]:
            lines.append(f"| {title} | {c['category']} | {c['n']} | {_pct(c[key])} | 100.0% |")
    lines.append(
        f"| Interval preservation | dates ({d['patients']} patients, {d['interval_pairs']} pairs) | {d['n']} | "
        f"{_pct(d['interval'])} | 100.0% |"
    )
    lines.append(f"| Format preserved | dates ({len(DATE_FORMATS)} formats) | {d['n']} | {_pct(d['format'])} | – |")
    for digits, (ours, paper) in res["ids"].items():
        lines.append(
            f"| ID collisions | {digits}-digit (all {10**digits:,}) | {10**digits} | {_pct(ours, 3)} "
            f"(pad-to-6+truncate re-measured: {_pct(paper)}) | 34.8–36.6% |"
        )
    paper_names = {2000: "0.4%", 20000: "3.3%"}
    for r in res["names"]:
        lines.append(
            f"| Name collisions | {r['n']:,} distinct full names | {r['n']} | {_pct(r['full'], 3)} "
            f"(tokens: {_pct(r['token'], 3)} of {r['tokens']:,}) | {paper_names.get(r['n'], '–')} |"
        )
    for c in res["categories"] + [d]:
        lines.append(f"| Throughput | {c['category']} | {c['n']} | {c['values_per_s']:,.0f} values/s | – |")
    lines.append(
        f"| Throughput | whole notes (engine, 10 spans/note) | 300 notes | {res['spans_per_s']:,.0f} spans/s | – |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="values per stress category (default 2000)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--big-names", type=int, default=20000, help="size of the large name set (default 20000)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    res = run(args.n, args.seed, args.big_names)
    print(markdown(res))
    print(
        f"\n_seed {args.seed}, {time.perf_counter() - t0:.1f} s; unchanged-value rate per category: "
        + ", ".join(f"{c['category']} {_pct(c['unchanged'])}" for c in res["categories"])
        + "_"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
