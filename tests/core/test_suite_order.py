"""The suite's slow-files-first order (``tests/conftest.py``) names files that exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_FIRST

HERE = Path(__file__).resolve().parents[1]  # tests/


def test_every_slow_file_named_exists_once():
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
    missing = [name for name in SLOW_FIRST if len(list(HERE.rglob(name))) != 1]
    assert missing == [], f"tests/conftest.py SLOW_FIRST names files that are gone: {missing}"


def test_slow_files_are_collected_first():
    from tests import conftest

    class Item:
        def __init__(self, name: str):
            self.path = HERE / name

    got = [Item(n) for n in ("test_a.py", SLOW_FIRST[1], "test_b.py", SLOW_FIRST[0], SLOW_FIRST[1])]
    conftest.pytest_collection_modifyitems(None, None, got)  # type: ignore[arg-type]
    assert [i.path.name for i in got] == [SLOW_FIRST[0], SLOW_FIRST[1], SLOW_FIRST[1], "test_a.py", "test_b.py"]
