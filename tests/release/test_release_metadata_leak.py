"""No source metadata value reaches researchers, tide_releases, audits, Dagster storage or logs.

Notes carry PHI in their metadata columns (a site named after a person, an e-mail as source, a
surname in the note type, a date, a doctor).  The study is released through Dagster on a
persistent instance in a temporary DAGSTER_HOME (event log, run storage, compute logs on disk),
audited and published, once per mode (module fixture; every log record of the pipeline is
captured).  Then every file under DAGSTER_HOME, every captured log line, the ``tide_releases``,
``tide_audits``, ``tide_audit_frames`` and ``tide_release_versions`` rows and the researcher store
are searched for the planted values: none may appear (except in the researcher store when the
values are in the site's vocabulary).
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa
import pytest

import release_study
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.config import TideConfig
from tide_core.io.open import open_warehouse
from tide_core.release import evidence
from tide_core.runner import recognize_study

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S, K = "big", "k1"
PLANTED = {
    "site": ["Quartermaine Pavilion", "Mar 4"],
    "source": ["mqz@gmail.com", "Dr Ng"],
    "note_type": ["Vantongeren consult", "Okonkwo-Haraway follow-up"],
}
VALUES = [v for vs in PLANTED.values() for v in vs]


def _plant(rows: list[dict]) -> list[dict]:
    out = []
    for i, r in enumerate(rows):
        r = dict(r)
        for col, values in PLANTED.items():
            r[col] = values[i % len(values)]
        out.append(r)
    return out


class _Lines(logging.Handler):
    """Every log record of every logger, formatted with its arguments, at any level."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module", params=["withheld", "in the vocabulary"])
def released(request, tmp_path_factory) -> Iterator[Path]:
    """Released with no vocabulary (the values are withheld), or with the values in the site's
    vocabulary (researchers see them: they are released data) -- either way they stay out of the
    release's bookkeeping, Dagster and the logs."""
    from tide_etl import build_defs
    from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

    tmp_path = tmp_path_factory.mktemp("leak")
    root, level, lines = logging.getLogger(), logging.getLogger().level, _Lines()
    root.setLevel(logging.DEBUG)
    root.addHandler(lines)
    monkeypatch = pytest.MonkeyPatch()
    url = f"duckdb:{tmp_path / 'wh.duckdb'}"
    config = TideConfig.preset("rules")
    config_file = tmp_path / "tide.toml"
    vocabulary = "".join(f"{c} = {json.dumps(v)}\n" for c, v in PLANTED.items())
    in_vocabulary = request.param == "in the vocabulary"
    config_file.write_text('preset = "rules"\n' + ("[metadata_vocabulary]\n" + vocabulary if in_vocabulary else ""))
    try:
        with open_warehouse(url) as wh:
            wh.replace_table("notes", pa.Table.from_pylist(_plant(release_study.notes(80, 20, seed=4))))
            wh.replace_table("patients", pa.Table.from_pylist(release_study.patients(20)))
            recognize_study(wh, S, config, progress=False)
        FileKeyProvider(tmp_path / "keys").create(S, K)
        home = tmp_path / "dagster_home"
        home.mkdir()
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        defs = build_defs(
            {
                "warehouse": WarehouseResource(url=url),
                "tide_config": TideConfigResource(config_file=str(config_file)),
                "key_provider": KeyProviderResource(key_dir=str(tmp_path / "keys")),
                "gate": ReleaseGateResource(),
            }
        )
        _release(defs, url, config)
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
        monkeypatch.undo()
    (tmp_path / "mode").write_text(request.param)
    (tmp_path / "log.txt").write_text("\n".join(lines.lines))
    yield tmp_path


def _release(defs: dg.Definitions, url: str, config: TideConfig) -> None:
    """release_job, a census audit with no leak, release_checks_job: published (on DAGSTER_HOME's instance)."""
    from tide_etl.partitions import release_key

    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("study", [S])
        instance.add_dynamic_partitions("key", [K])

        def run(job: str) -> None:
            result = defs.resolve_job_def(job).execute_in_process(
                partition_key=release_key(S, K), instance=instance, raise_on_error=False
            )
            assert result.success

        run("release_job")
        with open_warehouse(url) as wh:
            for p in evidence.plan_audit(wh, config.tables, S, K):
                evidence.record_round(wh, config.tables, S, K, p.frame_id, p.n_patients, 0, reviewer="test")
        run("release_checks_job")


def _found(blob: str) -> list[str]:
    low = blob.casefold()
    return [v for v in VALUES if v.casefold() in low]


def test_no_planted_metadata_value_leaves_the_source_tables(released: Path):
    with open_warehouse(f"duckdb:{released / 'wh.duckdb'}") as wh:
        release = wh.read_table("tide_releases").to_pylist()
        assert release[0]["status"] == "published"
        for table in ("tide_releases", "tide_audits", "tide_audit_frames", "tide_release_versions", "tide_runs"):
            assert _found(str(wh.read_table(table).to_pylist())) == [], table
    with duckdb.connect(str(released / "wh.released.duckdb"), read_only=True) as con:
        seen = con.execute("SELECT * FROM released_notes").fetchall()
    assert len(seen) == 80
    if (released / "mode").read_text() == "withheld":
        assert _found(str(seen)) == [] and {r[8] for r in seen} == {"[withheld]"}  # site
    else:  # released on purpose: the researchers' file is the only place they go
        assert sorted(_found(str(seen))) == sorted(VALUES)
    home = released / "dagster_home"
    files = [p for p in home.rglob("*") if p.is_file()]
    assert files, "the instance wrote nothing to disk"
    for path in files:
        assert _found(path.read_bytes().decode("utf-8", "replace")) == [], path
    log = (released / "log.txt").read_text()
    loggers = {line.split(" ", 1)[0].split(".")[0] for line in log.splitlines()}
    assert {"tide", "dagster"} <= loggers  # the pipeline's records were captured, TIDE's and Dagster's
    assert _found(log) == []


def test_the_planted_values_are_really_there(released: Path):
    """The source holds them (the search above could not pass by looking in the wrong place)."""
    with duckdb.connect(str(released / "wh.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT site, source, note_type FROM notes").fetchall()
    assert sorted(_found(str(rows))) == sorted(VALUES)
