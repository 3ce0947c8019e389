"""The ONNX Runtime path of the HF token classifier agrees with the PyTorch reference.

A tiny BERT is trained here for a few seconds on the synthetic training corpus (so its spans are
real, learnt spans, not the near-ties of a random model), exported to ONNX fp32 and int8, and
run on synthetic corpora the model was not trained on (in-house benchmark notes, out-of-generator
messages, and long notes cut into many windows).

Tolerances, span level (exact note, start, end and label; agreement = F1 of the two span sets):

* ``onnx`` (fp32): >= 0.99 agreement and scores within 1e-3 (the logits differ by ~1e-5);
* ``onnx-int8``: >= 0.97 agreement on this tiny model (quantization noise moves a few boundaries
  and low-margin tags; measured 0.993).  The bound that matters for the default model is its
  quality: micro recall within 0.005 of the reference on ``benchmarks.quality`` (docs/results/speed.md).
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
    from benchmarks.precision import train_small_model

    # the precision bench's tiny model: 120 steps on 80 synthetic notes, one thread
    return train_small_model(tmp_path_factory.mktemp("onnx") / "model", steps=120, threads=1)


@pytest.fixture(scope="module")
def notes() -> list[Note]:
    from benchmarks.corpora import load_corpus

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
    from benchmarks.precision import agreement

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


def test_registry_spec_selects_the_runtime(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tide_core.inference.runtime_choice import RUNTIME_ENV, default_runtime_name, runtime_options
    from tide_core.model_location import default_model_spec
    from tide_core.recognizers.registry import create

    spec = default_model_spec(model_dir)
    assert {k: spec[k] for k in ("runtime", "dtype")} == runtime_options(default_runtime_name())
    assert create({**spec, "runtime": "onnx", "dtype": "float32"}).config()["runtime"] == "onnx"
    monkeypatch.setenv(RUNTIME_ENV, "torch-bfloat16")
    pinned = default_model_spec(model_dir)
    assert (pinned["runtime"], pinned["dtype"]) == ("torch", "bfloat16")
    assert create(pinned).config()["dtype"] == "bfloat16"  # so it is in the recognition fingerprint
    monkeypatch.setenv(RUNTIME_ENV, "onnx-int8")
    int8 = create(default_model_spec(model_dir)).config()
    assert int8["runtime"] == "onnx-int8" and "dtype" not in int8  # float32 adds nothing to the fingerprint


def test_the_default_runtime_follows_the_cpu_unless_pinned(tmp_path: Path) -> None:
    from tide_core.inference.runtime_choice import RUNTIME_ENV, cpu_flags, default_runtime_name

    amx = frozenset({"avx512f", "amx_tile", "amx_bf16", "amx_int8"})
    assert default_runtime_name(amx, {}) == "torch-bfloat16"
    assert default_runtime_name(frozenset({"avx2", "fma", "avx512_vnni"}), {}) == "onnx-int8"
    assert default_runtime_name(frozenset(), {}) == "onnx-int8"  # no cpuinfo: the portable runtime
    assert default_runtime_name(amx, {RUNTIME_ENV: "onnx-int8"}) == "onnx-int8"
    assert default_runtime_name(frozenset(), {RUNTIME_ENV: " torch "}) == "torch"
    with pytest.raises(ConfigError) as err:
        default_runtime_name(amx, {RUNTIME_ENV: "int8"})
    assert err.value.code == "E364" and RUNTIME_ENV in str(err.value) and "onnx-int8" in err.value.hint
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2 amx_bf16 amx_tile\n\n")
    assert cpu_flags(info) == {"fpu", "avx2", "amx_bf16", "amx_tile"}
    info.write_text("processor : 0\nFeatures : fp asimd bf16\n")  # arm64 spells it Features
    assert cpu_flags(info) == {"fp", "asimd", "bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_cli_exports_the_default_runtime(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from tide_core.cli import cmd_train_recognizer
    from tide_core.inference.runtime_choice import RUNTIME_ENV

    parser = argparse.ArgumentParser()
    cmd_train_recognizer.register(parser.add_subparsers())
    monkeypatch.setenv(RUNTIME_ENV, "onnx-int8")  # the default on a CPU without AMX
    args = parser.parse_args(["train-recognizer", "--default", "--output", str(model_dir), "--export-onnx"])
    assert args.func(args) == 0  # the model exists: no training, only the export
    err = capsys.readouterr().err
    assert "already" in err and "onnx-int8" in err
    assert list((model_dir.resolve().parent / "model.onnx").glob("*/*.onnx"))
    # PyTorch bfloat16 (the default on a CPU with AMX) needs no ONNX file
    other = tmp_path / "copy"
    shutil.copytree(model_dir, other)
    monkeypatch.setenv(RUNTIME_ENV, "torch-bfloat16")
    args = parser.parse_args(["train-recognizer", "--default", "--output", str(other), "--export-onnx"])
    assert args.func(args) == 0
    assert "no ONNX file to build" in capsys.readouterr().err
    assert not (other.resolve().parent / "copy.onnx").exists()


def test_speed_bench_has_a_default_row_per_runtime(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One default row per runtime of ``--runtimes`` (the model of the setting, int8, float32 and
    bfloat16 side by side), each named and timed against the same Presidio analyzer; an unknown
    name is refused before any timing."""
    from benchmarks import speed

    monkeypatch.setenv("TIDE_MODEL_DIR", str(model_dir))
    argv = ["--n-notes", "2", "--n-long", "0", "--repeats", "1", "--skip-rules"]
    assert speed.main([*argv, "--runtimes", "onnx-int8,torch,torch-bfloat16"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| default |")]
    assert len(rows) == 3, rows
    assert "model [onnx-int8] + rules" in rows[0] and "model [torch] + rules" in rows[1], rows
    assert "model [torch-bfloat16] + rules" in rows[2], rows
    assert all(float(line.rstrip("| x").rsplit("|", 1)[-1].strip().rstrip("x")) > 0 for line in rows)
    assert "ONNX Runtime intra-op threads" in out and "load average" in out
    with pytest.raises(ConfigError):
        speed.main([*argv, "--runtimes", "torch-int4"])


def test_speed_bench_compares_several_models_side_by_side_without_the_rules_rows(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks import speed

    other = tmp_path / "student"
    shutil.copytree(model_dir, other)
    argv = ["--n-notes", "2", "--n-long", "0", "--repeats", "1", "--runtimes", "onnx-int8", "--skip-rules"]
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
    """The GPU device script (benchmarks.precision) runs end to end on a CPU."""
    import json

    from benchmarks.precision import main

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


def test_bench_runtime_names_map_to_recognizer_options() -> None:
    from tide_core.inference.runtime_choice import RUNTIME_NAMES, runtime_options

    assert runtime_options("onnx-int8") == {"runtime": "onnx-int8", "dtype": "float32"}
    assert runtime_options("torch") == {"runtime": "torch", "dtype": "float32"}
    assert runtime_options("torch-bfloat16") == {"runtime": "torch", "dtype": "bfloat16"}
    assert runtime_options("torch-float16") == {"runtime": "torch", "dtype": "float16"}
    for bad in ("onnx-bfloat16", "torch-float32", "torch-", "tensorrt"):
        with pytest.raises(ConfigError) as err:
            runtime_options(bad)
        assert err.value.code == "E364" and "torch-bfloat16" in err.value.hint
    assert set(RUNTIME_NAMES) == {"torch", "onnx", "onnx-int8", "torch-bfloat16", "torch-float16"}


def test_quality_bench_takes_a_model_runtime(model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """``--model-runtime torch-bfloat16`` runs the model in bfloat16: its recall is the bfloat16
    recognizer's, not the default runtime's, and a bad name is a clear error (exit 2)."""
    import json

    from benchmarks import quality

    base = ["--corpora", "inhouse", "--seed", "3", "--n-notes", "4", "--no-ablation", "--resamples", "0"]
    base += ["--model-dir", str(model_dir)]
    assert quality.main([*base, "--model-runtime", "torch-bfloat16", "--json", str(tmp_path / "bf16.json")]) == 0
    report = json.loads((tmp_path / "bf16.json").read_text())
    options = {"runtime": "torch", "dtype": "bfloat16"}
    assert report["model_options"] == options  # the report says how the model ran
    assert report["model"]["runtime"] == options  # ... also where the runtime comes from the options
    half = report["corpora"][0]
    corpus = quality.load_corpus("inhouse", 4, 3)
    specs = quality.default_specs(corpus.patients, str(model_dir), model_options=options)
    direct = quality.bench_corpus(corpus, specs, n_resamples=0, ablation=False, progress=False)
    assert half["full"]["span"]["overall"]["micro_recall"] == direct["full"]["span"]["overall"]["micro_recall"]
    assert half["full"]["chars"]["overall"]["uncovered_chars"] == direct["full"]["chars"]["overall"]["uncovered_chars"]
    assert quality.main([*base, "--model-runtime", "bfloat16"]) == 2
    # with no --model-runtime the report still names the runtime that ran (here pinned by the setting)
    monkeypatch.setenv("TIDE_MODEL_RUNTIME", "torch")
    assert quality.main([*base, "--json", str(tmp_path / "default.json")]) == 0
    report = json.loads((tmp_path / "default.json").read_text())
    assert report["model_options"] == {}
    assert report["model"]["runtime"] == {"runtime": "torch", "dtype": "float32"}
