"""Span-level evaluation: matching, metrics, bootstrap intervals, readers and reports.

See docs/evaluation.md.  Main entry points (imported lazily so ``gold_io`` stays light):
``evaluate``, ``write_report``, ``decompose_recall_drop``, ``load_gold``, ``load_predictions``,
``load_crosswalk``, ``character_metrics``, ``clinical_terms_removed``, ``load_cached_predictions``,
``get_label_set``.
"""

from __future__ import annotations

from typing import Any

from tide_core.plugins import load_dotted

_EXPORTS = {
    "evaluate": "tide_core.evaluation.evaluate",
    "EvalReport": "tide_core.evaluation.evaluate",
    "write_report": "tide_core.evaluation.report",
    "to_markdown": "tide_core.evaluation.report",
    "decompose_recall_drop": "tide_core.evaluation.decomposition",
    "load_gold": "tide_core.evaluation.loading",
    "load_predictions": "tide_core.evaluation.loading",
    "load_crosswalk": "tide_core.evaluation.crosswalk",
    "match_document": "tide_core.evaluation.matching",
    "character_metrics": "tide_core.evaluation.characters",
    "clinical_terms_removed": "tide_core.evaluation.characters",
    "load_cached_predictions": "tide_core.evaluation.loading",
    "get_label_set": "tide_core.evaluation.labelsets",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return load_dotted(f"{_EXPORTS[name]}:{name}")
    raise AttributeError(name)
