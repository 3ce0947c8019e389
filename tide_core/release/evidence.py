"""Audit evidence bound to content: frames, rounds and the gate's verdict per batch.

An **audit frame** is exactly the set of released rows (by row hash, with their pseudonymous
patient refs) a reviewer sampled from: ``tide release audit plan`` writes one frame per bucket
of content that no earlier round covers, draws the patients to review, and the round recorded
against it (``tide release audit record --frame``) counts only for the rows its frame holds.

The gate groups the candidate's rows by bucket and by the frames (with rounds) that hold them:

- rows no round covers form an **unaudited batch** (new nightly notes, re-recognized or
  re-anonymized notes, a new key, recognizer or anonymizer version: all new row hashes) and
  hold the release at ``awaiting_audit``; unchanged rows keep their evidence;
- a covered batch is judged by *every* round of *every* frame that holds it (a failed round is
  never outweighed): each frame's rounds give an exact upper bound ``D`` on the number of leaky
  patients in the frame (hypergeometric for one round: a census with no leak gives ``D = 0``;
  pooled Clopper-Pearson for several; the weighted bound for richness-stratified rounds; the
  largest when a frame has both), and since the batch is part of the frame, at most ``D`` of its
  patients leak: the batch's bound is ``max over frames of D / patients in the batch``.

A round may not be recorded against a frame one of whose rounds found a leak (no redraw after
a failed round, E769), nor may a new frame be planned over rows such a frame holds: the content
has to change (be re-made) before it can be audited again.

Everything that can reach ``tide_releases``, Dagster metadata or logs is an id (bucket ids,
batch ids, frame ids) or a count, never a metadata value.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tide_core.assurance.audit_table import AuditRecord, records_from_table, records_to_table
from tide_core.assurance.bounds import clopper_pearson_upper, finite_population_sample_size, hypergeometric_upper_count
from tide_core.assurance.gate import ReleaseGatePolicy, evaluate_release
from tide_core.assurance.stratified import Stratum, stratified_upper_bound
from tide_core.errors import InputError, TideError
from tide_core.io.warehouse import Warehouse
from tide_core.release.scan import rows_by_hash, stream_rows
from tide_core.store import tables
from tide_core.store.release_content import (
    BUCKET_COLUMNS,
    HASHED_COLUMNS,
    BatchDigest,
    bucket_id,
    bucket_name,
    content_fingerprint,
    raise_unverified,
    unverified_counts,
)
from tide_core.store.release_store import ReleaseStore
from tide_core.store.tables import TableNames


@dataclass(frozen=True, slots=True)
class CandidateRow:
    """One released row of the candidate, as the gate sees it (no text, no values)."""

    row_hash: str
    patient_ref: str
    bucket: str  # site|source|note_type (released, screened values): the operator's plan only
    bucket_id: str


#: Candidate rows read (with their text, to verify their hashes) at a time.
CANDIDATE_BATCH_ROWS = 2_000


def candidate_rows(wh: Warehouse, names: TableNames, study: str, key: str) -> list[CandidateRow]:
    """The candidate's rows of (study, key), each verified against its row hash (E932 / E937:
    a row without one, or edited after anonymization, fails closed).

    Streamed :data:`CANDIDATE_BATCH_ROWS` rows at a time: only the hashes, patient refs and
    (shared) bucket names are kept, never the text.
    """
    out = []
    buckets: dict[str, tuple[str, str]] = {}
    patients: dict[str, str] = {}  # one string per patient ref, however many notes it has
    for rows in _verified_batches(wh, names, study, key):
        for r in rows:
            ref = str(r["patient_ref"] or "")
            out.append(CandidateRow(str(r["row_hash"]), patients.setdefault(ref, ref), *_bucket(r, buckets)))
    return out


def _verified_batches(wh: Warehouse, names: TableNames, study: str, key: str) -> Iterator[list[dict[str, Any]]]:
    """The candidate's rows with their hashed columns, :data:`CANDIDATE_BATCH_ROWS` at a time; after
    the last batch, E932 / E937 for every row without a hash or not matching it."""
    missing = bad = 0
    for rows in stream_rows(
        wh, names.deid_notes, ["row_hash", *HASHED_COLUMNS], {"study": study, "key": key}, CANDIDATE_BATCH_ROWS
    ):
        m, b = unverified_counts(study, key, rows)
        missing, bad = missing + m, bad + b
        yield rows
    raise_unverified(study, key, missing, bad)


def _bucket(row: Mapping[str, Any], buckets: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(bucket name, bucket id) of a released row, one shared tuple per bucket."""
    name = bucket_name(row)
    bucket = buckets.get(name)
    if bucket is None:
        bucket = buckets[name] = (name, bucket_id(name))
    return bucket


