"""Where the default model is looked for and written: independent of the working directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

import tide_core.model_location as model_location


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A fake home and XDG data dir (nothing is written to the real home), no TIDE_MODEL_DIR,
    and a working directory that is neither."""
    home, xdg, work = tmp_path / "home", tmp_path / "xdg", tmp_path / "work"
    for d in (home, xdg, work):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    monkeypatch.delenv("TIDE_MODEL_DIR", raising=False)
    monkeypatch.chdir(work)
    monkeypatch.setattr(model_location, "_legacy_notice_shown", False)
    return tmp_path


def _fake_model(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"")
    (d / "tide_model.json").write_text("{}")
    return d


def _user_dir(root: Path) -> Path:
    return root / "xdg" / "tide-etl" / "models" / "default"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout")
def test_default_location_is_per_user_not_cwd(isolated, monkeypatch):
    expected = _user_dir(isolated)
    assert model_location.default_model_location() == expected
    assert model_location.default_model_target() == expected
    assert model_location.default_model_dir(must_exist=False) == expected
    assert Path.cwd() not in expected.parents
    other = isolated / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    assert model_location.default_model_location() == expected  # same from any working directory
    assert model_location.model_search_locations() == [expected, other / ".tide" / "models" / "default"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout")
def test_default_location_without_xdg_uses_home(isolated, monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME")
    assert (
        model_location.default_model_location()
        == isolated / "home" / ".local" / "share" / "tide-etl" / "models" / "default"
    )


def test_model_found_from_another_working_directory(isolated, monkeypatch):
    d = _fake_model(model_location.default_model_target())
    other = isolated / "project"
    other.mkdir()
    monkeypatch.chdir(other)
    assert model_location.default_model_exists()
    assert model_location.default_model_dir() == d
    assert model_location.default_model_spec()["model_dir"] == str(d)


def test_tide_model_dir_overrides(isolated, monkeypatch):
    env = isolated / "custom"
    monkeypatch.setenv("TIDE_MODEL_DIR", str(env))
    _fake_model(_user_dir(isolated))  # ignored when TIDE_MODEL_DIR is set
    assert model_location.default_model_location() == env
    assert model_location.default_model_target() == env
    assert model_location.model_search_locations() == [env]
    assert not model_location.default_model_exists()
    _fake_model(env)
    assert model_location.default_model_dir() == env


def test_missing_model_error_lists_locations_and_fix(isolated, monkeypatch):
    from tide_core.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        model_location.default_model_dir()
    msg = str(exc.value)
    assert exc.value.code == "E361"
    assert str(model_location.default_model_target()) in msg
    assert str(isolated / "work" / ".tide" / "models" / "default") in msg
    assert "tide train-recognizer --default" in msg and "TIDE_MODEL_DIR" in msg
    monkeypatch.setenv("TIDE_MODEL_DIR", str(isolated / "nothing"))
    with pytest.raises(ConfigError) as exc:
        model_location.default_model_dir()
    assert str(isolated / "nothing") in str(exc.value)


def test_legacy_cwd_model_still_read_with_one_notice(isolated, capsys):
    legacy = _fake_model(isolated / "work" / ".tide" / "models" / "default")
    assert model_location.default_model_dir() == legacy
    assert model_location.default_model_location() == legacy
    err = capsys.readouterr().err
    assert err.count("old location") == 1 and str(model_location.user_model_location()) in err
    assert err.strip().count("\n") == 0  # one line
    new = _fake_model(model_location.default_model_target())  # the new location wins once it has a model
    assert model_location.default_model_dir() == new


def _cli(argv):
    from tide_core.cli import cmd_train_recognizer

    parser = argparse.ArgumentParser()
    cmd_train_recognizer.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def test_train_default_writes_to_user_dir_and_is_idempotent(isolated, monkeypatch, capsys):
    from tide_core.cli import cmd_train_recognizer  # the command looks the trainer up in its own module
    from tide_core.training.trainer import TrainResult

    calls = []

    def fake_train(out, progress=True, **overrides):
        calls.append((Path(out), overrides))
        _fake_model(Path(out))
        return TrainResult(Path(out), 1, 0.1, 10, 100.0, 0.5)

    monkeypatch.setattr(cmd_train_recognizer, "train_default_model", fake_train)
    assert _cli(["train-recognizer", "--default", "--no-progress"]) == 0
    assert calls == [
        (_user_dir(isolated) if sys.platform.startswith("linux") else model_location.default_model_target(), {})
    ]
    assert not (isolated / "work" / ".tide").exists()
    capsys.readouterr()
    assert _cli(["train-recognizer", "--default", "--no-progress"]) == 0  # idempotent
    assert len(calls) == 1 and "nothing to do" in capsys.readouterr().err
    assert _cli(["train-recognizer", "--default", "--force", "--no-progress", "--threads", "1"]) == 0
    assert len(calls) == 2 and calls[1][1] == {"num_threads": 1}


def test_train_default_respects_legacy_model(isolated, monkeypatch, capsys):
    from tide_core.cli import cmd_train_recognizer  # the command looks the trainer up in its own module

    legacy = _fake_model(isolated / "work" / ".tide" / "models" / "default")
    monkeypatch.setattr(cmd_train_recognizer, "train_default_model", lambda *a, **k: pytest.fail("must not retrain"))
    assert _cli(["train-recognizer", "--default", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert str(legacy) in err and "--force" in err and str(model_location.default_model_target()) in err
