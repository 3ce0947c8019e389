"""Study values that name no study: NULL, empty, whitespace-padded, zero-width.

Their rows were never processed, without a word, and ``' s'`` / ``'s<U+200B>'`` were discovered
as studies that the CLI then refused (E100).  Now they are never discovered, and every source
row is accounted for: recognized or quarantined in its study's run, or counted (never shown)
in the E620 / E621 warnings of every run of the table and of study discovery.
"""

from __future__ import annotations

import logging

import pytest

from tide_core.anonymize.keys import check_name
from tide_core.config import TideConfig
from tide_core.errors import KeyProviderError
from tide_core.io.duckdb_warehouse import DuckDBWarehouse
from tide_core.runner import recognize_study
from tide_etl.discovery import discover_studies, study_discovery

CONFIG = TideConfig.preset("rules")
ZWSP = "s\u200b"
STUDIES = {"a": 3, "b.2": 2, None: 2, "": 1, " s": 2, ZWSP: 1, "s ": 1}  # study value -> rows


@pytest.fixture
def wh(tmp_path):
    with DuckDBWarehouse(tmp_path / "s.duckdb") as wh:
        wh.sql("CREATE TABLE notes (note_id VARCHAR, patient_id VARCHAR, study VARCHAR, text VARCHAR)")
        i = 0
        for study, n in STUDIES.items():
            for _ in range(n):
                wh.sql("INSERT INTO notes VALUES (?, 'p1', ?, 'Call 617-555-0199 today.')", [f"n{i}", study])
                i += 1
        yield wh


def test_ill_formed_values_fail_the_study_name_check():
    for bad in (" s", ZWSP, "s "):
        with pytest.raises(KeyProviderError):
            check_name("study", bad)


def test_only_study_names_are_discovered_and_the_rest_counted(wh, caplog):
    with caplog.at_level(logging.WARNING, logger="tide.discovery"):
        studies, census = study_discovery(wh)
    assert studies == ["a", "b.2"] == discover_studies(wh)
    assert (census.n_null, census.n_ill_formed, census.n_ill_formed_values) == (3, 4, 3)
    logged = [r.getMessage() for r in caplog.records if r.name == "tide.discovery"]
    assert any("[E620] 3 row(s)" in m for m in logged) and any("[E621] 4 row(s)" in m for m in logged)
    for m in logged:
        assert "\u200b" not in m and "' s'" not in m and "'s '" not in m


def test_the_tide_studies_table_is_checked_too(wh):
    wh.sql("CREATE TABLE tide_studies AS SELECT * FROM (VALUES ('a'), (' a'), (NULL)) t(study)")
    studies, census = study_discovery(wh)
    assert studies == ["a"] and (census.n_null, census.n_ill_formed) == (1, 1)


def test_every_row_is_recognized_quarantined_or_counted(wh):
    reports = [recognize_study(wh, s, CONFIG, progress=False) for s in discover_studies(wh)]
    for r in reports:
        [null] = [w for w in r.warnings if w.startswith("[E620]")]
        [ill] = [w for w in r.warnings if w.startswith("[E621]")]
        assert "3 row(s)" in null and "4 row(s)" in ill and "3 distinct value(s)" in ill
        for w in (null, ill):
            assert "\u200b" not in w and "' s'" not in w and "'s '" not in w  # counts, never the values
    processed = sum(r.n_rows for r in reports)
    assert processed == STUDIES["a"] + STUDIES["b.2"]
    assert processed + 3 + 4 == wh.count("notes")  # recognized or quarantined, or counted in E620 / E621


def test_a_clean_table_has_no_study_warning(tmp_path):
    with DuckDBWarehouse(tmp_path / "c.duckdb") as wh:
        wh.sql("CREATE TABLE notes AS SELECT 'n1' AS note_id, 'p1' AS patient_id, 'a' AS study, 'x y' AS text")
        report = recognize_study(wh, "a", CONFIG, progress=False)
        assert not any(w.startswith(("[E620]", "[E621]")) for w in report.warnings)
        assert study_discovery(wh)[1].warnings("notes") == []
