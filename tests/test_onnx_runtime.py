"""The ONNX Runtime path of the HF token classifier agrees with the PyTorch reference.

A tiny BERT is trained here for a few seconds on the synthetic training corpus (so its spans are
real, learnt spans, not the near-ties of a random model), exported to ONNX fp32 and int8, and
run on synthetic corpora the model was not trained on (in-house benchmark notes, out-of-generator
messages, and long notes cut into many windows).

Tolerances, span level (exact note, start, end and label; agreement = F1 of the two span sets):

* ``onnx`` (fp32): >= 0.99 agreement and scores within 1e-3 (the logits differ by ~1e-5);
* ``onnx-int8``: >= 0.97 agreement on this tiny model (quantization noise moves a few boundaries
  and low-margin tags; measured 0.993).  The bound that matters for the default model is its
  quality: micro recall within 0.005 of the reference on ``tide_core.bench.quality`` (README, Speed).
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from tide_core.errors import ConfigError
from tide_core.spans import Note, Span

FP32_AGREEMENT = 0.99
INT8_AGREEMENT = 0.97


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tide_core.bench.precision import train_small_model

    # the precision bench's tiny model: 120 steps on 80 synthetic notes, one thread
    return train_small_model(tmp_path_factory.mktemp("onnx") / "model", steps=120, threads=1)


@pytest.fixture(scope="module")
def notes() -> list[Note]:
    from tide_core.bench.corpora import load_corpus

    out: list[Note] = []
    for name, n in (("inhouse", 25), ("oog-messages", 25)):
        for i, g in enumerate(load_corpus(name, n, seed=7).gold):
            out.append(Note(f"{name}-{i}", "p", g.text))
    long_text = "\n\n".join(n.text for n in out[:25])  # many windows of 64 tokens
    out.append(Note("long", "p", long_text))
    out.append(Note("empty", "p", ""))
    return out


def _rec(model_dir: Path, runtime: str, **kw: object) -> object:
    from tide_core.recognizers.hf_token_classifier import HFTokenClassifierRecognizer

    return HFTokenClassifierRecognizer(model_dir, window=64, overlap=8, batch_size=4, runtime=runtime, **kw)


def _spans(rec: object, notes: list[Note]) -> list[Span]:
    per = rec.recognize_many(notes)  # type: ignore[attr-defined]
    return [s for spans in per for s in spans]


def _agreement(a: list[Span], b: list[Span]) -> float:
    """F1 of the two span sets (the precision bench's measure)."""
    from tide_core.bench.precision import agreement

    return agreement(a, b)


@pytest.fixture(scope="module")
def reference(model_dir: Path, notes: list[Note]) -> list[Span]:
    spans = _spans(_rec(model_dir, "torch"), notes)
    assert len(spans) > 50  # the tiny model really finds spans
    return spans


def test_fp32_onnx_agrees_with_torch(model_dir: Path, notes: list[Note], reference: list[Span]) -> None:
    rec = _rec(model_dir, "onnx")
    spans = _spans(rec, notes)
    assert _agreement(spans, reference) >= FP32_AGREEMENT
    ref = {(s.note_id, s.start, s.end, s.label): s.score for s in reference}
    common = [(s.score, ref[k]) for s in spans if (k := (s.note_id, s.start, s.end, s.label)) in ref]
    assert common and max(abs(a - b) for a, b in common) < 1e-3
    assert all(s.recognizer == "tide.hf@1" for s in spans)


def test_int8_onnx_agrees_within_tolerance(model_dir: Path, notes: list[Note], reference: list[Span]) -> None:
    spans = _spans(_rec(model_dir, "onnx-int8"), notes)
    agreement = _agreement(spans, reference)
    print(f"int8 span agreement with torch: {agreement:.4f} ({len(spans)} vs {len(reference)} spans)")
    assert agreement >= INT8_AGREEMENT, agreement


def test_batches_do_not_change_predictions(model_dir: Path, notes: list[Note]) -> None:
    """Length-bucketed batches (many windows per batch) give the spans of one note at a time."""
    big = _rec(model_dir, "onnx", threads=1)
    one = _rec(model_dir, "onnx", threads=1)
    one.batch_size = 1  # type: ignore[attr-defined]
    batched = big.recognize_many(notes)  # type: ignore[attr-defined]
    single = [one.recognize(n) for n in notes]  # type: ignore[attr-defined]
    for a, b in zip(batched, single, strict=True):
        assert [(s.start, s.end, s.label) for s in a] == [(s.start, s.end, s.label) for s in b]
        assert all(abs(x.score - y.score) < 1e-4 for x, y in zip(a, b, strict=True))


def test_export_is_cached_beside_the_model_and_keyed_by_its_hash(model_dir: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from tide_core.inference.onnx_export import RECIPES, onnx_model
    from tide_core.text.model_hash import model_dir_hash

    first = onnx_model(model_dir, "onnx")
    h = model_dir_hash(model_dir)
    assert first.path == model_dir.resolve().parent / "model.onnx" / h / f"model.{RECIPES['onnx']}.onnx"
    mtime = first.path.stat().st_mtime_ns
    again = onnx_model(model_dir, "onnx")
    assert not again.built and again.path == first.path and first.path.stat().st_mtime_ns == mtime
    assert not list(first.path.parent.glob("*.tmp"))  # nothing half-written left behind

    # other weights: another hash, another file, never the stale export
    other = tmp_path / "other"
    m = AutoModelForTokenClassification.from_pretrained(str(model_dir), local_files_only=True)
    with torch.no_grad():
        m.classifier.bias += 0.5
    m.save_pretrained(str(other))
    AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True).save_pretrained(str(other))
    moved = onnx_model(other, "onnx")
    assert moved.built and moved.model_hash != h and moved.path.parent.name == moved.model_hash


def test_runtime_is_part_of_the_fingerprint(model_dir: Path) -> None:
    torch_rec, fp32, int8 = (_rec(model_dir, r) for r in ("torch", "onnx", "onnx-int8"))
    prints = {r.fingerprint() for r in (torch_rec, fp32, int8)}  # type: ignore[attr-defined]
    assert len(prints) == 3
    assert "runtime" not in torch_rec.config()  # type: ignore[attr-defined]  # reference fingerprints unchanged
    assert int8.config()["runtime"] == "onnx-int8" and int8.config()["onnx_recipe"]  # type: ignore[attr-defined]
    # threads do not change outputs and stay out of the fingerprint
    assert _rec(model_dir, "onnx", threads=1).fingerprint() == fp32.fingerprint()  # type: ignore[attr-defined]


def test_bad_runtime_settings_are_config_errors(model_dir: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        _rec(model_dir, "tensorrt")
    assert exc.value.code == "E364" and "onnx-int8" in exc.value.hint
    with pytest.raises(ConfigError) as exc:
        _rec(model_dir, "onnx", device="cuda")
    assert exc.value.code == "E368"


def test_recognizer_pickles_without_its_session(model_dir: Path, notes: list[Note]) -> None:
    rec = _rec(model_dir, "onnx")
    before = rec.recognize(notes[0])  # type: ignore[attr-defined]
    clone = pickle.loads(pickle.dumps(rec))
    assert clone._session is None  # reloaded lazily in the worker
    assert clone.recognize(notes[0]) == before


def test_registry_spec_selects_the_runtime(model_dir: Path) -> None:
    from tide_core.model_location import DEFAULT_MODEL_OPTIONS, default_model_spec
    from tide_core.recognizers.registry import create

    spec = default_model_spec(model_dir)
    assert spec["runtime"] == DEFAULT_MODEL_OPTIONS["runtime"]
    assert create({**spec, "runtime": "onnx"}).config()["runtime"] == "onnx"


def test_cli_exports_the_default_runtime(model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from tide_core.cli import cmd_train_recognizer
    from tide_core.model_location import DEFAULT_MODEL_OPTIONS

    parser = argparse.ArgumentParser()
    cmd_train_recognizer.register(parser.add_subparsers())
    args = parser.parse_args(["train-recognizer", "--default", "--output", str(model_dir), "--export-onnx"])
    assert args.func(args) == 0  # the model exists: no training, only the export
    err = capsys.readouterr().err
    assert "already" in err and str(DEFAULT_MODEL_OPTIONS["runtime"]) in err
    assert list((model_dir.resolve().parent / "model.onnx").glob("*/*.onnx"))


def test_speed_bench_has_a_default_row_per_runtime(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tide_core.bench import speed

    monkeypatch.setenv("TIDE_MODEL_DIR", str(model_dir))
    argv = ["--n-notes", "3", "--n-long", "0", "--repeats", "1", "--runtimes", "onnx-int8,torch"]
    assert speed.main(argv) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| default |")]
    assert len(rows) == 2, rows
    assert "model [onnx-int8] + rules" in rows[0] and "model [torch] + rules" in rows[1]
    assert all(float(line.rstrip("| x").rsplit("|", 1)[-1].strip().rstrip("x")) > 0 for line in rows)
    assert "ONNX Runtime intra-op threads" in out and "load average" in out


def test_speed_bench_compares_several_models_side_by_side_without_the_rules_rows(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tide_core.bench import speed

    other = tmp_path / "student"
    shutil.copytree(model_dir, other)
    argv = ["--n-notes", "3", "--n-long", "0", "--repeats", "1", "--runtimes", "onnx-int8", "--skip-rules"]
    assert speed.main([*argv, "--model-dirs", f"{model_dir},{other}"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| row")]
    assert not [line for line in rows if line.startswith(("| rules", "| regex layer", "| anonymizer"))]
    default = [line for line in rows if line.startswith("| default |")]
    assert len(default) == 2, default
    assert f"model {model_dir.name} [onnx-int8]" in default[0] and "model student [onnx-int8]" in default[1]
    assert all(float(line.rstrip("| x").rsplit("|", 1)[-1].strip().rstrip("x")) > 0 for line in default)


BF16_AGREEMENT = 0.9


def test_half_precision_torch_agrees_and_is_in_the_fingerprint(
    model_dir: Path, notes: list[Note], reference: list[Span]
) -> None:
    """bfloat16 (the half precision a CPU runs; float16 is for GPUs) keeps the spans of float32
    within tolerance, and a dtype other than the reference's is part of the fingerprint."""
    half = _rec(model_dir, "torch", dtype="bfloat16")
    spans = _spans(half, notes)
    agreement = _agreement(spans, reference)
    print(f"bfloat16 span agreement with float32: {agreement:.4f} ({len(spans)} vs {len(reference)} spans)")
    assert agreement >= BF16_AGREEMENT, agreement
    assert next(half._model.parameters()).dtype.is_floating_point  # type: ignore[attr-defined]
    assert str(next(half._model.parameters()).dtype) == "torch.bfloat16"  # type: ignore[attr-defined]
    assert half.config()["dtype"] == "bfloat16"  # type: ignore[attr-defined]
    assert "dtype" not in _rec(model_dir, "torch").config()  # type: ignore[attr-defined]
    assert half.fingerprint() != _rec(model_dir, "torch").fingerprint()  # type: ignore[attr-defined]
    for bad in ({"dtype": "float8"}, {"dtype": "float16", "runtime": "onnx-int8"}):
        with pytest.raises(ConfigError) as exc:
            _rec(model_dir, str(bad.pop("runtime", "torch")), **bad)
        assert exc.value.code == "E369"


def test_precision_bench_runs_on_the_cpu(model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The GPU device script (tide_core.bench.precision) runs end to end on a CPU."""
    import json

    from tide_core.bench.precision import main

    out = model_dir.parent / "precision.json"
    args = ["--device", "cpu", "--dtypes", "float32,bfloat16", "--batch-sizes", "4,16", "--notes", "6"]
    assert main([*args, "--model", str(model_dir), "--window", "64", "--overlap", "8", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| cpu | bfloat16 | 16 |" in table
    rows = json.loads(out.read_text())["rows"]
    assert [(r["dtype"], r["batch_size"]) for r in rows] == [
        ("float32", 4),
        ("bfloat16", 4),
        ("float32", 16),
        ("bfloat16", 16),
    ]
    fp32 = [r for r in rows if r["dtype"] == "float32"]
    assert all(r["agreement_cpu_fp32"] == 1.0 and r["tokens_per_s"] > 0 and r["spans"] > 0 for r in fp32)
    assert all(r["agreement_cpu_fp32"] >= BF16_AGREEMENT for r in rows)
