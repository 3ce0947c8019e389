"""Drift monitor: compare a batch with a frozen, validated reference through four lenses.

Freeze (``freeze_reference``): profile the reference documents (counts only, see
``drift_features``) and calibrate every component on the reference's own noise -- 40 random
self-splits, each comparing a random pseudo-batch (half the reference, or the expected batch
size) with the remaining documents.  For each component the 95th percentile of those 40 values
is the noise level; ``watch = max(default_watch, noise95)`` and
``drift = max(default_drift, 2 × watch)``.  Levels are only ever raised above the documented
floors (``drift_components``), never lowered.

Check (``check_drift``): each component gets a value, a band (stable < watch < drift) and a
0–100 score (50 = at its watch level, 100 = at its drift level, capped at 200).  A component
that cannot be computed (no spans given, no metadata, recognizer changed → "re-baseline") is
``unknown`` with its reason -- never stable.  Each lens takes its worst component and the overall
band the worst lens, with unknown ranked between stable and watch: nothing is averaged away,
and missing evidence cannot read as a pass.  A batch under 30 documents is marked
low-confidence.

The frozen reference is JSON with aggregate statistics only: counts, histogram bins, metadata
category names and PHI label names -- no text, note ids or patient ids.  ``assert_no_phi``
checks that (and is run on every freeze).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tide_core.assurance.drift_components import COMPONENTS, LENSES, compute
from tide_core.assurance.drift_features import FeatureFrame, aggregate, build_frame, length_edges
from tide_core.errors import ConfigError, InputError

BANDS = ("stable", "unknown", "watch", "drift")
SEVERITY = {b: i for i, b in enumerate(BANDS)}
FORMAT_VERSION = 1
LOW_CONFIDENCE_DOCS = 30
N_SPLITS = 40


@dataclass
class ComponentResult:
    name: str
    lens: str
    kind: str
    value: float | None
    watch: float
    drift: float
    band: str
    score: float | None
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lens": self.lens,
            "kind": self.kind,
            "value": self.value,
            "watch": self.watch,
            "drift": self.drift,
            "band": self.band,
            "score": self.score,
            "reason": self.reason,
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass
class DriftResult:
    band: str
    lenses: dict[str, str]
    components: list[ComponentResult]
    n_docs: int
    low_confidence: bool
    n_measured: int
    new_categories: dict[str, list[str]]

    @property
    def worst(self) -> ComponentResult | None:
        ranked = sorted(self.components, key=lambda c: (SEVERITY[c.band], c.score or 0.0), reverse=True)
        return ranked[0] if ranked else None

    def component(self, name: str) -> ComponentResult:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "band": self.band,
            "lenses": self.lenses,
            "n_docs": self.n_docs,
            "low_confidence": self.low_confidence,
            "n_measured": self.n_measured,
            "n_components": len(self.components),
            "new_categories": self.new_categories,
            "components": [c.to_dict() for c in self.components],
        }


def band_of(value: float, watch: float, drift: float) -> str:
    return "drift" if value >= drift else "watch" if value >= watch else "stable"


def score_of(value: float, watch: float, drift: float) -> float:
    if value < watch:
        s = 50.0 * value / watch if watch > 0 else 0.0
    else:
        s = 50.0 + 50.0 * (value - watch) / max(drift - watch, 1e-12)
    return float(min(200.0, s))


def _frame(
    notes: Iterable[Any],
    spans: Mapping[str, Sequence[Any]] | None,
    residual: Any,
    recognizer_fingerprint: str | None,
    screen_fingerprint: str | None,
) -> FeatureFrame:
    return build_frame(
        list(notes),
        spans,
        residual,
        recognizer_fingerprint=recognizer_fingerprint,
        screen_fingerprint=screen_fingerprint,
    )


def freeze_reference(
    notes: Sequence[Any],
    spans: Mapping[str, Sequence[Any]] | None = None,
    residual: Any = None,
    *,
    n_splits: int = N_SPLITS,
    seed: int = 42,
    pseudo_batch_size: int | None = None,
    recognizer_fingerprint: str | None = None,
    screen_fingerprint: str | None = None,
    name: str = "reference",
) -> dict[str, Any]:
    """Profile and calibrate a reference; returns the JSON-ready frozen reference."""
    notes = list(notes)
    if len(notes) < 10:
        raise InputError(
            "E750",
            f"a drift reference needs at least 10 documents (got {len(notes)})",
            hint="freeze the reference from the validated corpus, ideally hundreds of notes",
        )
    frame = _frame(notes, spans, residual, recognizer_fingerprint, screen_fingerprint)
    edges = length_edges(frame)
    profile = aggregate(frame, None, edges)
    n = frame.n
    m = min(pseudo_batch_size or n // 2, n // 2)
    rng = np.random.default_rng(seed)
    noise: dict[str, list[float]] = {c.name: [] for c in COMPONENTS}
    for _ in range(n_splits):
        perm = rng.permutation(n)
        pb, pr = aggregate(frame, perm[:m], edges), aggregate(frame, perm[m:], edges)
        for spec in COMPONENTS:
            value, _, _ = compute(spec, pr, pb)
            if value is not None:
                noise[spec.name].append(value)
    components = {}
    for spec in COMPONENTS:
        vals = noise[spec.name]
        q95 = float(np.percentile(vals, 95)) if vals else None
        watch = max(spec.default_watch, q95 or 0.0)
        components[spec.name] = {
            "lens": spec.lens,
            "kind": spec.kind,
            "default_watch": spec.default_watch,
            "default_drift": spec.default_drift,
            "noise_p95": q95,
            "watch": watch,
            "drift": max(spec.default_drift, 2.0 * watch),
        }
    ref = {
        "format": "tide.drift-reference",
        "version": FORMAT_VERSION,
        "name": name,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "length_edges": edges,
        "profile": profile,
        "components": components,
        "calibration": {"n_splits": n_splits, "seed": seed, "pseudo_batch_size": m, "quantile": 0.95},
    }
    forbidden = [str(x.note_id) for x in notes] + [str(getattr(x, "patient_id", "") or "") for x in notes]
    assert_no_phi(ref, forbidden=[f for f in forbidden if f])
    return ref


def check_drift(
    reference: Mapping[str, Any],
    notes: Sequence[Any],
    spans: Mapping[str, Sequence[Any]] | None = None,
    residual: Any = None,
    *,
    recognizer_fingerprint: str | None = None,
    screen_fingerprint: str | None = None,
) -> DriftResult:
    """Compare a batch with a frozen reference; see the module docstring for the verdict rules."""
    if reference.get("format") != "tide.drift-reference":
        raise InputError("E751", "not a TIDE drift reference", hint="freeze one with `tide drift freeze`")
    notes = list(notes)
    frame = _frame(notes, spans, residual, recognizer_fingerprint, screen_fingerprint)
    batch = aggregate(frame, None, reference["length_edges"])
    ref_prof = reference["profile"]
    results: list[ComponentResult] = []
    for spec in COMPONENTS:
        levels = reference["components"].get(spec.name)
        if levels is None:
            results.append(
                ComponentResult(
                    spec.name,
                    spec.lens,
                    spec.kind,
                    None,
                    spec.default_watch,
                    spec.default_drift,
                    "unknown",
                    None,
                    "not in the reference",
                )
            )
            continue
        watch, drift = float(levels["watch"]), float(levels["drift"])
        if frame.n == 0:
            value: float | None
            reason: str | None
            extra: dict[str, Any]
            value, reason, extra = None, "empty batch", {}
        else:
            value, reason, extra = compute(spec, ref_prof, batch)
        if value is None:
            results.append(
                ComponentResult(spec.name, spec.lens, spec.kind, None, watch, drift, "unknown", None, reason, extra)
            )
        else:
            results.append(
                ComponentResult(
                    spec.name,
                    spec.lens,
                    spec.kind,
                    value,
                    watch,
                    drift,
                    band_of(value, watch, drift),
                    score_of(value, watch, drift),
                    None,
                    extra,
                )
            )
    lenses = {}
    for lens in LENSES:
        bands = [c.band for c in results if c.lens == lens]
        lenses[lens] = max(bands, key=SEVERITY.__getitem__) if bands else "unknown"
    overall = max(lenses.values(), key=SEVERITY.__getitem__)
    new_cats = {
        k: sorted(set(batch["mix"][k]) - set(ref_prof["mix"][k]))
        for k in batch["mix"]
        if set(batch["mix"][k]) - set(ref_prof["mix"][k])
    }
    return DriftResult(
        overall,
        lenses,
        results,
        frame.n,
        frame.n < LOW_CONFIDENCE_DOCS,
        sum(1 for c in results if c.value is not None),
        new_cats,
    )


_ALLOWED_STRING_KEYS = {
    "format",
    "name",
    "created_at",
    "lens",
    "kind",
    "by",
    "recognizer_fingerprint",
    "screen_fingerprint",
}


def assert_no_phi(reference: Mapping[str, Any], forbidden: Iterable[str] = ()) -> None:
    """Check that a frozen reference holds aggregate statistics only.

    Allowed: numbers, and strings only as dictionary keys (category / label / component names)
    or under a few descriptive keys; no string over 64 characters; none of ``forbidden``
    (note ids, patient ids, surface strings) anywhere.  Raises InputError E752 naming the path.
    """
    forbidden = {f for f in forbidden if f}

    def walk(obj: Any, path: str) -> None:
        if isinstance(obj, Mapping):
            for k, v in obj.items():
                if not isinstance(k, str) or len(k) > 64 or k in forbidden:
                    raise InputError(
                        "E752",
                        f"drift reference key at {path} is not an aggregate name",
                        hint="references may hold counts, bins and category names only",
                    )
                walk(v, f"{path}/{k}" if path else k)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                if isinstance(v, str):
                    raise InputError(
                        "E752",
                        f"drift reference holds a string list at {path}",
                        hint="references may hold counts, bins and category names only",
                    )
                walk(v, f"{path}[{i}]")
        elif isinstance(obj, str):
            key = path.rsplit("/", 1)[-1]
            if key not in _ALLOWED_STRING_KEYS or len(obj) > 64 or obj in forbidden:
                raise InputError(
                    "E752",
                    f"drift reference holds a free-text value at {path}",
                    hint="references may hold counts, bins and category names only",
                )
        elif obj is not None and not isinstance(obj, (int, float, bool)):
            raise InputError(
                "E752",
                f"drift reference holds a {type(obj).__name__} at {path}",
                hint="references may hold counts, bins and category names only",
            )

    walk(reference, "")


def save_reference(reference: Mapping[str, Any], path: str | Path) -> Path:
    assert_no_phi(reference)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(reference, indent=2, sort_keys=True), encoding="utf-8")
    return path


def load_reference(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(
            "E753",
            f"drift reference {path} does not exist",
            hint="freeze one with `tide drift freeze --notes REF.jsonl --out ref.json`",
        )
    try:
        ref = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise InputError(
            "E751", f"drift reference {path.name} is not valid JSON", hint="re-freeze the reference"
        ) from None
    if ref.get("format") not in ("tide.drift-reference", SET_FORMAT) or ref.get("version") != FORMAT_VERSION:
        raise InputError(
            "E751",
            f"{path.name} is not a version-{FORMAT_VERSION} TIDE drift reference",
            hint="re-freeze the reference with this TIDE version",
        )
    assert_no_phi(ref)
    out: dict[str, Any] = ref
    return out


# --- one baseline per source ---------------------------------------------------------------

SET_FORMAT = "tide.drift-reference-set"


@dataclass
class DriftSetResult:
    """Per-group verdicts (e.g. per source); a group without its own reference is unvalidated."""

    by: str
    band: str
    results: dict[str, DriftResult]
    unvalidated: dict[str, int]  # group -> documents in the batch, no reference for it

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "band": self.band,
            "unvalidated": self.unvalidated,
            "groups": {k: v.to_dict() for k, v in self.results.items()},
        }


def _groups(notes: Sequence[Any], by: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for n in notes:
        out.setdefault(str((getattr(n, "metadata", None) or {}).get(by) or "?"), []).append(n)
    return dict(sorted(out.items()))


def freeze_reference_set(
    notes: Sequence[Any],
    spans: Mapping[str, Sequence[Any]] | None = None,
    residual: Any = None,
    *,
    by: str = "source",
    min_docs: int = LOW_CONFIDENCE_DOCS,
    **kwargs: Any,
) -> dict[str, Any]:
    """One calibrated reference per value of ``metadata[by]`` with at least ``min_docs`` notes.

    A new source gets no borrowed baseline: smaller groups are listed under ``too_small`` and
    any batch from them is reported as unvalidated.
    """
    refs, small = {}, {}
    for value, group in _groups(list(notes), by).items():
        if len(group) < max(min_docs, 10):
            small[value] = len(group)
            continue
        refs[value] = freeze_reference(group, spans, residual, name=f"{by}={value}", **kwargs)
    if not refs:
        raise InputError(
            "E754",
            f"no {by} has {min_docs}+ reference documents",
            hint="freeze a single reference instead, or gather more validated notes per group",
        )
    refset = {
        "format": SET_FORMAT,
        "version": FORMAT_VERSION,
        "by": by,
        "min_docs": min_docs,
        "references": refs,
        "too_small": small,
    }
    assert_no_phi(refset)
    return refset


def check_drift_set(
    refset: Mapping[str, Any],
    notes: Sequence[Any],
    spans: Mapping[str, Sequence[Any]] | None = None,
    residual: Any = None,
    **kwargs: Any,
) -> DriftSetResult:
    """Check each group of the batch against its own reference; worst group wins."""
    if refset.get("format") != SET_FORMAT:
        raise InputError("E751", "not a TIDE drift reference set", hint="freeze one with freeze_reference_set")
    by = refset["by"]
    results, unvalidated = {}, {}
    for value, group in _groups(list(notes), by).items():
        ref = refset["references"].get(value)
        if ref is None:
            unvalidated[value] = len(group)
            continue
        results[value] = check_drift(ref, group, spans, residual, **kwargs)
    bands = [r.band for r in results.values()] + (["unknown"] if unvalidated else [])
    band = max(bands, key=SEVERITY.__getitem__) if bands else "unknown"
    return DriftSetResult(by, band, results, unvalidated)
