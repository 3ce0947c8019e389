"""The place recognizer's automaton is built once per process (tide_core/recognizers/places.py)."""

from tide_core.recognizers.places import PlaceRecognizer


def test_recognizers_in_one_process_share_one_place_automaton():
    """The 137,000-word automaton is built once per process: a run creates place recognizers per
    step, stage and fingerprint, and each build took seconds."""
    first, second = PlaceRecognizer(), PlaceRecognizer(score=0.7)
    first.load()
    second.load()
    assert first._matcher is second._matcher
    assert second.analyze("She moved to Springfield, MA last year.")  # the shared automaton still matches
