"""The ``tide_releases`` row of one (study, key): counts, versions and the gate decision.

Counts only (no text, no values).  Re-materializing release_summary after audit rounds are
recorded in ``tide_audits`` re-evaluates the gate; that is how a release becomes validated.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

import pyarrow as pa

RELEASES = pa.schema(
    [
        ("study", pa.string()),
        ("key", pa.string()),
        ("n_in", pa.int64()),
        ("n_released", pa.int64()),
        ("n_quarantined", pa.int64()),
        ("n_spans", pa.int64()),
        ("spans_by_label", pa.string()),
        ("anonymizer", pa.string()),
        ("recognizers", pa.string()),
        ("gate_passed", pa.bool_()),
        ("gate_reasons", pa.string()),
        ("gate_statement", pa.string()),
        ("decided_at", pa.timestamp("us", tz="UTC")),
    ]
)


def summarize_release(wh, config, study: str, key: str, policy=None, table: str = "tide_releases") -> dict:
    from tide_etl.release_checks import _release_rows, _source_notes, release_gate

    part = {"study": study, "key": key}
    deid = _release_rows(wh, config.tables, study, key, "deid_notes", ["anonymizer"])
    spans = _release_rows(wh, config.tables, study, key, "released_spans", ["label", "recognizer"])
    n_q = wh.count(config.tables.quarantine, part) if wh.table_exists(config.tables.quarantine) else 0
    gate = release_gate(wh, config, study, key, policy)
    row = {
        "study": study,
        "key": key,
        "n_in": _source_notes(wh, config, study)["n_rows"],
        "n_released": len(deid),
        "n_quarantined": n_q,
        "n_spans": len(spans),
        "spans_by_label": json.dumps(dict(sorted(Counter(s["label"] for s in spans).items()))),
        "anonymizer": ", ".join(sorted({r["anonymizer"] for r in deid if r["anonymizer"]})),
        "recognizers": ", ".join(sorted({s["recognizer"] for s in spans if s["recognizer"]})),
        "gate_passed": gate.passed,
        "gate_reasons": gate.metadata["reasons"] if not gate.passed else "",
        "gate_statement": gate.metadata["statement"],
        "decided_at": dt.datetime.now(dt.UTC),
    }
    wh.replace_partition(table, pa.Table.from_pylist([row], schema=RELEASES), part)
    return row
