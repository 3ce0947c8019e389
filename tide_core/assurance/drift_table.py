"""The ``tide_drift`` table: one row per recorded drift check of a (study, key) batch.

Rows are appended, never replaced: the history of verdicts is the evidence that a release
was looked at after (or before) its batch drifted.  The release gate reads the newest row
(``latest_drift``) and blocks on ``drift``.  A row holds the overall band, a few summary
columns for queries, and ``result_json`` -- ``DriftResult.to_dict()``, which is aggregate
statistics only (component values, levels, bands, lens names, metadata category names).
``record_drift`` checks that before writing: no note id, patient id or long free text may
reach this table, which lives outside the source schema's PHI tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tide_core.assurance.drift import SEVERITY
from tide_core.assurance.screen import screen_released
from tide_core.config import TideConfig
from tide_core.engine.recognition import recognition_fingerprint
from tide_core.engine.recognizer_setup import build_recognizers
from tide_core.engine.study_input import read_study_input
from tide_core.errors import InputError
from tide_core.spans import Note
from tide_core.store.release_store import ReleaseStore
from tide_core.store.span_cache import SpanCache
from tide_core.store.tables import DRIFT, TableNames

if TYPE_CHECKING:
    from tide_core.config import TideConfig
    from tide_core.io.warehouse import Warehouse

TABLE_NAME = "tide_drift"
#: Longest string allowed inside result_json (component reasons are ~80 characters).
MAX_STRING = 120


def assert_aggregate_result(result: Mapping[str, Any], forbidden: Iterable[str] = ()) -> None:
    """Check a drift result dict holds aggregate statistics only.

    ``drift.assert_no_phi`` is written for frozen references (it rejects the band/reason strings
    a result legitimately carries), so results get this looser walk: numbers, booleans, and
    short strings (bands, component/lens/category names, reasons) that are none of ``forbidden``
    (note ids, patient ids).  Raises InputError E755 naming the path, never the value.
    """
    forbidden = {str(f) for f in forbidden if f}

    def bad(path: str, what: str) -> InputError:
        return InputError(
            "E755",
            f"drift result holds {what} at {path or '/'}",
            hint="drift results may hold counts, levels, bands and category names only",
        )

    def walk(obj: Any, path: str) -> None:
        if isinstance(obj, Mapping):
            for k, v in obj.items():
                if not isinstance(k, str) or len(k) > 64 or k in forbidden:
                    raise bad(path, "a key that is not an aggregate name")
                walk(v, f"{path}/{k}")
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]")
        elif isinstance(obj, str):
            if len(obj) > MAX_STRING or obj in forbidden:
                raise bad(path, "a free-text or identifier value")
        elif obj is not None and not isinstance(obj, (int, float, bool)):
            raise bad(path, f"a {type(obj).__name__}")

    walk(result, "")


def _result_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, Mapping):
        return dict(result)
    if hasattr(result, "to_dict"):
        d: dict[str, Any] = result.to_dict()
        return d
    raise InputError(
        "E755",
        f"cannot record a drift result of type {type(result).__name__}",
        hint="pass the DriftResult returned by check_drift (or its to_dict())",
    )


def _worst(d: Mapping[str, Any]) -> tuple[str | None, str | None]:

    comps = list(d.get("components") or [])
    if not comps:
        return None, None
    top = max(comps, key=lambda c: (SEVERITY.get(c.get("band"), 0), c.get("score") or 0.0))
    return top.get("name"), top.get("band")


def drift_row(
    study: str,
    key: str,
    result: Any,
    reference_name: str,
    checked_at: datetime | None = None,
    forbidden: Iterable[str] = (),
) -> dict[str, Any]:
    """One ``tide_drift`` row (checked for aggregate-only content)."""
    d = _result_dict(result)
    assert_aggregate_result(d, forbidden)
    worst_name, worst_band = _worst(d)
    return {
        "study": study,
        "key": key or "",
        "band": d.get("band"),
        "n_docs": int(d.get("n_docs") or 0),
        "low_confidence": bool(d.get("low_confidence")),
        "worst_component": worst_name,
        "worst_band": worst_band,
        "n_components": int(d.get("n_components") or len(d.get("components") or [])),
        "reference_name": reference_name,
        "checked_at": checked_at or datetime.now(UTC),
        "result_json": json.dumps(d, sort_keys=True),
    }


def record_drift(
    wh: Warehouse,
    study: str,
    key: str,
    result: Any,
    reference_name: str,
    *,
    checked_at: datetime | None = None,
    forbidden: Iterable[str] = (),
    table: str = TABLE_NAME,
) -> dict[str, Any]:
    """Append one drift verdict for (study, key); returns the row written (aggregates only)."""
    row = drift_row(study, key, result, reference_name, checked_at, forbidden)
    wh.append(table, pa.Table.from_pylist([row], schema=DRIFT))
    return row


def latest_drift(wh: Warehouse, study: str, key: str, table: str = TABLE_NAME) -> dict[str, Any] | None:
    """The newest recorded drift row of (study, key) by ``checked_at``; None when none recorded.

    The returned dict has the table's columns plus ``result`` (``result_json`` parsed).
    """
    return ReleaseStore(wh, TableNames(drift=table)).latest_drift(study, key)


def warehouse_drift_inputs(
    wh: Warehouse, study: str, key: str | None = None, config: TideConfig | None = None
) -> dict[str, Any]:
    """Drift-monitor inputs for one study, read from the warehouse.

    ``notes``: the validated source notes (``read_study_input``); ``spans``: the span cache after
    review (``SpanCache.spans``); ``residual``: with ``key``, the residual screen
    (``screen_released``, surrogate-aware) of the released text in ``tide_deid_notes`` for
    (study, key), using the config's recognizers (default: the ``rules`` preset).  Fingerprints
    let the monitor say "re-baseline" when the measuring recognizers change.  ``forbidden``
    (note and patient ids) is for ``record_drift``'s aggregate-only check.
    """
    config = config or TideConfig.preset("rules")
    names = config.tables
    notes = list(read_study_input(wh, study, config).notes)
    cache = SpanCache(wh, names)
    ids = [n.note_id for n in notes]
    spans = cache.spans(study, ids) if wh.table_exists(names.spans) else None
    fps = {e.fingerprint for e in cache.entries(study).values() if e.fingerprint}
    out: dict[str, Any] = {
        "notes": notes,
        "spans": spans,
        "residual": None,
        "recognizer_fingerprint": fps.pop() if len(fps) == 1 else None,
        "screen_fingerprint": None,
        "forbidden": ids + [n.patient_id for n in notes if n.patient_id],
    }
    if key is None:
        return out
    if not wh.table_exists(names.deid_notes):
        raise InputError(
            "E756",
            f"no released notes table {names.deid_notes!r} for study {study!r} key {key!r}",
            hint="run `tide run` (anonymization) for this study and key first, or omit --key",
        )
    store = ReleaseStore(wh, names)
    released = store.deid_notes(study, key, ["note_id", "text"])
    if not released:
        raise InputError(
            "E756",
            f"no released notes for study {study!r} key {key!r}",
            hint="run anonymization for this study and key first, or omit --key",
        )
    rel_spans: dict[str, list[Any]] = {r["note_id"]: [] for r in released}
    for note_id, ranges in store.surrogate_ranges(study, key).items():
        rel_spans.setdefault(note_id, []).extend(SimpleNamespace(out_start=a, out_end=b) for a, b in ranges)
    recognizers, _, _ = build_recognizers(wh, config, notes)
    screen = screen_released(
        [Note(r["note_id"], "", r["text"] or "", {}) for r in released], recognizers, released_spans=rel_spans
    )
    out["residual"] = screen
    out["screen_fingerprint"] = recognition_fingerprint(recognizers)
    return out
