"""Registry: builtins from specs, lazy imports, site recognizers by name or dotted path, clear errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tide_core.errors import ConfigError
from tide_core.recognizers import registry
from tide_core.recognizers.base import TideRecognizer
from tide_core.recognizers.gazetteer import GazetteerRecognizer
from tide_core.recognizers.known_phi import KnownPHIRecognizer
from tide_core.recognizers.llm import LLMRecognizer
from tide_core.recognizers.regex_recognizer import RegexRecognizer
from tide_core.spans import Note, RecognizerResult


class SiteIds(TideRecognizer):
    name = "site.ids"
    supported_entities = ("ID",)

    def __init__(self, prefix="ZZ"):
        self.prefix = prefix

    def config(self):
        return {"prefix": self.prefix}

    def analyze(self, text, entities=None, nlp_artifacts=None):
        i = text.find(self.prefix)
        return [] if i < 0 else [RecognizerResult("ID", i, i + len(self.prefix) + 4, 0.9)]


def make_site_ids(**kw):
    return SiteIds(**kw)


def test_builtin_names():
    builtins = {"tide.regex", "tide.gazetteer", "tide.known_phi", "tide.hf", "tide.llm", "presidio"}
    assert builtins <= set(registry.names())


def test_create_builtins(tmp_path):
    assert isinstance(registry.create({"name": "tide.regex"}), RegexRecognizer)
    r = registry.create({"name": "tide.regex", "labels": ["DATE"], "disable": ["date_iso"]})
    assert r.supported_entities == ["DATE"]
    csv = tmp_path / "g.csv"
    csv.write_text("term,label\nMercy,HOSPITAL\n", encoding="utf-8")
    g = registry.create({"name": "tide.gazetteer", "csv": str(csv)})
    assert isinstance(g, GazetteerRecognizer) and g.analyze("at Mercy")[0].entity_type == "HOSPITAL"
    k = registry.create(
        {"name": "tide.known_phi", "rows": [{"patient_id": "p1", "first_name": "Ann", "last_name": "Lee"}]}
    )
    assert isinstance(k, KnownPHIRecognizer)
    assert [s.label for s in k.recognize(Note("n", "p1", "Ann Lee here"))] == ["PATIENT"]
    llm = registry.create({"name": "tide.llm", "base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert isinstance(llm, LLMRecognizer) and llm.endpoint == "http://127.0.0.1:9/v1/chat/completions"


def test_errors_are_config_errors_with_hints():
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "tide.nope"})
    assert e.value.code == "E235" and "tide.regex" in e.value.hint
    with pytest.raises(ConfigError) as e:
        registry.create({"labels": ["DATE"]})
    assert e.value.code == "E232"
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "tide.regex", "bogus_option": 1})
    assert e.value.code == "E236"
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "tide.gazetteer"})
    assert e.value.code == "E238"
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "tide.known_phi"})
    assert e.value.code == "E239"
    with pytest.raises(ConfigError) as e:
        registry.create({"name": "no_such_pkg.module:Factory"})
    assert e.value.code == "E233"


def test_register_and_dotted_path():
    registry.register("site.ids.test", make_site_ids, replace=True)
    rec = registry.create({"name": "site.ids.test", "prefix": "QQ"})
    assert rec.config() == {"prefix": "QQ"} and "site.ids.test" in registry.names()
    with pytest.raises(ConfigError) as e:
        registry.register("site.ids.test", make_site_ids)
    assert e.value.code == "E231"
    dotted = registry.create({"name": f"{__name__}:make_site_ids", "prefix": "AB"})
    assert isinstance(dotted, SiteIds) and dotted.analyze("x AB1234")[0].start == 2
    with pytest.raises(ConfigError) as e:
        registry.create({"name": f"{__name__}:RecognizerResult", "entity_type": "ID", "start": 0, "end": 1, "score": 1})
    assert e.value.code == "E237"


def test_regex_spec_imports_neither_torch_nor_presidio():
    code = (
        "import sys; from tide_core.recognizers import registry; r = registry.create({'name': 'tide.regex'}); "
        "r.analyze('03/04/2021'); print('torch' in sys.modules, 'presidio_analyzer' in sys.modules, "
        "'tide_core.recognizers.hf_token_classifier' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "False"]


def test_recognizers_pickle_for_workers(tmp_path):
    import pickle

    csv = tmp_path / "g.csv"
    csv.write_text("term,label\nMercy Hospital,HOSPITAL\n", encoding="utf-8")
    rows = [{"patient_id": "p1", "first_name": "Ann", "last_name": "Leeson", "mrn": "123456"}]
    note = Note("n1", "p1", "Ann Leeson (MRN 123456) seen 03/04/2021 at Mercy Hospital by Dr. Smith.")
    for spec in (
        {"name": "tide.regex"},
        {"name": "tide.gazetteer", "csv": str(csv)},
        {"name": "tide.known_phi", "rows": rows},
        {"name": "tide.llm", "base_url": "http://127.0.0.1:9", "model": "m"},
    ):
        rec = registry.create(spec)
        rec.load()
        clone = pickle.loads(pickle.dumps(rec))
        assert clone.fingerprint() == rec.fingerprint()
        if spec["name"] != "tide.llm":
            assert clone.recognize(note) == rec.recognize(note) != []
