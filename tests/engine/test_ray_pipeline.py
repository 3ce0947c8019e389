"""The Ray recognition pipeline returns exactly what the local path returns, also when workers
die or run out of memory.  One local Ray session (2 CPUs) is shared by the whole module.

Every new actor loads its recognizers, and ``tide.regex`` compiles hundreds of patterns at load
(seconds per process): the tests of worker deaths, memory and errors, which start and kill many
actors, run the cheap rules (``light()``: gazetteer, known PHI and the test recognizers built on
:class:`Digits`); the regex layer runs on the workers in the matching, wave and pool tests, which
share one pool (same specs and ``POLICY``)."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from tide_core.engine.recognition import E_OOM, E_RAISED, recognize_notes
from tide_core.errors import ConfigError
from tide_core.execution.ray_pipeline import RayRecognition, RayRecognitionConfig, map_notes, plan_stages
from tide_core.recognizers import registry
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import Note, RecognizerResult

PATIENTS = [
    {
        "patient_id": f"p{i}",
        "first_name": f"Mara{i}",
        "last_name": "Quillon",
        "mrn": f"8{i:07d}",
        "dob": "1950-01-02",
        "phone": f"(555) 201-{i:04d}",
    }
    for i in range(4)
]


#: the resolution policy of the regex pool's runs (part of the pool's arguments: one pool for all)
POLICY = {"min_score": {"OTHER": 0.1}}


class Digits(TideRecognizer):
    """A rule with nothing to load: ``617-555-0012`` is a PHONE, a run of 7+ digits an ID."""

    name = "test.digits"
    supported_entities = ("PHONE", "ID")
    _RX = re.compile(r"\b\d{3}-\d{4}\b|\b\d{7,}\b")

    def analyze(self, text, entities=None, nlp_artifacts=None):
        return [
            RecognizerResult("PHONE" if "-" in m.group() else "ID", m.start(), m.end(), 0.8)
            for m in self._RX.finditer(text)
        ]


class CrashOnce(Digits):
    """Kills its worker process the first time it runs (a marker file remembers it ran)."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker

    def recognize_many(self, notes):
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        return super().recognize_many(notes)


class OOMAbove(Digits):
    """Out of memory for batches of more than ``limit`` notes."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def recognize_many(self, notes):
        if len(notes) > self.limit:
            raise MemoryError("simulated allocation failure")
        return super().recognize_many(notes)


class RaisesOn(Digits):
    def __init__(self, word: str):
        super().__init__()
        self.word = word

    def recognize_many(self, notes):
        if any(self.word in n.text for n in notes):
            raise ValueError("no")
        return super().recognize_many(notes)


class CrashOn(Digits):
    """Kills its worker every time it sees a note containing ``word``."""

    def __init__(self, word: str):
        super().__init__()
        self.word = word

    def recognize_many(self, notes):
        if any(self.word in n.text for n in notes):
            os._exit(1)
        return super().recognize_many(notes)


DRIVER_PID = os.getpid()


class BrokenOnWorkers(Digits):
    """Loads in the driver but not on the workers (e.g. a model not mounted on the nodes)."""

    def load(self):
        if os.getpid() != DRIVER_PID:
            raise ConfigError("E777", "model directory missing on this node", hint="mount it")
        super().load()


class AlwaysOOM(Digits):
    def recognize_many(self, notes):
        raise MemoryError()


for _name, _cls in (
    ("test.digits", Digits),
    ("test.crash_once", CrashOnce),
    ("test.oom_above", OOMAbove),
    ("test.raises_on", RaisesOn),
    ("test.always_oom", AlwaysOOM),
    ("test.crash_on", CrashOn),
    ("test.broken_on_workers", BrokenOnWorkers),
):
    registry.register(_name, _cls, replace=True)


@pytest.fixture(scope="module")
def ray_session(local_ray):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # test recognizers travel by value
    return local_ray


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    gaz = d / "gazetteer.csv"
    gaz.write_text("term,label\nSt. Brigid Medical Center,HOSPITAL\nNorthwind Logistics,OTHER\n")
    notes = []
    for i in range(40):
        p = PATIENTS[i % 4]
        body = (
            f"{p['first_name']} {p['last_name']} (MRN {p['mrn']}) was seen at St. Brigid Medical Center "
            f"on 03/{(i % 27) + 1:02d}/2021. Call {p['phone']} or 617-555-{i:04d}. "
            f"Works at Northwind Logistics. "
        )
        text = body * (6 if i % 10 == 3 else 1)  # a few long notes
        notes.append(Note(f"note-{i:03d}", p["patient_id"], text, {"note_date": "2021-03-05"}))
    specs = [
        {"name": "tide.regex"},
        {"name": "tide.gazetteer", "csv": str(gaz)},
        {"name": "tide.known_phi", "rows": PATIENTS},
    ]
    return notes, specs


def light(specs):
    """The corpus's rules without ``tide.regex`` (nothing slow to load in a new actor)."""
    return [s for s in specs if s["name"] != "tide.regex"]