def verify_candidate(wh: Warehouse, names: TableNames, study: str, key: str) -> int:
    """Verify every candidate row of (study, key) against its row hash, streamed and keeping
    nothing (E932 / E937 as :func:`candidate_rows`); the number of rows."""
    return sum(len(rows) for rows in _verified_batches(wh, names, study, key))


def sorted_candidate_rows(wh: Warehouse, names: TableNames, study: str, key: str) -> Iterator[CandidateRow]:
    """The candidate's rows of (study, key) in ascending row-hash order, as the warehouse sorts
    them, one batch in memory at a time (no text read: verify with :func:`verify_candidate`)."""
    buckets: dict[str, tuple[str, str]] = {}
    for rows in rows_by_hash(wh, names.deid_notes, study, key, ["row_hash", "patient_ref", *BUCKET_COLUMNS]):
        for r in rows:
            yield CandidateRow(str(r["row_hash"] or ""), str(r["patient_ref"] or ""), *_bucket(r, buckets))


@dataclass(frozen=True)
class Frame:
    """A recorded audit frame: its bucket id, the row hashes it holds and its distinct patients."""

    frame_id: str
    bucket_id: str
    hashes: frozenset[str]
    patients: frozenset[str]


def frames(wh: Warehouse, names: TableNames, study: str, key: str) -> dict[str, Frame]:
    """Every audit frame of (study, key)."""
    acc: dict[str, tuple[str, set[str], set[str]]] = {}
    for r in ReleaseStore(wh, names).rows(
        "audit_frames", study, key, ["frame_id", "bucket_id", "row_hash", "patient_ref"]
    ):
        b, hs, ps = acc.setdefault(r["frame_id"], (r["bucket_id"], set(), set()))
        hs.add(r["row_hash"])
        ps.add(r["patient_ref"] or "")
    return {f: Frame(f, b, frozenset(hs), frozenset(ps)) for f, (b, hs, ps) in acc.items()}


def audit_records(wh: Warehouse, names: TableNames, study: str, key: str) -> list[AuditRecord]:
    """Every recorded round of (study, key)."""
    return records_from_table(ReleaseStore(wh, names).audits(study, key))


# -- plan and record -----------------------------------------------------------------------------------


@dataclass
class FramePlan:
    """The audit of one frame: how many of its patients to review, and which (seeded draw)."""

    frame_id: str
    bucket: str  # the bucket's name: shown to the operator, never stored outside the plan
    bucket_id: str
    n_notes: int
    n_patients: int
    sample_size: int
    sample: list[str] = field(default_factory=list)  # patient refs to review

    @property
    def census(self) -> bool:
        return self.sample_size >= self.n_patients

    def to_dict(self) -> dict[str, Any]:
        return {
            "frame_id": self.frame_id,
            "bucket": self.bucket,
            "bucket_id": self.bucket_id,
            "n_notes": self.n_notes,
            "n_patients": self.n_patients,
            "sample_size": self.sample_size,
            "census": self.census,
            "sample": self.sample,
        }


def _failed_frames(records: Sequence[AuditRecord]) -> set[str]:
    return {r.frame_id for r in records if r.frame_id and r.n_leaks > 0}


