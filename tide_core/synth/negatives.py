"""Hard negatives: text that looks like PHI but is not, written unannotated.

Eponyms (Parkinson's disease, Foley catheter), drugs with doses, vitals (BP 120/80), lab values
(Na 138), times of day alone, clinical scores (NIHSS 4), ratios, room/bed numbers, page numbers,
versions, ICD/CPT codes, measurements and durations.  Each is recorded in the gold metadata
(``hard_negatives``: start, end, kind) so an evaluation can count false positives on them.
"""

from __future__ import annotations

import random

from tide_core.synth.builder import Piece, neg
from tide_core.synth.vocab import Vocabulary

_ICD = (
    "I10",
    "E11.9",
    "E78.5",
    "J44.1",
    "N18.3",
    "I48.91",
    "F32.A",
    "K21.9",
    "M54.5",
    "J18.9",
    "I50.22",
    "N39.0",
    "G40.909",
    "C50.911",
    "Z79.4",
    "R07.9",
    "E03.9",
    "F41.1",
    "I25.10",
    "D64.9",
)
_CPT = ("99213", "99214", "99223", "99285", "71046", "74177", "93000", "45378", "36415", "80053")
_SCORES = (
    "NIHSS {a}",
    "GCS {g}",
    "PHQ-9 score of {a}",
    "CHA2DS2-VASc {s}",
    "HAS-BLED {s}",
    "MELD {m}",
    "APACHE II {m}",
    "CURB-65 of {s}",
    "Wells score {s}",
    "pain {s}/10",
    "MoCA {mo}/30",
    "GAD-7 {a}",
    "AUDIT-C {s}",
    "ASA class {s}",
    "Mallampati {s}",
    "qSOFA {q}",
    "TIMI {s}",
    "HEART score {s}",
    "Braden {b}",
    "Morse {mf}",
)


