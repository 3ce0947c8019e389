"""A synthetic study of short notes with a patients table, for the release tests (any size)."""

from __future__ import annotations

import random

import pyarrow as pa

FIRST = ["Maria", "Robert", "Aisha", "Tomasz", "Keiko", "Oluwaseun", "Ingrid", "Rafael", "Priya", "Declan"]
LAST = ["Stonebridge", "Ashdown", "Okonkwo", "Lindqvist", "Haraway", "Petrosyan", "Vantongeren", "Quist"]
SITES = ("north", "south")
TYPES = ("progress", "discharge")


def patients(n_patients: int) -> list[dict]:
    rows = []
    for i in range(n_patients):
        rows.append(
            {
                "patient_id": f"p{i}",
                "first_name": FIRST[i % len(FIRST)],
                "last_name": f"{LAST[i % len(LAST)]}{'' if i < len(LAST) else chr(97 + i % 26)}",
                "mrn": f"{7100000 + i}",
                "phone": f"617-555-{i % 10000:04d}",
            }
        )
    return rows


def notes(n_notes: int, n_patients: int, seed: int = 0, start: int = 0) -> list[dict]:
    """Short notes (about 120 characters), each naming its patient, a date, an MRN and a phone."""
    rng = random.Random(seed)
    pts = patients(n_patients)
    out = []
    for j in range(start, start + n_notes):
        p = pts[rng.randrange(n_patients)]
        day = 1 + j % 28
        out.append(
            {
                "study": "big",
                "note_id": f"n{j:06d}",
                "patient_id": p["patient_id"],
                "note_date": f"2021-03-{day:02d}",
                "site": SITES[j % 2],
                "source": "ehr",
                "note_type": TYPES[(j // 2) % 2],
                "text": f"Pt {p['first_name']} {p['last_name']} seen 03/{day:02d}/2021. MRN {p['mrn']}. "
                f"Call {p['phone']} if worse. Stable.",
            }
        )
    return out


def write(wh, n_notes: int, n_patients: int, seed: int = 0) -> None:
    wh.replace_table("notes", pa.Table.from_pylist(notes(n_notes, n_patients, seed)))
    wh.replace_table("patients", pa.Table.from_pylist(patients(n_patients)))
