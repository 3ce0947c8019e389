"""Row hashes, fingerprints, bucket and batch ids, and the candidate's verification
(``tide_core/store/release_content.py``), pure and in well under a second.

Every digest is recomputed here from its documented construction (domain string, length-prefixed parts,
``\\x01`` for a missing value, sorted hashes) with hashlib, not read from the module.
"""

from __future__ import annotations

import hashlib

import pytest

from tide_core.errors import InputError
from tide_core.store import release_content as rc

COLS = ("note_ref", "patient_ref", "note_date", "note_type", "source", "site", "text", "anonymizer", "fingerprint")


def expected_row_hash(study, key, row):
    h = hashlib.sha256(b"tide-row/1")
    for part in (study, key, *(row.get(c) for c in COLS)):
        text = "\x01" if part is None else str(part)
        h.update(len(text).to_bytes(8, "big"))
        h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


ROW = {
    "note_ref": "N1",
    "patient_ref": "P1",
    "note_date": "2020-01-02",
    "note_type": "consult",
    "source": "ehr",
    "site": "S1",
    "text": "Seen by Dr [NAME] on 2020-01-02.",
    "anonymizer": "anon@3",
    "fingerprint": "rec@7",
}


def test_the_column_lists_are_what_a_researcher_sees_and_the_versions():
    assert rc.RESEARCHER_COLUMNS == COLS[:7]
    assert rc.VERSION_COLUMNS == ("anonymizer", "fingerprint")
    assert rc.HASHED_COLUMNS == COLS


def test_a_row_hash_is_the_length_prefixed_digest_of_its_columns():
    h = rc.row_hash("s", "k", ROW)
    assert h == expected_row_hash("s", "k", ROW) and len(h) == 32
    extra = dict(ROW, note_id="n9", row_hash="x", released_at="2026")  # not hashed
    assert rc.row_hash("s", "k", extra) == h


@pytest.mark.parametrize("column", COLS)
def test_every_hashed_column_changes_the_hash(column):
    h = rc.row_hash("s", "k", ROW)
    assert rc.row_hash("s", "k", dict(ROW, **{column: "other"})) != h
    assert rc.row_hash("s", "k", dict(ROW, **{column: None})) == expected_row_hash(
        "s", "k", dict(ROW, **{column: None})
    )


def test_the_hash_is_scoped_by_study_and_key_and_unambiguous():
    h = rc.row_hash("s", "k", ROW)
    assert rc.row_hash("t", "k", ROW) != h and rc.row_hash("s", "k2", ROW) != h
    # moving a character across the study/key boundary is another row (length prefixes)
    assert rc.row_hash("sk", "", ROW) != rc.row_hash("s", "k", ROW)
    # a missing value is neither the empty string nor "None"
    assert rc.row_hash("s", "k", dict(ROW, site=None)) != rc.row_hash("s", "k", dict(ROW, site=""))
    assert rc.row_hash("s", "k", dict(ROW, site=None)) != rc.row_hash("s", "k", dict(ROW, site="None"))
    missing = {c: v for c, v in ROW.items() if c != "site"}
    assert rc.row_hash("s", "k", missing) == rc.row_hash("s", "k", dict(ROW, site=None))


def test_the_hash_of_non_text_values_and_lone_surrogates():
    odd = dict(ROW, note_date=20200102, text="caf\u00e9 \ud800 \U0001f600")
    assert rc.row_hash("s", "k", odd) == expected_row_hash("s", "k", odd)
    # a multi-byte text is prefixed by its length in characters
    assert rc.row_hash("s", "k", dict(ROW, text="\u00e9\u00e9")) == expected_row_hash("s", "k", dict(ROW, text="éé"))


def rows(n=3):
    out = []
    for i in range(n):
        r = dict(ROW, note_ref=f"N{i}", text=f"text {i}")
        r["row_hash"] = expected_row_hash("s", "k", r)
        out.append(r)
    return out


def test_verified_rows_pass():
    rc.verify_rows("s", "k", rows())
    rc.verify_rows("s", "k", [])


def test_rows_without_a_hash_fail_closed_with_their_count():
    rs = rows(4)
    rs[0]["row_hash"] = None
    rs[2]["row_hash"] = ""
    del rs[3]["row_hash"]
    with pytest.raises(InputError) as e:
        rc.verify_rows("s", "k", rs)
    assert e.value.code == "E932"
    assert e.value.message == "3 released rows of s/k carry no row hash"
    assert "anonymization" in e.value.hint


def test_edited_rows_fail_closed_with_their_count():
    rs = rows(4)
    rs[1]["text"] = "edited"
    rs[3]["site"] = "S9"
    with pytest.raises(InputError) as e:
        rc.verify_rows("s", "k", rs)
    assert e.value.code == "E937"
    assert e.value.message == (
        "2 released rows of s/k do not match their row hash: the candidate was changed after anonymization"
    )
    assert "tide_deid_notes" in e.value.hint
    with pytest.raises(InputError) as e:
        rc.verify_rows("s", "k2", rows(2))  # hashed for another key
    assert e.value.code == "E937" and e.value.message.startswith("2 released rows of s/k2")


def test_the_missing_hashes_are_reported_before_the_edited_ones():
    rs = rows(3)
    rs[0]["text"] = "edited"
    rs[1]["row_hash"] = None
    with pytest.raises(InputError) as e:
        rc.verify_rows("s", "k", rs)
    assert e.value.code == "E932" and e.value.message.startswith("1 released rows")


def fp(values):
    h = hashlib.sha256(b"tide-release/1")
    for v in sorted(values):
        h.update(v.encode() + b"\n")
    return h.hexdigest()[:24]


def test_the_content_fingerprint_is_the_digest_of_the_sorted_hashes():
    hs = ["c3", "a1", "b2"]
    got = rc.content_fingerprint(hs)
    assert got == fp(hs) and len(got) == 24
    assert rc.content_fingerprint(iter(reversed(hs))) == got
    assert rc.content_fingerprint(["a1", "b2"]) != got
    assert rc.content_fingerprint(["a", "b1"]) != rc.content_fingerprint(["ab", "1"])
    assert rc.content_fingerprint([]) == hashlib.sha256(b"tide-release/1").hexdigest()[:24]


def test_a_bucket_is_site_source_and_note_type_with_unknown_for_a_gap():
    assert rc.bucket_name(ROW) == "S1|ehr|consult"
    assert rc.bucket_name({"site": None, "source": "", "note_type": "x"}) == "unknown|unknown|x"
    assert rc.bucket_name({}) == "unknown|unknown|unknown"
    assert rc.bucket_name({"site": 3, "source": "s", "note_type": "t"}) == "3|s|t"


def test_bucket_and_batch_ids_are_short_digests_never_the_names():
    name = "Quartermaine Pavilion|mqz@gmail.com|consult"
    bid = rc.bucket_id(name)
    assert bid == "b" + hashlib.sha256(f"tide-bucket/1|{name}".encode()).hexdigest()[:10]
    assert len(bid) == 11 and "Quarter" not in bid
    assert rc.bucket_id("a|b|c") != bid
    assert (
        rc.bucket_id("caf\u00e9|x|y") == "b" + hashlib.sha256("tide-bucket/1|caf\u00e9|x|y".encode()).hexdigest()[:10]
    )
    batch = rc.batch_id(bid, ["h2", "h1"])
    assert batch == "n" + fp([bid, "h2", "h1"])[:10] and len(batch) == 11
    assert rc.batch_id(bid, iter(["h1", "h2"])) == batch
    assert rc.batch_id(rc.bucket_id("a|b|c"), ["h1", "h2"]) != batch