def cfg(**kw) -> RayRecognitionConfig:
    base = dict(batch_size_short=8, batch_size_long=2, long_note_chars=600, progress=False, max_retries=3)
    base.update(kw)
    return RayRecognitionConfig(**base)


_MADE: dict[str, object] = {}


def local(notes, specs, policy=None):
    """The in-process reference; each spec's recognizer is created (and loaded) once per module."""
    recs = []
    for s in specs:
        key = json.dumps(s, sort_keys=True)
        if key not in _MADE:
            _MADE[key] = registry.create(s)
        recs.append(_MADE[key])
    return recognize_notes(notes, recs, policy)


def assert_same(ray_batch, local_batch, notes):
    ids = [r.note_id for r in ray_batch.records]
    assert ids == [n.note_id for n in notes]  # every note exactly once, in order
    assert ray_batch.records == local_batch.records
    assert ray_batch.spans == local_batch.spans


def test_rules_pipeline_matches_local(ray_session, corpus):
    notes, specs = corpus
    seen = []
    runner = RayRecognition(cfg(on_progress=lambda done, total: seen.append((done, total))))
    got = runner.run(notes, specs, POLICY)
    want = local(notes, specs, POLICY)
    assert_same(got, want, notes)
    assert sum(len(v) for v in got.spans.values()) > 5 * len(notes)
    labels = {s.label for s in got.all_spans()}
    assert {"PATIENT", "ID", "HOSPITAL", "DATE", "PHONE", "OTHER"} <= labels
    assert seen[-1] == (len(notes), len(notes)) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    # short notes went in groups of 8, long ones in groups of 2: 36 short -> 5 groups, 4 long -> 2
    assert got.stats.batches == 3 * (5 + 2)
    assert runner.plan.stages == ["match"]


def test_waves_stream_the_same_result(ray_session, corpus):
    notes, specs = corpus
    notes = notes[:20]
    runner = RayRecognition(cfg(wave_notes=8))
    batches = list(runner.iter_run(iter(notes), specs, POLICY))  # a generator works: no len needed
    assert [len(b) for b in batches] == [8, 8, 4] and runner.waves == 3
    merged = local(notes, specs, POLICY)
    assert [r for b in batches for r in b.records] == merged.records
    assert {k: v for b in batches for k, v in b.spans.items()} == merged.spans


def test_pools_outlive_a_run_and_make_way_for_other_stages(ray_session, corpus):
    """A second run with the same stages reuses the loaded actors; a run with other stage
    arguments stops them (their CPUs are what the new pools were sized for)."""
    from tide_core.execution import ray_actors as ra

    notes, specs = corpus
    RayRecognition(cfg()).run(notes[:8], specs, POLICY)
    before = list(ra._POOLS.values())
    ids = sorted(a._actor_id.hex() for p in before for a in p.actors)
    got = RayRecognition(cfg()).run(notes[8:16], specs, POLICY)
    assert_same(got, local(notes[8:16], specs, POLICY), notes[8:16])
    assert sorted(a._actor_id.hex() for p in ra._POOLS.values() for a in p.actors) == ids
    RayRecognition(cfg()).run(notes[:4], light(specs))  # other arguments: other pools
    assert not {a._actor_id.hex() for p in ra._POOLS.values() for a in p.actors} & set(ids)
    for actor in (a for p in before for a in p.actors):
        with pytest.raises(ray_session.exceptions.RayActorError):
            ray_session.get(actor.ready.remote(), timeout=60)


