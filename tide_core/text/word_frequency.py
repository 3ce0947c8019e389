"""English word frequencies (``wordfreq``), loaded once per process and shared by the recognizers
that ask "is this an everyday English word?" (``tide.places``, ``tide.names``)."""

from __future__ import annotations

from functools import lru_cache

import wordfreq


@lru_cache(maxsize=1)
def english_frequencies() -> dict[str, float]:
    """Lower-case word -> frequency (per word of English text)."""
    return wordfreq.get_frequency_dict("en")