def plan_audit(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    *,
    target_rate: float = 0.01,
    confidence: float = 0.95,
    max_leaks: int = 0,
    seed: int = 42,
    everything: bool = False,
) -> list[FramePlan]:
    """Write one audit frame per bucket of the candidate's content that no round covers yet
    (``everything``: of all its content) and draw each frame's sample; idempotent for the same
    content (the frame id is a digest of the bucket and its rows)."""
    rows = candidate_rows(wh, names, study, key)
    if not rows:
        raise InputError("E930", f"release {study}/{key} has no released rows to audit", hint="run anonymization first")
    known = frames(wh, names, study, key)
    records = audit_records(wh, names, study, key)
    with_rounds = {r.frame_id for r in records if r.frame_id}
    failed = _failed_frames(records)
    covered = {h for f in with_rounds if f in known for h in known[f].hashes}
    blocked = {h for f in failed if f in known for h in known[f].hashes}
    todo = [r for r in rows if everything or r.row_hash not in covered]
    held = sum(1 for r in rows if r.row_hash in blocked)
    if any(r.row_hash in blocked for r in todo) or (held and not todo):
        raise InputError(
            "E769",
            f"{held} released rows of {study}/{key} are held by an audit round that found leaks; another draw "
            "of the same content is refused",
            hint="fix the cause, re-make the release (new content), then audit the new content",
        )
    by_bucket: dict[str, list[CandidateRow]] = defaultdict(list)
    for r in todo:
        by_bucket[r.bucket].append(r)
    plans: list[FramePlan] = []
    now = dt.datetime.now(dt.UTC)
    for name in sorted(by_bucket):
        members = by_bucket[name]
        bid = members[0].bucket_id
        frame_id = "f" + content_fingerprint([bid, *(m.row_hash for m in members)])[:15]
        if frame_id not in known:
            table = tables.to_table(
                "audit_frames",
                [
                    {
                        "study": study,
                        "key": key,
                        "frame_id": frame_id,
                        "bucket_id": bid,
                        "row_hash": m.row_hash,
                        "patient_ref": m.patient_ref,
                        "created_at": now,
                    }
                    for m in members
                ],
            )
            wh.replace_partition(names.audit_frames, table, {"study": study, "key": key, "frame_id": frame_id})
        patients = sorted({m.patient_ref for m in members})
        size = finite_population_sample_size(len(patients), target_rate, confidence, max_leaks)
        n = len(patients) if size is None else min(size, len(patients))
        sample = sorted(random.Random(f"{seed}|{frame_id}").sample(patients, n))
        plans.append(FramePlan(frame_id, name, bid, len(members), len(patients), n, sample))
    return plans


def record_round(
    wh: Warehouse,
    names: TableNames,
    study: str,
    key: str,
    frame_id: str,
    n_patients: int,
    n_leaks: int,
    *,
    reviewer: str,
    confidence: float = 0.95,
    stratum: str = "",
    stratum_population: int | None = None,
) -> AuditRecord:
    """Append one audit round of ``frame_id`` to ``tide_audits`` (refused: an unknown frame,
    more patients than the frame holds, no reviewer, or a frame that already failed)."""
    frame = frames(wh, names, study, key).get(frame_id)
    if frame is None:
        raise InputError(
            "E931",
            f"release {study}/{key} has no audit frame {frame_id!r}",
            hint="plan the audit first (tide release audit plan) and record against a frame id it printed",
        )
    if not reviewer.strip():
        raise InputError("E933", "an audit round needs a named reviewer", hint="pass --reviewer NAME-OR-ROLE")
    if not 0 <= n_leaks <= n_patients or n_patients < 1:
        raise InputError("E740", "an audit round needs n >= 1 and 0 <= leaks <= n", hint="check --n and --leaks")
    cap = stratum_population if stratum else len(frame.patients)
    if n_patients > (cap or 0):
        raise InputError(
            "E747",
            f"audit round reviewed {n_patients} patients but its frame holds {cap}",
            hint="pass --n as the number of patients actually reviewed",
        )
    if frame_id in _failed_frames(audit_records(wh, names, study, key)):
        raise InputError(
            "E769",
            "a round of this audit frame already found leaks; another draw of the same content is refused",
            hint="fix the cause, re-make the release (new content), then audit the new content",
        )
    record = AuditRecord.create(
        study,
        key,
        frame.bucket_id,
        n_patients,
        n_leaks,
        confidence,
        reviewer,
        stratum=stratum,
        stratum_population=stratum_population,
        frame_id=frame_id,
        frame_patients=len(frame.patients),
    )
    wh.append(names.audits, records_to_table([record]))
    return record


