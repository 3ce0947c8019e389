"""Helpers shared by the release tests: audit every frame of a release, read what researchers see,
and key secrets fixed by name."""

from __future__ import annotations

import hashlib
from typing import Any

from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.warehouse import Warehouse
from tide_core.release import evidence, publish
from tide_core.release.evidence import FramePlan
from tide_core.store.tables import TableNames


def audit_every_frame(
    wh: Warehouse,
    config: TideConfig | TableNames,
    study: str,
    key: str,
    *,
    leaks: int = 0,
    reviewer: str = "test",
    everything: bool = False,
) -> list[FramePlan]:
    """Plan the audit of the content of (study, key) that no round covers (``everything``: all of
    it) and record one round per frame, as a reviewer would: the plan's sample reviewed (a census
    when the frame is small), ``leaks`` of its patients found leaking."""
    names = config.tables if isinstance(config, TideConfig) else config
    plans = evidence.plan_audit(wh, names, study, key, everything=everything)
    for plan in plans:
        evidence.record_round(
            wh, names, study, key, plan.frame_id, plan.sample_size, min(leaks, plan.sample_size), reviewer=reviewer
        )
    return plans


def researchers_see(wh: Warehouse, study: str, key: str, columns: str = "*") -> list[dict[str, Any]]:
    """The rows a researcher reads from ``released_notes`` for (study, key), by note_ref."""
    rows = publish.researcher_rows(wh, study, key, columns)
    return sorted(rows, key=lambda r: str(r.get("note_ref")))


def fixed_key(provider: FileKeyProvider, study: str, key: str, salt: str = "tide-test/1") -> None:
    """Create the key secret of (study, key) as a digest of its name, so the released surrogates
    are the same on every run.  Under a random secret a surrogate now and then equals a known
    value of the note's patient (a surrogate first name that is the patient's city, a surrogate
    web address holding it), and ``known_phi_survives`` blocks the release; a test that is not
    about that must not depend on the draw."""
    if not provider.has(study, key):
        provider.create(study, key)
    provider.path(study, key).write_text(hashlib.sha256(f"{salt}|{study}|{key}".encode()).hexdigest() + "\n")
