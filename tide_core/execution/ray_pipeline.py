"""Distributed recognition (and any per-note map, e.g. anonymization) on Ray actor pools.

``RayRecognition(config).run(notes, recognizer_specs, policy)`` returns the same
:class:`~tide_core.engine.recognition.RecognitionBatch` as
``recognize_notes(notes, [create(s) for s in specs], policy)``; only where it runs differs.

Pipeline (every stage a pool of long-lived actors sized from the cluster, see
:mod:`tide_core.execution.ray_actors`; Ray hands each group from one stage's actor to the next):

    notes ─► groups (short / long notes batched separately)
          ─► WindowStage (CPU)  ─► PredictStage (GPU)  ─► AssembleStage (CPU)   [model recognizers]
             (on CPU-only clusters one fused ModelStage per core; split_model_stages=True splits it)
          ─► MatchStage (CPU: regex, gazetteer, known-PHI) + resolution (in the last stage's actors)
          ─► driver: one record per note, in input order

The pools outlive a run: later waves, chunks and runs with the same stage arguments reuse the
loaded actors (a Ray Data execution started new worker processes and loaded every recognizer
again each time, ~8 s here before the first note).

Fault tolerance.  Out-of-memory inside a stage splits the batch in half down to one note (the
note then fails closed with ``E501``).  An actor that dies is restarted (``max_restarts``) and its
task re-run (``max_task_retries``); a task's output is only kept once it completes, so a retried
group is neither lost nor duplicated; the driver also checks every note comes back exactly once
and fails any that does not with ``E504`` (quarantined, recognized again on the next run since
failed notes are cache misses).

Memory.  The driver feeds notes in *waves* of at most ``wave_notes`` notes, with a bounded number
of groups in flight, so driver and object-store memory stay flat however large the corpus;
:meth:`RayRecognition.iter_run` yields one batch per wave for callers that write results as they go.
"""

from __future__ import annotations

import functools
import logging
import pickle
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import ray
from tqdm import tqdm

from tide_core.engine.anonymization import anonymize_notes
from tide_core.engine.recognition import (
    E_LOST,
    NoteRecognition,
    RecognitionBatch,
    RecognitionStats,
    _check_unique,
    as_policy,
)
from tide_core.errors import ConfigError, TideError
from tide_core.execution import ray_actors as ra
from tide_core.execution import ray_stages as st
from tide_core.execution.ray_session import cluster_resources, ensure_ray
from tide_core.recognizers import registry
from tide_core.spans import Note, Quarantined, Span

if TYPE_CHECKING:
    from tide_core.anonymize.keys import KeyRing
    from tide_core.config import TideConfig
    from tide_core.engine.anonymization import ReleasedNote

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int | None], None]


@dataclass
class RayRecognitionConfig:
    """Where and how wide recognition runs.  None of this changes the output (or the fingerprint)."""

    address: str | None = None  # ray://HEAD:10001, "auto"; default: RAY_ADDRESS, else local Ray
    num_gpus_per_actor: float = 0  # > 0 puts the PredictStage on GPUs
    num_cpus_per_actor: float = 1  # capped so every stage fits on small machines
    batch_size_short: int = 64  # notes per group for notes shorter than long_note_chars
    batch_size_long: int = 8  # notes per group for long notes
    long_note_chars: int = 20_000
    min_actors: int = 1
    max_actors: int | None = None  # per stage; None: sized from ray.cluster_resources()
    max_retries: int = 3  # task retries / actor restarts after a worker dies
    wave_notes: int = 20_000  # notes the driver holds per wave (bounds memory)
    isolate_lost: bool = True  # rerun notes lost with a dead worker in halves, down to one
    split_model_stages: bool | None = None  # window/predict/assemble in 3 pools; None: only with GPUs
    start_timeout_s: float = 600.0  # new actors must be up (recognizers loaded) by then, else E517
    local_num_cpus: int | None = None  # for a local Ray only; default: all cores
    progress: bool = True  # tqdm on stderr
    on_progress: ProgressFn | None = None

    def __post_init__(self) -> None:
        for name in ("batch_size_short", "batch_size_long", "long_note_chars", "min_actors", "wave_notes"):
            if int(getattr(self, name)) < 1:
                raise ConfigError("E512", f"RayRecognitionConfig.{name} must be >= 1", hint="use a positive integer")
        if self.max_actors is not None and self.max_actors < self.min_actors:
            raise ConfigError(
                "E512",
                "RayRecognitionConfig.max_actors is below min_actors",
                hint="raise max_actors or leave it None to size from the cluster",
            )
        if self.max_retries < 0:
            raise ConfigError("E512", "RayRecognitionConfig.max_retries must be >= 0")