def test_known_phi_rows_travel_with_groups_so_chunks_share_actors(ray_session, corpus):
    """Each chunk of a study brings its own patients' rows; the rows go with the note groups, so
    the second chunk runs on the first chunk's actors and both equal the local path."""
    from tide_core.execution import ray_actors as ra

    notes, specs = corpus

    def chunk(patients: set[str]) -> tuple[list[Note], list[dict]]:
        mine = [n for n in notes if n.patient_id in patients][:8]
        return mine, [
            specs[1],  # the gazetteer
            {"name": "tide.known_phi", "rows": [p for p in PATIENTS if p["patient_id"] in patients]},
        ]

    first, first_specs = chunk({"p0", "p1"})
    got = RayRecognition(cfg()).run(first, first_specs)
    assert_same(got, local(first, first_specs), first)
    assert any(s.label == "PATIENT" for s in got.all_spans())  # names come from the rows only
    ids = sorted(a._actor_id.hex() for p in ra._POOLS.values() for a in p.actors)
    second, second_specs = chunk({"p2", "p3"})
    got = RayRecognition(cfg()).run(second, second_specs)
    assert_same(got, local(second, second_specs), second)
    assert sorted(a._actor_id.hex() for p in ra._POOLS.values() for a in p.actors) == ids


def test_killed_worker_is_retried_without_loss_or_duplicates(ray_session, corpus, tmp_path):
    notes, specs = corpus
    specs = light(specs)
    marker = tmp_path / "crashed"
    got = RayRecognition(cfg()).run(notes, [*specs, {"name": "test.crash_once", "marker": str(marker)}])
    assert marker.exists(), "the test recognizer never killed its worker"
    assert int(marker.read_text()) != os.getpid()
    done = tmp_path / "no-crash"
    done.write_text("x")
    want = local(notes, [*specs, {"name": "test.crash_once", "marker": str(done)}])
    assert any(s.recognizer.startswith("test.digits@") for s in want.all_spans())
    assert_same(got, want, notes)
    assert not got.failed()


def test_a_note_that_always_kills_its_worker_is_isolated_and_failed(ray_session, corpus):
    from tide_core.engine.recognition import E_LOST

    notes, specs = corpus
    specs = light(specs)
    notes = list(notes[:6])
    notes[4] = Note("killer", "p0", "Patient KILLME seen 03/04/2021")
    specs2 = [*specs, {"name": "test.crash_on", "word": "KILLME"}]
    got = RayRecognition(cfg(max_retries=0, batch_size_short=3)).run(notes, specs2)
    assert [r.note_id for r in got.records] == [n.note_id for n in notes]
    assert [(r.note_id, r.error_code) for r in got.failed()] == [("killer", E_LOST)]
    others = [n for n in notes if n.note_id != "killer"]
    assert got.spans == local(others, [*specs, {"name": "test.digits"}]).spans  # the killer's neighbours recovered
    lone = RayRecognition(cfg(max_retries=0, isolate_lost=False, batch_size_short=3)).run(notes, specs2)
    lost = {r.note_id for r in lone.failed()}
    assert "killer" in lost and {r.error_code for r in lone.failed()} == {E_LOST}
    assert set(lone.spans) == {n.note_id for n in notes} - lost


def test_out_of_memory_splits_batches(ray_session, corpus):
    notes, specs = corpus
    got = RayRecognition(cfg()).run(notes, [{"name": "test.oom_above", "limit": 3}, *light(specs)])
    assert got.stats.oom_splits >= 5  # every 8-note group split at least once
    want = local(notes, [{"name": "test.digits"}, *light(specs)])
    assert [r.status for r in got.records] == ["ok"] * len(notes)
    assert {k: [(s.start, s.end, s.label) for s in v] for k, v in got.spans.items()} == {
        k: [(s.start, s.end, s.label) for s in v] for k, v in want.spans.items()
    }


def test_failures_fail_closed_like_the_local_path(ray_session, corpus):
    notes, specs = corpus
    notes = list(notes[:10])
    notes[4] = Note("poison", "p0", "Patient ZZTOP seen 03/04/2021, call 617-555-0199")
    specs2 = [*light(specs), {"name": "test.raises_on", "word": "ZZTOP"}]
    got = RayRecognition(cfg()).run(notes, specs2)
    want = local(notes, specs2)
    assert_same(got, want, notes)
    assert [(f.note_id, f.error_code) for f in got.failed()] == [("poison", E_RAISED)]
    assert "ZZTOP" not in got.failed()[0].error
    one = RayRecognition(cfg()).run(notes[:3], [{"name": "test.always_oom"}])
    assert [r.error_code for r in one.records] == [E_OOM] * 3 and one.spans == {}


