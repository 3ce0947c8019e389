"""The ``tide`` command line, run as a real subprocess."""

import os
import stat
import subprocess
import sys

import duckdb


def tide(*args, cwd, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "tide_core.cli.main", *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=300
    )


def test_keys_new_and_list(tmp_path):
    r = tide("keys", "new", "--study", "s1", "--key", "k1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    p = tmp_path / ".tide" / "keys" / "s1" / "k1.key"
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    secret = p.read_text().strip()
    assert secret not in r.stdout + r.stderr
    r = tide("keys", "list", cwd=tmp_path)
    assert "s1\tk1" in r.stdout and secret not in r.stdout
    r = tide("keys", "new", "--study", "s1", "--key", "k1", cwd=tmp_path)
    assert r.returncode == 2 and "already exists" in r.stderr and "Traceback" not in r.stderr


def test_demo_then_run_with_a_rotated_key(tmp_path):
    r = tide("demo", "--preset", "rules", "--n-notes", "60", "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "released=" in r.stdout
    con = duckdb.connect(str(tmp_path / "tide_demo.duckdb"))
    n_notes = con.sql("SELECT count(*) FROM notes").fetchone()[0]
    n_rel = con.sql("SELECT count(*) FROM tide_deid_notes WHERE key = 'k1'").fetchone()[0]
    n_q = con.sql("SELECT count(*) FROM tide_quarantine WHERE key = 'k1'").fetchone()[0]
    con.close()
    assert n_notes > 50 and n_rel + n_q == n_notes
    assert tide("keys", "new", "--study", "demo", "--key", "k2", cwd=tmp_path).returncode == 0
    r = tide(
        "run",
        "--warehouse",
        "duckdb:tide_demo.duckdb",
        "--study",
        "demo",
        "--key",
        "k2",
        "--preset",
        "rules",
        "--no-progress",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "recognized=0" in r.stdout  # all cache hits: recognition did not re-run
    con = duckdb.connect(str(tmp_path / "tide_demo.duckdb"))
    assert con.sql("SELECT count(*) FROM tide_deid_notes WHERE key = 'k2'").fetchone()[0] == n_rel
    con.close()


def test_errors_are_one_line_with_a_hint(tmp_path):
    r = tide("run", "--warehouse", "duckdb:x.duckdb", "--study", "s", "--key", "k", "--preset", "rules", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("error: [E108]") and "tide keys new" in r.stderr and "Traceback" not in r.stderr
    tide("keys", "new", "--study", "s", "--key", "k", cwd=tmp_path)
    r = tide("run", "--warehouse", "duckdb:x.duckdb", "--study", "s", "--key", "k", "--preset", "rules", cwd=tmp_path)
    assert r.returncode == 2 and "notes table" in r.stderr


def test_train_default_is_idempotent(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "tide_model.json").write_text("{}")
    r = tide("train-recognizer", "--default", "--output", str(out), cwd=tmp_path)
    assert r.returncode == 0 and "already" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["tide_model.json"]
