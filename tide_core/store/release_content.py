"""What a release *is*, as digests: one hash per released row, one fingerprint per release.

A row's hash covers every column a researcher sees (refs, date, screened metadata, text) and the
versions that produced it (recognition fingerprint, anonymizer), scoped by (study, key).  Audit
frames record row hashes, published versions are sets of row hashes, and the content fingerprint
of a release is the digest of its sorted row hashes: evidence and versions name exactly the
content they cover, and any change of text, key, recognizer or anonymizer is new content.

Bucket ids stand for audit buckets (site | source | note type) wherever a name could reach a
table, an event or a log: a short digest, never the metadata values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from tide_core.errors import InputError, WarehouseError

#: The columns researchers see, in the order of the researcher view (no source ids, offsets,
#: operators or recognizer names).
RESEARCHER_COLUMNS = ("note_ref", "patient_ref", "note_date", "note_type", "source", "site", "text")
#: What else a row's hash covers: the versions that produced the released text.
VERSION_COLUMNS = ("anonymizer", "fingerprint")
_ROW_DOMAIN = "tide-row/1"
#: The columns that name a released row's audit bucket (:func:`bucket_name`).
BUCKET_COLUMNS = ("site", "source", "note_type")


def row_hash(study: str, key: str, row: Mapping[str, object]) -> str:
    """The digest of one released row (32 hex characters)."""
    h = hashlib.sha256(_ROW_DOMAIN.encode())
    for part in (study, key, *(row.get(c) for c in RESEARCHER_COLUMNS + VERSION_COLUMNS)):
        text = "\x01" if part is None else str(part)
        h.update(len(text).to_bytes(8, "big"))
        h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


#: Every column a row's hash covers (what to read to verify it).
HASHED_COLUMNS = (*RESEARCHER_COLUMNS, *VERSION_COLUMNS)


def unverified_counts(study: str, key: str, rows: Sequence[Mapping[str, object]]) -> tuple[int, int]:
    """(rows without a row hash, rows whose stored hash is not the hash of their content)."""
    missing = sum(1 for r in rows if not r.get("row_hash"))
    bad = sum(1 for r in rows if r.get("row_hash") and r["row_hash"] != row_hash(study, key, r))
    return missing, bad


def raise_unverified(study: str, key: str, missing: int, bad: int) -> None:
    """Fail closed (E932 / E937) when any row lacks its hash or does not match it."""
    if missing:
        raise InputError(
            "E932",
            f"{missing} released rows of {study}/{key} carry no row hash",
            hint="re-run anonymization for this (study, key) (tide run --stage anonymize, or release_job)",
        )
    if bad:
        raise InputError(
            "E937",
            f"{bad} released rows of {study}/{key} do not match their row hash: the candidate was changed "
            "after anonymization",
            hint="re-run anonymization for this (study, key); find out who edited tide_deid_notes",
        )


def verify_rows(study: str, key: str, rows: Sequence[Mapping[str, object]]) -> None:
    """Fail closed (E937 / E932) unless every row's stored ``row_hash`` is the hash of its content:
    a row edited after anonymization is content no check, audit or version vouched for."""
    raise_unverified(study, key, *unverified_counts(study, key, rows))


class SortedDigest:
    """:func:`content_fingerprint`'s digest fed one value at a time in ascending order (as a
    warehouse sorted them): the same 24 hex characters in constant memory.

    A value smaller than the one before fails closed (E379): the warehouse compared text in
    another order than code points, and the digest would name other content.
    """

    def __init__(self) -> None:
        self._h = hashlib.sha256(b"tide-release/1")
        self._last: str | None = None
        self.n = 0

    def add(self, value: str) -> None:
        """Add the next value; it must not sort before the previous one."""
        if self._last is not None and value < self._last:
            raise WarehouseError(
                "E379",
                "the warehouse returned sorted values out of code-point order",
                hint="use the warehouse's binary (code-point) collation for TIDE's tables",
            )
        self._last = value
        self._h.update(value.encode() + b"\n")
        self.n += 1

    def hexdigest(self) -> str:
        """The digest of the values added so far (24 hex characters)."""
        return self._h.hexdigest()[:24]


def content_fingerprint(hashes: Iterable[str]) -> str:
    """The fingerprint of a release: a digest of its sorted row hashes (24 hex characters)."""
    digest = SortedDigest()
    for value in sorted(hashes):
        digest.add(value)
    return digest.hexdigest()


class BatchDigest:
    """:func:`batch_id` of one bucket's rows, fed their row hashes in ascending order: the bucket
    takes its place among them as the sort would put it."""

    def __init__(self, bucket: str) -> None:
        self._digest = SortedDigest()
        self._bucket: str | None = bucket

    def add(self, row_hash: str) -> None:
        """Add the next row hash (ascending)."""
        if self._bucket is not None and self._bucket <= row_hash:
            self._digest.add(self._bucket)
            self._bucket = None
        self._digest.add(row_hash)

    def batch_id(self) -> str:
        """The batch's id, ``n`` + 10 hex, as :func:`batch_id` gives it."""
        if self._bucket is not None:
            self._digest.add(self._bucket)
            self._bucket = None
        return "n" + self._digest.hexdigest()[:10]


def bucket_name(row: Mapping[str, object]) -> str:
    """An audit bucket (``site|source|note_type``) of a released row, for the operator's plan only."""
    return "|".join(str(row.get(c) or "unknown") for c in BUCKET_COLUMNS)


def bucket_id(name: str) -> str:
    """The id of a bucket, safe for tables, events and logs: ``b`` + 10 hex of its digest."""
    return "b" + hashlib.sha256(f"tide-bucket/1|{name}".encode()).hexdigest()[:10]


def batch_id(bucket: str, hashes: Iterable[str]) -> str:
    """The id of a batch of rows (one bucket's rows with the same evidence): ``n`` + 10 hex."""
    return "n" + content_fingerprint([bucket, *hashes])[:10]
