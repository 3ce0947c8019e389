"""Every step that changes recognition output is in the recognition fingerprint, through one helper.

Changing any step's config or version (each rules-preset recognizer, the resolution policy, span
tidying, within-note propagation) must change ``recognition_fingerprint`` and make the runner
recompute the study's cached spans (a span-cache miss on the real DuckDB warehouse); batch size,
executor and worker counts must not.
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
from types import SimpleNamespace

import pyarrow as pa
import pytest

from tide_core.cli.cmd_demo import load_demo
from tide_core.config import TideConfig, rules_specs
from tide_core.engine.recognition import note_steps, recognition_fingerprint
from tide_core.engine.recognizer_setup import RecognizerSet, build_recognizers, register_setup, unregister_setup
from tide_core.engine.study_input import read_study_input
from tide_core.fingerprint import Step, canonical_json, fingerprint, step_fingerprint
from tide_core.io.open import open_warehouse
from tide_core.recognizers.registry import create
from tide_core.runner import recognize_study
from tide_core.steps import person_roles, propagate, span_tidy
from tide_core.steps.propagate import PropagationPolicy
from tide_core.steps.resolve import ResolutionPolicy

HEX16 = re.compile(r"[0-9a-f]{16}")
N_NOTES = 8
STUDY = "s1"

#: One output-affecting option change per builtin recognizer; a recognizer added to the rules
#: preset fails the tests below until it has an entry here.
RECOGNIZER_OPTIONS = {
    "tide.regex": {"min_score": 0.5},
    "tide.ids": {"score": 0.65},
    "tide.cued_ids": {"score": 0.8},
    "tide.ages": {"score": 0.75},
    "tide.org": {"score_suffix": 0.71},
    "tide.places": {"score": 0.81},
    "tide.facilities": {"score": 0.71},
    "tide.org_heads": {"max_words": 4},
    "tide.gazetteer": {"score": 0.91},
    "tide.known_phi": {"score": 0.96},
    "tide.names": {"score": 0.61},
    "tide.addresses": {"score": 0.86},
    "tide.dates_words": {"score": 0.79},
    "tide.phones_intl": {"score": 0.84},
}
RULES = [s["name"] for s in rules_specs()]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("fingerprints")
    wh = open_warehouse(f"duckdb:{root / 'w.duckdb'}")
    load_demo(wh, seed=7)
    wh.replace_table("notes", pa.Table.from_pylist(wh.read_table("notes").to_pylist()[:N_NOTES]))
    config = TideConfig.preset("rules")
    first = recognize_study(wh, STUDY, config, progress=False)  # from the config's specs
    assert first.n_recognized == N_NOTES and first.n_cached == 0 and first.n_spans > 0
    notes = read_study_input(wh, STUDY, config).notes
    recognizers, specs, warnings = build_recognizers(wh, config, notes)
    assert not warnings and [s["name"] for s in specs] == RULES
    base = recognition_fingerprint(recognizers)
    assert base == first.fingerprint and HEX16.fullmatch(base)
    yield SimpleNamespace(wh=wh, config=config, recognizers=recognizers, specs=specs, base=base)
    wh.close()


def _run(st, recognizers=(), policy=None, **kwargs):
    """Recognize the study with ``recognizers`` (default: the fixture's) under ``policy``, through a
    registered set-up factory; ``recognizers=None``: the configuration's specs."""
    recognizers = st.recognizers if recognizers == () else recognizers
    if recognizers is not None:
        register_setup(STUDY, lambda wh, config: RecognizerSet.of(recognizers, policy))
    try:
        return recognize_study(st.wh, STUDY, kwargs.pop("config", st.config), progress=False, **kwargs)
    finally:
        unregister_setup(STUDY)


def _baseline(st) -> None:
    """Put the unchanged steps' spans back in the cache (recomputed after another test's change)."""
    restored = _run(st)
    assert restored.fingerprint == st.base
    assert (_run(st).n_cached, restored.n_quarantined) == (N_NOTES, 0)  # ... so a rerun is all hits


def _assert_recomputed(st, recognizers=None, policy=None) -> str:
    """After a step changed: the fingerprint differs and the runner misses the cache for every note."""
    recognizers = recognizers if recognizers is not None else st.recognizers
    changed = recognition_fingerprint(recognizers, policy)
    assert HEX16.fullmatch(changed) and changed != st.base
    miss = _run(st, recognizers=recognizers, policy=policy)
    assert miss.fingerprint == changed
    assert (miss.n_cached, miss.n_recognized) == (0, N_NOTES)
    again = _run(st, recognizers=recognizers, policy=policy)
    assert (again.n_cached, again.n_recognized) == (N_NOTES, 0)
    return changed


# ------------------------------------------------------------------------------ the helper


def test_helper_is_canonical_16_hex():
    fp = fingerprint({"b": 1, "a": [1, 2]})
    assert HEX16.fullmatch(fp)
    assert fp == fingerprint({"a": [1, 2], "b": 1})  # key order never matters
    assert fp != fingerprint({"a": [2, 1], "b": 1})  # list order does
    assert fingerprint("x", "y") != fingerprint("y", "x") != fingerprint("xy")
    assert canonical_json({"b": 1, "a": None}) == '{"a":null,"b":1}'
    assert fingerprint({"d": dt.date(2020, 1, 2)}) == fingerprint({"d": "2020-01-02"})  # default=str


def test_every_step_after_the_recognizers_is_a_versioned_step():
    steps = note_steps()
    assert [s.qualified_name for s in steps] == ["tide.tidy@5", "tide.resolve@2", "tide.roles@1", "tide.propagate@2"]
    for s in steps:
        assert isinstance(s, Step)
        assert HEX16.fullmatch(step_fingerprint(s))
    assert note_steps({"min_score": {"ID": 0.5}})[1] == ResolutionPolicy(min_score={"ID": 0.5})
    assert note_steps()[3] is propagate.DEFAULT_POLICY


def test_recognizer_fingerprint_is_its_step_fingerprint(study):
    for rec in study.recognizers:
        assert isinstance(rec, Step)
        assert rec.fingerprint() == step_fingerprint(rec)


# ------------------------------------------------------------------------------ each step changes it


@pytest.mark.parametrize("index", range(len(RULES)), ids=RULES)
def test_recognizer_options_change_the_fingerprint_and_miss_the_cache(study, index):
    _baseline(study)
    name = study.specs[index]["name"]
    assert name in RECOGNIZER_OPTIONS, f"add an output-affecting option change for {name} to RECOGNIZER_OPTIONS"
    spec = dict(study.specs[index], **RECOGNIZER_OPTIONS[name])
    changed = list(study.recognizers)
    changed[index] = create(spec)
    _assert_recomputed(study, changed)


@pytest.mark.parametrize("index", range(len(RULES)), ids=RULES)
def test_recognizer_version_changes_the_fingerprint_and_misses_the_cache(study, index, monkeypatch):
    _baseline(study)
    monkeypatch.setattr(study.recognizers[index], "version", "999")
    assert study.recognizers[index].qualified_name.endswith("@999")
    _assert_recomputed(study)


def test_recognizer_order_changes_the_fingerprint(study):
    assert recognition_fingerprint(study.recognizers[::-1]) != study.base


@pytest.mark.parametrize(
    "policy",
    [
        {"min_score": {"ID": 0.5}},
        {"default_min_score": 0.1},
        {"merge_same_label_overlaps": False},
        {"label_priority": ["PHONE", "ID"]},
    ],
)
def test_resolution_policy_changes_the_fingerprint_and_misses_the_cache(study, policy):
    assert recognition_fingerprint(study.recognizers, ResolutionPolicy()) == study.base
    _baseline(study)
    _assert_recomputed(study, policy=policy)


def test_resolution_version_changes_the_fingerprint(study, monkeypatch):
    from tide_core.steps import resolve

    _baseline(study)
    monkeypatch.setattr(resolve, "VERSION", "3")
    _assert_recomputed(study)


@pytest.mark.parametrize(
    "change",
    [
        ("VERSION", "6"),
        ("_INITIAL_BEFORE", re.compile(r"(?<![\w.])[A-Z]\. ")),
        ("_TRAIL", span_tidy._TRAIL + "."),
        ("_LEAD", span_tidy._LEAD.replace(":", "")),
        ("_KEEPS_LEAD", span_tidy._KEEPS_LEAD | {"ID"}),
        ("PERSON", span_tidy.PERSON | {"OTHER"}),
        ("AGE_ID_DIGITS", 5),
    ],
    ids=lambda c: c[0],
)
def test_tidy_changes_the_fingerprint_and_miss_the_cache(study, monkeypatch, change):
    _baseline(study)
    monkeypatch.setattr(span_tidy, *change)
    _assert_recomputed(study)


@pytest.mark.parametrize(
    "change",
    [
        ("VERSION", "3"),
        ("PROPAGATED", propagate.PROPAGATED - {"OTHER"}),
        ("DEFAULT_POLICY", PropagationPolicy(min_token_chars=5)),
        ("DEFAULT_POLICY", PropagationPolicy(extend_names=False)),
    ],
    ids=["VERSION", "PROPAGATED", "min_token_chars", "extend_names"],
)
def test_propagation_changes_the_fingerprint_and_miss_the_cache(study, monkeypatch, change):
    _baseline(study)
    monkeypatch.setattr(propagate, *change)
    _assert_recomputed(study)


@pytest.mark.parametrize(
    "change",
    [("VERSION", "2"), ("_STAFF_AFTER", re.compile(r"^,\s*MD\b")), ("_PRIVATE_BEFORE", re.compile(r"\bMr\.?\s*$"))],
    ids=lambda c: c[0],
)
def test_roles_change_the_fingerprint_and_miss_the_cache(study, monkeypatch, change):
    _baseline(study)
    monkeypatch.setattr(person_roles, *change)
    _assert_recomputed(study)


# ------------------------------------------------------------------------------ what must not change it


def test_batch_size_executor_and_workers_do_not_change_it(study, local_ray):
    assert list(inspect.signature(recognition_fingerprint).parameters) == ["recognizers", "policy"]
    _baseline(study)
    for config in (study.config.with_(batch_size=3), study.config.with_(executor="ray", batch_size=1000)):
        rerun = _run(study, config=config, recognizers=None)  # recognizers rebuilt from the specs
        assert rerun.fingerprint == study.base
        assert (rerun.n_cached, rerun.n_recognized) == (N_NOTES, 0)
    forced = _run(study, config=study.config.with_(batch_size=3), force=True)
    assert forced.fingerprint == study.base and forced.n_recognized == N_NOTES


def test_worker_and_transport_options_of_recognizers_do_not_change_it():
    from tide_core.recognizers.llm import LLMRecognizer

    a = LLMRecognizer("http://127.0.0.1:1", "m1", max_workers=1, timeout_s=5, max_retries=0)
    b = LLMRecognizer("http://127.0.0.1:1", "m1", max_workers=16, timeout_s=300, max_retries=9)
    assert recognition_fingerprint([a]) == recognition_fingerprint([b])
    assert recognition_fingerprint([a]) != recognition_fingerprint(
        [LLMRecognizer("http://127.0.0.1:1", "m1", chunk_chars=1000)]
    )