def _one(r: random.Random, vocab: Vocabulary, kind: str) -> str:
    ri = r.randint
    if kind == "eponym":
        return r.choice(vocab.eponyms)
    if kind.startswith("eponym_"):
        phrase: str = r.choice(vocab.eponyms_by_category[kind[7:]])
        return phrase
    if kind == "med":
        drug, dose = r.choice(vocab.medications)
        return f"{drug} {dose}"
    if kind == "dose":
        return r.choice(
            (
                f"{ri(1, 100)} mg",
                f"{ri(1, 20) * 5} mcg",
                f"{ri(1, 40)} units",
                f"{ri(1, 4)} g",
                f"{ri(1, 30)} mL/hr",
                f"{ri(10, 80)} mEq",
                f"{r.choice((0.5, 1.5, 2.5, 12.5))} mg",
            )
        )
    if kind == "bp":
        return r.choice(("BP ", "BP: ", "blood pressure ")) + f"{ri(88, 190)}/{ri(45, 110)}"
    if kind == "vitals":
        return (
            f"BP {ri(92, 178)}/{ri(50, 100)}, HR {ri(52, 128)}, RR {ri(12, 28)}, "
            f"T {r.choice(('98.', '99.', '97.', '100.', '101.'))}{ri(0, 9)} F, SpO2 {ri(88, 100)}% "
            + r.choice(("on RA", "on 2L NC", "on room air", "on 4 L"))
        )
    if kind == "labs":
        return (
            f"Na {ri(128, 146)}, K {ri(30, 55) / 10}, Cl {ri(95, 110)}, HCO3 {ri(18, 30)}, "
            f"BUN {ri(6, 60)}, Cr {ri(5, 30) / 10}, glucose {ri(70, 320)}; WBC {ri(30, 180) / 10}, "
            f"Hgb {ri(70, 160) / 10}, Plt {ri(90, 450)}"
        )
    if kind == "lab":
        return r.choice(
            (
                f"Na {ri(128, 146)}",
                f"K {ri(30, 55) / 10}",
                f"INR {ri(9, 35) / 10}",
                f"troponin {ri(1, 90) / 100}",
                f"A1c {ri(50, 120) / 10}%",
                f"TSH {ri(3, 90) / 10}",
                f"LDL {ri(50, 190)}",
                f"lactate {ri(8, 60) / 10}",
                f"BNP {ri(20, 2400)}",
                f"eGFR {ri(15, 110)}",
                f"ferritin {ri(8, 900)}",
                f"PSA {ri(1, 200) / 10}",
            )
        )
    if kind == "time":
        h, m = ri(0, 23), r.choice((0, 15, 20, 30, 45, 10, 50))
        return r.choice(
            (
                f"{h:02d}:{m:02d}",
                f"{h:02d}{m:02d}",
                f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}",
                f"{(h % 12) or 12}:{m:02d} {'am' if h < 12 else 'pm'}",
                f"{h:02d}{m:02d} hours",
            )
        )
    if kind == "score":
        return r.choice(_SCORES).format(
            a=ri(0, 24), g=ri(3, 15), s=ri(0, 6), m=ri(6, 35), mo=ri(14, 30), q=ri(0, 3), b=ri(9, 23), mf=ri(0, 95)
        )
    if kind == "ratio":
        return r.choice(
            (
                f"{ri(1, 4)}:{ri(1, 4)}",
                f"I:E {ri(1, 2)}:{ri(2, 4)}",
                f"FEV1/FVC {ri(45, 85) / 100}",
                f"{ri(1, 3)}:1",
                f"BUN/Cr ratio {ri(10, 30)}",
                f"titer 1:{r.choice((40, 80, 160, 320, 640))}",
            )
        )
    if kind == "room":
        return r.choice(
            (
                f"Room {ri(100, 999)}{r.choice(('', 'A', 'B'))}",
                f"bed {ri(1, 40)}",
                f"Rm {ri(1, 12)}{r.choice(('A', 'B', 'C'))}",
                f"Bay {ri(1, 20)}",
                f"{ri(2, 9)} {r.choice(('West', 'East', 'North', 'South'))}",
                f"OR {ri(1, 14)}",
                f"ED bed {ri(1, 30)}",
                f"pod {r.choice('ABCD')}",
            )
        )
    if kind == "page":
        n = ri(1, 4)
        return r.choice((f"Page {ri(1, n)} of {n}", f"p. {ri(1, 9)}", f"Pg {ri(1, n)}/{n}"))
    if kind == "version":
        return r.choice(
            (
                f"v{ri(1, 9)}.{ri(0, 12)}",
                f"version {ri(2015, 2024)}.{ri(1, 4)}",
                f"template v{ri(1, 5)}.{ri(0, 9)}.{ri(0, 9)}",
                f"rev {ri(1, 30)}",
                f"Form {r.choice('ABCDH')}-{ri(100, 999)} rev. {ri(1, 9)}",
            )
        )
    if kind == "icd":
        return r.choice(("ICD-10 ", "ICD-10-CM ", "", "dx code ")) + r.choice(_ICD)
    if kind == "cpt":
        return "CPT " + r.choice(_CPT)
    if kind == "measure":
        return r.choice(
            (
                f"{ri(2, 90) / 10} x {ri(2, 70) / 10} cm",
                f"{ri(2, 40)} mm",
                f"{ri(1, 12) / 2} cm",
                f"{ri(10, 300)} mL",
                f"EF {ri(15, 70)}%",
                f"{ri(40, 160)} kg",
                f"BMI {ri(170, 450) / 10}",
            )
        )
    if kind == "duration":
        return r.choice(
            (
                f"for {ri(2, 14)} days",
                f"x {ri(2, 10)} days",
                f"{ri(2, 6)} weeks ago",
                f"over the past {ri(2, 11)} months",
                f"for {ri(2, 30)} years",
                f"{ri(5, 60)} pack-years",
                f"POD {ri(1, 9)}",
                f"day {ri(1, 14)} of antibiotics",
                f"q{r.choice((4, 6, 8, 12))}h",
            )
        )
    if kind == "obstetric":
        return r.choice(
            (f"G{ri(1, 6)}P{ri(0, 5)}", f"{ri(24, 41)} weeks gestation", f"G{ri(2, 5)}P{ri(1, 3)}0{ri(0, 2)}{ri(1, 3)}")
        )
    raise ValueError(f"unknown hard-negative kind {kind!r}")


KINDS = (
    "eponym",
    "eponym_disease",
    "eponym_sign",
    "eponym_score",
    "eponym_device",
    "eponym_position",
    "eponym_procedure",
    "med",
    "dose",
    "bp",
    "vitals",
    "labs",
    "lab",
    "time",
    "score",
    "ratio",
    "room",
    "page",
    "version",
    "icd",
    "cpt",
    "measure",
    "duration",
    "obstetric",
)


def negative_pieces(kind: str, r: random.Random, vocab: Vocabulary) -> list[Piece]:
    if kind == "meds":
        out: list[Piece] = []
        drugs = r.sample(vocab.medications, r.randint(3, 6))
        for i, (d, dose) in enumerate(drugs):
            out.append(neg(f"{d} {dose}", "med"))
            if i < len(drugs) - 1:
                out.append(Piece(r.choice(("; ", "\n", ", "))))
        return out
    return [neg(_one(r, vocab, kind), kind)]