def test_a_config_error_on_the_workers_stops_the_run(ray_session, corpus):
    notes, specs = corpus
    with pytest.raises(ConfigError) as err:
        RayRecognition(cfg()).run(notes[:4], [*light(specs), {"name": "test.broken_on_workers"}])
    assert err.value.code == "E777"


def test_actors_the_cluster_cannot_place_stop_the_run_with_e517(ray_session, corpus):
    """A pool whose actors can never be placed (64 CPUs each on a 2-CPU cluster) must not leave
    the run waiting forever: E517 names the stage and the resources, and the pool is stopped."""
    from tide_core.errors import TideError
    from tide_core.execution import ray_actors as ra
    from tide_core.execution import ray_stages as st

    notes, specs = corpus
    kwargs = {"specs": specs[:1], "factories": {}, "indices": [0], "resolve": True}
    t0 = time.monotonic()
    with pytest.raises(TideError) as err:
        ra.acquire([ra.PoolRequest(st.MatchStage, kwargs, 1, {"num_cpus": 64})], start_timeout_s=3)
    assert time.monotonic() - t0 < 60
    assert err.value.code == "E517" and not err.value.terminal
    assert "MatchStage" in err.value.message and "'num_cpus': 64" in err.value.message
    assert ra._POOLS == {}  # stopped: no pending request is left to hold the cluster
    got = RayRecognition(cfg()).run(notes[:4], light(specs))  # the next run is unaffected
    assert_same(got, local(notes[:4], light(specs)), notes[:4])


def _double():
    return lambda x: (x, x * 2)


def test_map_notes_keeps_order(ray_session):
    items = list(range(53))
    assert map_notes(items, _double, cfg(), group_size=5) == [(x, 2 * x) for x in items]


def test_stage_plan_sizes_from_resources():
    rules = plan_stages(cfg(), n_staged=0, n_rules=1, resources={"CPU": 2, "GPU": 0})
    assert rules.stages == ["match"] and rules.max_cpu_actors == 2 and rules.cpus_per_actor * 2 <= 2
    fused = plan_stages(cfg(), n_staged=1, n_rules=1, resources={"CPU": 2, "GPU": 0})
    assert fused.stages == ["model", "match"] and fused.max_gpu_actors == 2
    assert fused.cpus_per_actor * fused.max_cpu_actors + fused.predict_cpus * 2 <= 2
    small = plan_stages(cfg(split_model_stages=True), n_staged=1, n_rules=1, resources={"CPU": 2, "GPU": 0})
    assert small.stages == ["window", "predict", "assemble", "match"]
    # everything fits on 2 CPUs at once: 3 light actors + the predict pool
    assert small.cpus_per_actor * 3 * small.max_cpu_actors + small.predict_cpus * small.max_gpu_actors <= 2
    assert small.max_gpu_actors == 2 and small.predict_threads == 1
    big = plan_stages(cfg(num_gpus_per_actor=1), 1, 1, {"CPU": 64, "GPU": 4})
    assert big.max_gpu_actors == 4 and big.gpus_per_actor == 1 and big.max_cpu_actors >= 8
    assert big.cpus_per_actor * 3 * big.max_cpu_actors + big.predict_cpus * 4 <= 64
    with pytest.raises(ConfigError) as err:
        plan_stages(cfg(num_gpus_per_actor=1), 1, 0, {"CPU": 8, "GPU": 0})
    assert err.value.code == "E513"
    with pytest.raises(ConfigError):
        RayRecognitionConfig(batch_size_short=0)