# -- the gate --------------------------------------------------------------------------------------------


def frame_leak_bound(records: Sequence[AuditRecord], n_frame_patients: int, confidence: float) -> int:
    """Upper bound on the number of leaky patients in a frame from all its rounds (see module doc)."""
    simple = [r for r in records if not r.stratum]
    strata: dict[str, list[int]] = {}
    for r in records:
        if r.stratum:
            n, k, pop = strata.setdefault(r.stratum, [0, 0, 0])
            strata[r.stratum] = [n + r.n_patients_sampled, k + r.n_leaks, max(pop, r.stratum_population or 0)]
    bounds = []
    if len(simple) == 1:
        r = simple[0]
        bounds.append(hypergeometric_upper_count(n_frame_patients, r.n_patients_sampled, r.n_leaks, confidence))
    elif simple:
        n = min(sum(r.n_patients_sampled for r in simple), n_frame_patients)
        k = min(sum(r.n_leaks for r in simple), n)
        bounds.append(math.ceil(clopper_pearson_upper(n, k, confidence) * n_frame_patients))
    if strata:
        try:
            rate = stratified_upper_bound(
                [Stratum(s, pop, n, k) for s, (n, k, pop) in sorted(strata.items())], confidence
            )
        except TideError:
            rate = 1.0
        bounds.append(math.ceil(rate * n_frame_patients))
    return min(max(bounds, default=n_frame_patients), n_frame_patients)


@dataclass
class EvidenceDecision:
    """The gate's verdict on a candidate: per batch (ids and counts only) and overall."""

    passed: bool
    awaiting_audit: bool
    reasons: list[str]
    batches: dict[str, dict[str, Any]]
    statement: str
    n_rounds_counted: int
    n_rounds_without_frame: int
    drift_band: str | None = None

    def metadata(self, policy: ReleaseGatePolicy) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "awaiting_audit": self.awaiting_audit,
            "n_batches": len(self.batches),
            "n_batches_unaudited": sum(1 for b in self.batches.values() if not b["frames"]),
            "n_rounds_counted": self.n_rounds_counted,
            "n_rounds_without_frame": self.n_rounds_without_frame,
            "worst_upper_bound": max((b["upper_bound"] for b in self.batches.values()), default=1.0),
            "reasons": "; ".join(self.reasons) or "none",
            "drift_band": self.drift_band or "none recorded",
            "statement": self.statement,
            "target_rate": policy.target_rate,
            "confidence": policy.confidence,
            "policy": policy.describe(),
            "approval": policy.approval,
        }


@dataclass
class _Group:
    """One batch of :func:`evaluate_evidence` as its rows stream by (ascending row hash): its id's
    digest, its notes and its distinct patients."""

    digest: BatchDigest
    n_notes: int = 0
    patients: set[str] = field(default_factory=set)

    def add(self, row: CandidateRow) -> None:
        self.digest.add(row.row_hash)
        self.n_notes += 1
        self.patients.add(row.patient_ref)


def _groups(
    rows: Iterable[CandidateRow], known_frames: Mapping[str, Frame], by_frame: Mapping[str, list[AuditRecord]]
) -> dict[tuple[str, frozenset[str]], _Group]:
    """The candidate's rows by (bucket id, frames of recorded rounds that hold them): its batches.

    A list is sorted here; a stream comes sorted by row hash (the warehouse sorts) and is not kept.
    """
    groups: dict[tuple[str, frozenset[str]], _Group] = {}
    for row in sorted(rows, key=lambda r: r.row_hash) if isinstance(rows, Sequence) else rows:
        cover = frozenset(f for f in by_frame if row.row_hash in known_frames[f].hashes)
        group = groups.get((row.bucket_id, cover))
        if group is None:
            group = groups[(row.bucket_id, cover)] = _Group(BatchDigest(row.bucket_id))
        group.add(row)
    return groups


