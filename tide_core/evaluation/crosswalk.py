"""Label crosswalks: map an external corpus's PHI taxonomy onto TIDE labels at scoring time.

External corpora label PHI differently (i2b2 2014 tags ``<NAME TYPE="DOCTOR">``,
``<LOCATION TYPE="CITY">`` ...).  A crosswalk is a plain mapping from an external label to a
TIDE label, or to nothing (the span is excluded from scoring, on both the gold and the
prediction side).  Keys are looked up most specific first: ``CATEGORY/TYPE``, then ``TYPE``,
then ``CATEGORY``; labels that are already TIDE labels map to themselves unless the file says
otherwise.

Files are JSON (``{"map": {"NAME/DOCTOR": "DOCTOR", "PROFESSION": null}}`` or a flat object)
or CSV with the columns ``source,target`` (an empty target excludes the label).  An unmapped
label is an error, never a silent drop, so a new tag in a corpus cannot vanish from the score.

With ``label_set="coarse"`` (see :mod:`tide_core.evaluation.labelsets`) a crosswalk may also
target the coarse labels (NAME, CONTACT, ...), and a label that already *is* a coarse label maps
to itself.  A coarse target is stored as its representative TIDE label (NAME → PATIENT), which
scoring on the coarse set maps back, because a :class:`~tide_core.spans.Span` only holds TIDE
labels.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tide_core.errors import ConfigError, InputError
from tide_core.evaluation.labelsets import get_label_set
from tide_core.types import LABELS

#: The default i2b2 2014 → TIDE crosswalk.  The TIDE 2.0 paper excludes PROFESSION and
#: ORGANIZATION (no SHIELD counterpart, not Safe Harbor identifiers); TIDE's own label set has
#: OTHER for organisations, so ORGANIZATION maps to OTHER here -- write ``null`` in a crosswalk
#: file to reproduce the paper's exclusion.  Room numbers are not PHI under our conventions.
I2B2_2014: dict[str, str | None] = {
    "NAME/PATIENT": "PATIENT",
    "NAME/DOCTOR": "DOCTOR",
    "NAME/USERNAME": "DOCTOR",
    "PROFESSION": None,
    "LOCATION/HOSPITAL": "HOSPITAL",
    "LOCATION/DEPARTMENT": "HOSPITAL",
    "LOCATION/ORGANIZATION": "OTHER",
    "LOCATION/ROOM": None,
    "LOCATION/STREET": "LOCATION",
    "LOCATION/CITY": "LOCATION",
    "LOCATION/STATE": "LOCATION",
    "LOCATION/COUNTRY": "LOCATION",
    "LOCATION/ZIP": "LOCATION",
    "LOCATION/LOCATION-OTHER": "LOCATION",
    "CONTACT/PHONE": "PHONE",
    "CONTACT/FAX": "PHONE",
    "CONTACT/EMAIL": "EMAIL",
    "CONTACT/URL": "URL",
    "CONTACT/IPADDR": "URL",
    "ID": "ID",
    "AGE": "AGE",
    "DATE": "DATE",
    # bare subtypes, as BRAT exports of i2b2 often carry them
    "PATIENT": "PATIENT",
    "DOCTOR": "DOCTOR",
    "USERNAME": "DOCTOR",
    "HOSPITAL": "HOSPITAL",
    "DEPARTMENT": "HOSPITAL",
    "ORGANIZATION": "OTHER",
    "ROOM": None,
    "STREET": "LOCATION",
    "CITY": "LOCATION",
    "STATE": "LOCATION",
    "COUNTRY": "LOCATION",
    "ZIP": "LOCATION",
    "LOCATION-OTHER": "LOCATION",
    "FAX": "PHONE",
    "IPADDR": "URL",
    "SSN": "ID",
    "MEDICALRECORD": "ID",
    "HEALTHPLAN": "ID",
    "ACCOUNT": "ID",
    "LICENSE": "ID",
    "VEHICLE": "ID",
    "DEVICE": "ID",
    "BIOID": "ID",
    "IDNUM": "ID",
}


@dataclass
class Crosswalk:
    """External label → TIDE label (``None`` = excluded from scoring)."""

    mapping: dict[str, str | None]
    name: str = "custom"
    #: raw labels excluded so far (counts only; reported so exclusions stay visible)
    excluded: Counter[str] = field(default_factory=Counter)
    #: scoring label set the targets may come from ("fine" = TIDE labels, or "coarse")
    label_set: str = "fine"

    def __post_init__(self) -> None:
        ls = get_label_set(self.label_set)
        self.label_set = ls.name
        #: set labels that are not TIDE labels -> the TIDE label that stands for them in a Span
        self._coarse = {lab: ls.representative[lab] for lab in ls.labels if lab not in LABELS}
        norm: dict[str, str | None] = {}
        for src, dst in self.mapping.items():
            if dst is not None and dst not in LABELS and dst not in self._coarse:
                hint = f"targets must be one of {', '.join(LABELS)} or null"
                if dst in get_label_set("coarse").labels:
                    hint += f"; {dst} is a coarse label: score with --label-set coarse"
                raise ConfigError("E700", f"crosswalk {self.name!r} maps {src!r} to unknown label {dst!r}", hint=hint)
            norm[src.strip().upper()] = self._coarse.get(dst, dst) if dst is not None else None
        self.mapping = norm

    def lookup(self, label: str, subtype: str | None = None) -> str | None:
        """TIDE label for ``label`` (optionally with an i2b2-style ``subtype``); None = excluded."""
        label_u = label.strip().upper()
        keys = []
        if subtype:
            sub_u = subtype.strip().upper()
            keys += [f"{label_u}/{sub_u}", sub_u]
        keys.append(label_u)
        for key in keys:
            if key in self.mapping:
                target = self.mapping[key]
                if target is None:
                    self.excluded[keys[0]] += 1
                return target
        if label_u in LABELS and not subtype:
            return label_u
        if label_u in self._coarse and not subtype:
            return self._coarse[label_u]
        shown = f"{label_u}/{subtype.strip().upper()}" if subtype else label_u
        raise InputError(
            "E701",
            f"label {shown!r} is not in crosswalk {self.name!r}",
            hint="add it to the crosswalk file (map it to a TIDE label, or to null to exclude it)",
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "map": dict(self.mapping), "label_set": self.label_set}


def identity_crosswalk(label_set: str = "fine") -> Crosswalk:
    """TIDE labels to themselves (and, on the coarse set, coarse labels to themselves)."""
    return Crosswalk({lab: lab for lab in LABELS}, name="identity", label_set=label_set)


def i2b2_crosswalk(label_set: str = "fine") -> Crosswalk:
    return Crosswalk(dict(I2B2_2014), name="i2b2-2014", label_set=label_set)


def load_crosswalk(path: str | Path | None, label_set: str = "fine") -> Crosswalk:
    """Load a crosswalk file (JSON or CSV); ``None`` or ``"i2b2"`` gives the built-in i2b2 map.

    ``label_set="coarse"`` lets the file target coarse labels (NAME, CONTACT, ...).
    """
    if path is None or str(path).lower() in ("i2b2", "i2b2-2014"):
        return i2b2_crosswalk(label_set)
    path = Path(path)
    if not path.exists():
        raise ConfigError(
            "E702",
            f"crosswalk file {path} does not exist",
            hint="pass a .json or .csv crosswalk, or 'i2b2' for the built-in map",
        )
    if path.suffix.lower() == ".csv":
        mapping: dict[str, str | None] = {}
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or not {"source", "target"} <= set(reader.fieldnames):
                raise ConfigError(
                    "E703",
                    f"crosswalk {path.name} needs the columns source,target",
                    hint="first line: source,target; leave target empty to exclude",
                )
            for row in reader:
                target = (row["target"] or "").strip()
                mapping[row["source"]] = target.upper() or None
        return Crosswalk(mapping, name=path.stem, label_set=label_set)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "E703",
            f"crosswalk {path.name} is not valid JSON (line {exc.lineno})",
            hint='write {"map": {"EXTERNAL": "TIDE_LABEL" | null}}',
        ) from None
    mapping_obj: Mapping[str, Any] = obj.get("map", obj) if isinstance(obj, dict) else {}
    if not isinstance(mapping_obj, Mapping) or not mapping_obj:
        raise ConfigError(
            "E703", f"crosswalk {path.name} holds no mapping", hint='write {"map": {"EXTERNAL": "TIDE_LABEL" | null}}'
        )
    return Crosswalk(
        {str(k): (None if v is None else str(v).upper()) for k, v in mapping_obj.items()},
        name=str(obj.get("name", path.stem)) if isinstance(obj, dict) else path.stem,
        label_set=label_set,
    )