def test_groups_hold_notes_of_like_length_longest_first():
    """A forward pass pads a group's windows to its longest: like lengths share a group, and the
    longest groups go first so no actor is left with a long one at the end of a wave."""
    lengths = [37, 900, 12, 450, 88, 450, 5, 700, 61, 300, 2000, 44, 450, 15]
    notes = [Note(f"n{i}", "p0", "x" * k) for i, k in enumerate(lengths)]
    groups = RayRecognition(cfg(batch_size_short=3, batch_size_long=2, long_note_chars=600))._groups(notes)
    ids = [n.note_id for g in groups for n in g.notes]
    assert sorted(ids) == sorted(n.note_id for n in notes)  # every note exactly once
    assert [g.gid for g in groups] == list(range(len(groups)))
    assert [[len(n.text) for n in g.notes] for g in groups] == [
        [2000, 900],
        [700],
        [450, 450, 450],
        [300, 88, 61],
        [44, 37, 15],
        [12, 5],
    ]
    # ties keep input order
    assert [n.note_id for n in groups[2].notes] == ["n3", "n5", "n12"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, corpus):
    from benchmarks.recognition import build_tiny_model

    notes, _ = corpus
    return build_tiny_model(
        tmp_path_factory.mktemp("model") / "tiny", [n.text for n in notes], hidden=32, layers=1, vocab_size=300
    )


def test_model_stages_match_local(ray_session, corpus, tiny_model):
    """Window → predict → assemble in three actor pools equals recognize_many in one process."""
    notes, specs = corpus
    notes = [n for i, n in enumerate(notes) if i < 12 or i % 10 == 3]  # short and long notes
    hf = {"name": "tide.hf", "model_dir": str(tiny_model), "window": 48, "overlap": 8, "batch_size": 4}
    specs = light(specs)
    runner = RayRecognition(cfg(split_model_stages=True, max_actors=1))  # the GPU layout, on CPUs
    got = runner.run(notes, [hf, *specs])
    want = local(notes, [hf, *specs])
    assert runner.plan.stages == ["window", "predict", "assemble", "match"]
    fused = RayRecognition(cfg(max_actors=1))
    got_fused = fused.run(notes[:8], [hf])
    assert fused.plan.stages == ["model"]
    assert got_fused.records == local(notes[:8], [hf]).records
    assert [r.note_id for r in got.records] == [n.note_id for n in notes]
    assert [(r.status, r.n_spans) for r in got.records] == [(r.status, r.n_spans) for r in want.records]
    strip = lambda b: {k: [(s.start, s.end, s.label, s.recognizer) for s in v] for k, v in b.spans.items()}  # noqa: E731
    assert strip(got) == strip(want)
    for k, spans in got.spans.items():  # scores may differ in the last bits (padding per batch)
        for a, b in zip(spans, want.spans[k], strict=True):
            assert a.score == pytest.approx(b.score, abs=1e-5)
    assert any(s.recognizer.startswith("tide.hf@") for s in got.all_spans())  # the model contributed spans


def test_anonymization_fans_out_through_the_one_anonymization_path(ray_session, corpus):
    """Ray workers run ``anonymize_notes``: same releases, same span resolution, same E405 check."""
    from tide_core.anonymize.keys import keyring_for_tests
    from tide_core.engine.anonymization import ReleasedNote, anonymize_notes
    from tide_core.execution.ray_pipeline import RayAnonymization
    from tide_core.spans import Quarantined, Span

    notes, specs = corpus
    notes = notes[:12]
    spans = dict(local(notes, specs).spans)
    # a note whose only span is already a mask: the replacement equals the original -> E405
    masked = Note("masked", "p0", "[DATE] follow-up.")
    spans["masked"] = [Span("masked", 0, 6, "DATE", 0.9, "test@1")]
    # overlapping cached spans (recognizer + reviewer) are resolved first, as in process
    first = notes[0]
    s0 = spans[first.note_id][0]
    spans[first.note_id] = [*spans[first.note_id], Span(first.note_id, s0.start, s0.end - 1, s0.label, 0.5, "r@1")]
    todo = [*notes, masked]
    keyring = keyring_for_tests("study-a", "k1", "seed")
    got = RayAnonymization(cfg()).run(todo, spans, keyring)
    want = anonymize_notes(todo, spans, keyring)
    assert [g.note.note_id if isinstance(g, ReleasedNote) else g.note_id for g in got] == [n.note_id for n in todo]
    assert [g for g in got if isinstance(g, ReleasedNote)] == want.released
    assert [g for g in got if isinstance(g, Quarantined)] == want.quarantined
    assert [(q.note_id, q.code) for q in want.quarantined] == [("masked", "E405")]
    assert isinstance(got[0], ReleasedNote) and all(PATIENTS[0]["last_name"] not in r.note.text for r in want.released)