def evaluate_evidence(
    rows: Iterable[CandidateRow],
    known_frames: Mapping[str, Frame],
    records: Iterable[AuditRecord],
    policy: ReleaseGatePolicy,
    drift_band: str | None = None,
    population: str = "this release",
) -> EvidenceDecision:
    """Judge a candidate's rows by the rounds whose frames hold them (see the module doc); a
    stream of rows (:func:`sorted_candidate_rows`) is judged as it passes, never held."""
    records = list(records)
    framed = [r for r in records if r.frame_id and r.frame_id in known_frames]
    by_frame: dict[str, list[AuditRecord]] = defaultdict(list)
    for r in framed:
        by_frame[r.frame_id].append(r)
    frame_d = {f: frame_leak_bound(rs, len(known_frames[f].patients), policy.confidence) for f, rs in by_frame.items()}
    groups = _groups(rows, known_frames, by_frame)
    reasons: list[str] = []
    batches: dict[str, dict[str, Any]] = {}
    unaudited = 0
    leaked = 0
    every = policy.required_buckets is None or len(policy.required_buckets) > 0
    for (bid, cover), group in sorted(groups.items(), key=lambda g: (g[0][0], sorted(g[0][1]))):
        name = group.digest.batch_id()
        patients = len(group.patients)
        n_notes = group.n_notes
        leaks = sum(r.n_leaks for f in cover for r in by_frame[f])
        sampled = sum(r.n_patients_sampled for f in cover for r in by_frame[f])
        bound = max((min(1.0, frame_d[f] / patients) for f in cover), default=1.0) if patients else 0.0
        ok = bool(cover) and bound < policy.target_rate
        batches[name] = {
            "bucket_id": bid,
            "n_notes": n_notes,
            "n_patients": patients,
            "frames": sorted(cover),
            "n_patients_sampled": sampled,
            "n_leaks": leaks,
            "upper_bound": bound,
            "passed": ok,
        }
        if not cover:
            unaudited += 1
            if every:
                reasons.append(f"batch {name} ({n_notes} notes, {patients} patients) has no audit: unvalidated")
        elif not ok:
            leaked += bool(leaks)
            reasons.append(
                f"batch {name}: {leaks} leaks in {sampled} patients reviewed gives an upper bound of "
                f"{bound * 100:.4f}% at {policy.confidence * 100:g}% confidence, "
                f"not below {policy.target_rate * 100:g}%"
            )
    if policy.require_audit and not framed:
        reasons.insert(0, "no audit round covers this content: the release is unvalidated (tide release audit plan)")
    drift = evaluate_release([], drift_band, replace(policy, require_audit=False, required_buckets=()))
    reasons.extend(drift.reasons)
    passed = not reasons
    # only a want of evidence (no round, or clean rounds too small) awaits audit; a leak or drift blocks
    awaiting = not passed and not leaked and not drift.reasons
    statement = ""
    if passed and framed and batches:  # a policy that requires no audit passes with nothing to state
        worst = max(b["upper_bound"] for b in batches.values())
        conf = f"{policy.confidence * 100:g}%"
        statement = (
            f"With {conf} confidence, no patient of {population} has a leaked identifier: the audits of every "
            "batch (all or nearly all of its patients reviewed) found none"
            if worst == 0
            else f"With {conf} confidence, fewer than {worst * 100:.2f}% of the patients of {population} "
            "have a leaked identifier, in every audited batch"
        ) + f" [{len(framed)} audit rounds, {len(batches)} batches]"
    return EvidenceDecision(
        passed,
        awaiting,
        reasons,
        batches,
        statement,
        len(framed),
        sum(1 for r in records if not r.frame_id or r.frame_id not in known_frames),
        drift_band,
    )