@dataclass
class StagePlan:
    """Actor pool sizes and per-actor resources, derived from the cluster."""

    cpus_per_actor: float  # light CPU stages (window, assemble, match)
    gpus_per_actor: float  # predict actors (0: predict on CPUs)
    predict_cpus: float  # CPUs reserved by one predict actor
    predict_threads: int  # torch intra-op threads in one predict actor
    min_actors: int
    max_cpu_actors: int
    max_gpu_actors: int  # predict pool size (GPU or CPU actors)
    stages: list[str] = field(default_factory=list)


def plan_stages(config: RayRecognitionConfig, n_staged: int, n_rules: int, resources: Mapping[str, float]) -> StagePlan:
    """Size the pools from the cluster.

    Rules only: the match actors share the CPUs.  With a model on CPUs the forward pass is the
    bottleneck: one predict actor per core, and the light stages (tokenizing, stitching, regex)
    get a fraction of a CPU each, so every stage is schedulable at once (stages that each ask for whole
    CPUs on <= 4 cores would wait on each other's reservations).  With GPUs: one predict actor per
    ``num_gpus_per_actor`` GPUs and the CPUs for the light stages.  Without GPUs the three model
    stages are fused into one ``ModelStage`` (they would share the same cores anyway) unless
    ``split_model_stages=True``.
    """
    split = config.split_model_stages
    if split is None:
        split = config.num_gpus_per_actor > 0
    light = (["window", "assemble"] if n_staged and split else []) + (["match"] if n_rules else [])
    model = (["window", "predict", "assemble"] if split else ["model"]) if n_staged else []
    stages = model + (["match"] if n_rules else [])
    cpu = max(float(resources.get("CPU", 1.0)), 1.0)
    gpu = float(resources.get("GPU", 0.0))
    want = float(config.num_cpus_per_actor)
    n_light = max(1, len(light))
    if not n_staged:
        per = min(want, cpu / (n_light + 0.5))
        per = max(0.05, int(per * 100) / 100)
        max_cpu = config.max_actors or max(1, int(cpu / per))
        return StagePlan(per, 0.0, 0.0, 1, max(1, min(config.min_actors, max_cpu)), max_cpu, 0, stages)
    if config.num_gpus_per_actor > 0:
        if gpu < config.num_gpus_per_actor:
            raise ConfigError(
                "E513",
                f"the cluster has {gpu:g} GPUs, a predict actor needs {config.num_gpus_per_actor:g}",
                hint="add a GPU worker group or set num_gpus_per_actor=0 to predict on CPUs",
            )
        max_pred = max(1, int(gpu // config.num_gpus_per_actor))
        if config.max_actors:
            max_pred = min(max_pred, config.max_actors)
        pred_cpus = min(want, max(0.25, cpu / (4 * max_pred)))
        per = max(0.05, int(min(want, (cpu - pred_cpus * max_pred) / (n_light + 0.5)) * 100) / 100)
        max_cpu = config.max_actors or max(1, int((cpu - pred_cpus * max_pred) / per / n_light))
        return StagePlan(
            per,
            float(config.num_gpus_per_actor),
            pred_cpus,
            max(1, int(want)),
            max(1, min(config.min_actors, max_cpu)),
            max_cpu,
            max_pred,
            stages,
        )
    per = max(0.05, int(min(want, cpu / (4 * n_light)) * 100) / 100)
    max_pred = config.max_actors or max(1, int(cpu))
    pred_cpus = max(0.05, int(min(want, (cpu - per * len(light)) / max_pred) * 100) / 100)
    max_cpu = config.max_actors or max(1, int(cpu // 4) or 1)
    return StagePlan(
        per,
        0.0,
        pred_cpus,
        max(1, int(round(want))),
        max(1, min(config.min_actors, max_cpu)),
        max_cpu,
        max_pred,
        stages,
    )


def _factories(specs: Sequence[dict[str, Any]]) -> dict[str, Callable[..., Any]]:
    """The registry factories the specs name, shipped to the workers: recognizers registered with
    ``registry.register`` in the driver only (tests, site plugins) do not exist there otherwise.
    Dotted-path specs ('pkg.module:Factory') are imported by the workers themselves."""

    table = getattr(registry, "_FACTORIES", {})
    return {s["name"]: table[s["name"]] for s in specs if s["name"] in table}


class RayRecognition:
    """Recognize notes on a Ray cluster (local by default); see the module docstring."""

    def __init__(self, config: RayRecognitionConfig | None = None):
        self.config = config or RayRecognitionConfig()
        self.stats = RecognitionStats()
        self.plan: StagePlan | None = None
        self.waves = 0

    # ---------------------------------------------------------------- public API
    def run(
        self, notes: Iterable[Note], recognizer_specs: Sequence[dict[str, Any]], policy: Any = None
    ) -> RecognitionBatch:
        out = RecognitionBatch({}, [], RecognitionStats())
        for batch in self.iter_run(notes, recognizer_specs, policy):
            out.extend(batch)
        return out

    def iter_run(
        self, notes: Iterable[Note], recognizer_specs: Sequence[dict[str, Any]], policy: Any = None
    ) -> Iterator[RecognitionBatch]:
        """Yield one RecognitionBatch per wave (records in input order within and across waves)."""

        specs = [dict(s) for s in recognizer_specs]
        if not specs:
            raise ConfigError(
                "E514",
                "no recognizer specs given to the Ray pipeline",
                hint="pass registry specs such as {'name': 'tide.regex'}",
            )
        policy = as_policy(policy)
        probes = [registry.create(dict(s)) for s in specs]  # not loaded: names + stage kinds only
        staged = [i for i, r in enumerate(probes) if st.is_staged(r)]
        rules = [i for i in range(len(specs)) if i not in staged]
        factories = _factories(specs)
        ray = ensure_ray(self.config.address, self.config.local_num_cpus)
        self.plan = plan_stages(self.config, len(staged), len(rules), cluster_resources())
        total = len(notes) if isinstance(notes, Sized) else None
        bar = self._bar(total)
        try:
            for wave in self._waves(notes):
                batch = self._run_wave(ray, wave, specs, factories, staged, rules, policy)
                self.stats.add(batch.stats)
                yield batch
        finally:
            if bar is not None:
                bar.close()

    # ---------------------------------------------------------------- internals
    def _bar(self, total: int | None) -> Any:
        self._progress_bar = None
        if self.config.progress:
            self._progress_bar = tqdm(total=total, desc="recognize (ray)", unit="note", file=sys.stderr, leave=False)
        self._done, self._total = 0, total
        return self._progress_bar

    def _tick(self, n: int) -> None:
        self._done += n
        if self._progress_bar is not None:
            self._progress_bar.update(n)
        if self.config.on_progress is not None:
            self.config.on_progress(self._done, self._total)

    def _waves(self, notes: Iterable[Note]) -> Iterator[list[Note]]:
        wave: list[Note] = []
        for n in notes:
            wave.append(n)
            if len(wave) >= self.config.wave_notes:
                yield wave
                wave = []
        if wave:
            yield wave

    def _groups(self, wave: Sequence[Note]) -> list[st.Group]:
        """Short and long notes in separate groups, each kind sorted by length (longest first).

        Notes of like length share a group, so a forward pass pads its windows to a length close
        to theirs (a group of mixed lengths pads every window to its longest), and the longest
        groups start first, so no actor is left with a long group at the end of a wave.  Records
        come back in input order whatever the grouping (the driver reorders them by note id).
        """
        c = self.config
        short = [n for n in wave if len(n.text) < c.long_note_chars]
        long = [n for n in wave if len(n.text) >= c.long_note_chars]
        groups: list[st.Group] = []
        for kind, size in ((long, c.batch_size_long), (short, c.batch_size_short)):
            kind = sorted(kind, key=lambda n: len(n.text), reverse=True)  # stable: ties keep input order
            for i in range(0, len(kind), size):
                groups.append(st.Group(len(groups), kind[i : i + size]))
        return groups

    def _pools(
        self, plan: StagePlan, staged: list[int], rules: list[int], kw: dict[str, Any], policy: Any, n_groups: int
    ) -> list[ra.StagePool]:
        """This run's stage pools, in pipeline order (cached actors reused, see ray_actors)."""
        c = self.config
        last = {"resolve": True, "policy": policy}
        retry = {"max_restarts": c.max_retries, "max_task_retries": c.max_retries}
        light = max(1, min(plan.max_cpu_actors, n_groups))
        heavy = max(1, min(plan.max_gpu_actors, n_groups))
        light_opts = {"num_cpus": plan.cpus_per_actor, **retry}
        heavy_opts = {"num_cpus": plan.predict_cpus, **retry}
        if plan.gpus_per_actor:
            heavy_opts["num_gpus"] = plan.gpus_per_actor
        model = {**kw, "indices": staged, "threads": plan.predict_threads}
        requests: list[ra.PoolRequest] = []
        if staged and "model" in plan.stages:
            requests.append(ra.PoolRequest(st.ModelStage, {**model, **({} if rules else last)}, heavy, heavy_opts))
        elif staged:
            requests.append(ra.PoolRequest(st.WindowStage, {**kw, "indices": staged}, light, light_opts))
            requests.append(ra.PoolRequest(st.PredictStage, model, heavy, heavy_opts))
            assemble = {**kw, "indices": staged, **({} if rules else last)}
            requests.append(ra.PoolRequest(st.AssembleStage, assemble, light, light_opts))
        if rules:
            requests.append(ra.PoolRequest(st.MatchStage, {**kw, "indices": rules, **last}, light, light_opts))
        return ra.acquire(requests, c.start_timeout_s)

    def _run_wave(
        self,
        ray: Any,
        wave: list[Note],
        specs: Sequence[dict[str, Any]],
        factories: dict[str, Callable[..., Any]],
        staged: list[int],
        rules: list[int],
        policy: Any,
        _nested: bool = False,
    ) -> RecognitionBatch:
        if not _nested:
            _check_unique(wave)
            self.waves += 1
        groups = self._groups(wave)
        for g in groups:
            g.rows = {k: rows_for_group(specs[k], g.notes) for k in rules if "rows" in specs[k]}
        pool_specs = [{**s, "rows": []} if i in rules and "rows" in s else s for i, s in enumerate(specs)]
        plan = self.plan
        assert plan is not None  # set by iter_run before the first wave
        c = self.config
        payloads = [bytes(p) for p in st.encode(groups)["payload"]]
        pools = self._pools(plan, staged, rules, {"specs": pool_specs, "factories": factories}, policy, len(groups))

        records: dict[str, NoteRecognition] = {}
        spans: dict[str, list[Span]] = {}
        stats = RecognitionStats()
        seen_groups: set[int] = set()
        error: BaseException | None = None
        for _, out in ra.run_chain(payloads, pools):
            if isinstance(out, BaseException):  # the group's actor died for good: its notes are lost
                tide = ra.find_tide_error(out)
                if tide is not None and tide.terminal:
                    raise tide from out
                error = out
                continue
            for g in st.decode({"payload": [out]}):
                if g.fatal is not None:
                    raise g.fatal
                if g.gid in seen_groups:  # cannot happen with Ray's semantics; guard anyway
                    continue
                seen_groups.add(g.gid)
                stats.add(g.stats)
                for r in g.records:
                    records[r.note_id] = r
                spans.update(g.resolved)
                self._tick(len(g.records))
        lost = [n for n in wave if n.note_id not in records]
        if lost and error is None:
            error = RuntimeError("notes missing from the pipeline output")
        if lost:
            log.error(
                "Ray pipeline stopped (%s) with %d of %d notes not back%s",
                type(error).__name__,
                len(lost),
                len(wave),
                "; isolating them" if len(lost) > 1 and c.isolate_lost else "",
            )
            if len(lost) > 1 and c.isolate_lost:
                # A note that kills every worker it touches must not take its neighbours with it:
                # rerun the lost notes in halves until it is alone.
                mid = len(lost) // 2
                for half in (lost[:mid], lost[mid:]):
                    sub = self._run_wave(ray, half, specs, factories, staged, rules, policy, _nested=True)
                    stats.add(sub.stats)
                    records.update({r.note_id: r for r in sub.records})
                    spans.update(sub.spans)
            else:
                for n in lost:
                    records[n.note_id] = NoteRecognition(
                        n.note_id,
                        "failed",
                        0,
                        E_LOST,
                        f"note {n.note_id} was lost with its Ray worker after {c.max_retries} retries",
                    )
                    stats.failed_notes += 1
                    self._tick(1)
        ordered = [records[n.note_id] for n in wave]
        return RecognitionBatch({k: v for k, v in spans.items() if records[k].ok}, ordered, stats)


def rows_for_group(spec: Mapping[str, Any], notes: Sequence[Note]) -> list[dict[str, Any]]:
    """The rows of a known-PHI spec that a group of notes needs: its patients' rows (all rows
    when the spec matches any patient's values)."""
    rows = list(spec.get("rows") or [])
    if spec.get("match_any_patient"):
        return rows
    mine = {n.patient_id for n in notes}
    return [r for r in rows if str(r.get("patient_id")) in mine]


# ------------------------------------------------------------------------------------------------
# Generic per-note fan-out (anonymization)
# ------------------------------------------------------------------------------------------------


def map_notes(
    items: Sequence[Any],
    make_fn: Callable[[], Callable[[Any], Any]],
    config: RayRecognitionConfig | None = None,
    group_size: int | None = None,
) -> list[Any]:
    """Apply ``make_fn()(item)`` to every item on a Ray actor pool; results in input order.

    ``make_fn`` runs once per actor (build an anonymizer, load a model); it and the items must
    pickle.  Retries follow ``config.max_retries``; the function itself should catch per-item
    errors and return a failure value (a failed item never takes its group down).
    """
    config = config or RayRecognitionConfig(progress=False)
    if not items:
        return []
    ensure_ray(config.address, config.local_num_cpus)
    size = group_size or config.batch_size_short

    chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
    payloads = [pickle.dumps(ch, protocol=pickle.HIGHEST_PROTOCOL) for ch in chunks]
    res = cluster_resources()
    per = max(0.05, min(float(config.num_cpus_per_actor), res["CPU"] / 2))
    max_actors = config.max_actors or max(1, int(res["CPU"] // per))
    retry = {"max_restarts": config.max_retries, "max_task_retries": config.max_retries}
    n_actors = min(max_actors, len(chunks))
    request = ra.PoolRequest(st.MapStage, {"make_fn": make_fn}, n_actors, {"num_cpus": per, **retry})
    by_gid: dict[int, list[Any]] = {}
    for gid, out in ra.run_chain(payloads, ra.acquire([request], config.start_timeout_s)):
        if not isinstance(out, BaseException):
            by_gid[gid] = pickle.loads(out)
    if len(by_gid) != len(chunks):
        raise TideError(
            "E515",
            f"{len(chunks) - len(by_gid)} of {len(chunks)} note groups did not come back from the Ray workers",
            hint="rerun; check the Ray worker logs",
            terminal=False,
        )
    return [r for gid in range(len(chunks)) for r in by_gid[gid]]


def _anonymize_one(
    keyring: KeyRing, config: TideConfig | None, item: tuple[Note, list[Span]]
) -> ReleasedNote | Quarantined:
    """One note through :func:`tide_core.engine.anonymization.anonymize_notes`, the one
    anonymization path: span resolution, the operators' coded errors, the E405 check that no
    replacement equals its original, and E499 for any other failure are the same as in process."""

    note, spans = item
    batch = anonymize_notes([note], {note.note_id: spans}, keyring, config)
    return batch.released[0] if batch.released else batch.quarantined[0]


def _make_anonymizer(
    keyring: KeyRing, config: TideConfig | None
) -> Callable[[tuple[Note, list[Span]]], ReleasedNote | Quarantined]:
    return functools.partial(_anonymize_one, keyring, config)


class RayAnonymization:
    """Anonymize notes on Ray with the in-process engine (``anonymize_notes``) on each worker.

    ``run`` returns, per input note and in order, a ``ReleasedNote`` (exactly what
    ``anonymize_notes`` releases) or a ``Quarantined`` row; the ``KeyRing`` pickles.
    """

    def __init__(self, config: RayRecognitionConfig | None = None) -> None:
        self.config = config or RayRecognitionConfig(progress=False)

    def run(
        self,
        notes: Sequence[Note],
        spans: Mapping[str, Sequence[Span]],
        keyring: KeyRing,
        tide_config: TideConfig | None = None,
    ) -> list[Any]:
        items = [(n, list(spans.get(n.note_id, []))) for n in notes]
        return map_notes(items, functools.partial(_make_anonymizer, keyring, tide_config), self.config)


def shutdown() -> None:
    """Stop a Ray session this process started (tests and the benchmark call it)."""
    if ray.is_initialized():
        ray.shutdown()
    time.sleep(0)
