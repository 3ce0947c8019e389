"""One colour per PHI label, shared by the page legend and both text panes.

Kept server-side so the legend, the API and the docs agree; light backgrounds keep dark text
readable, and neighbouring labels in ``LABELS`` get clearly different hues.
"""

from __future__ import annotations

from tide_core.types import LABELS

LABEL_COLOURS: dict[str, str] = {
    "PATIENT": "#ffb3b3",
    "DOCTOR": "#b3d1ff",
    "DATE": "#ffe08a",
    "AGE": "#ffc999",
    "ID": "#d5b3ff",
    "PHONE": "#a8e6cf",
    "EMAIL": "#9ee6f0",
    "URL": "#c9e69e",
    "LOCATION": "#f5b3e6",
    "HOSPITAL": "#b3f0d9",
    "OTHER": "#d9d9d9",
}

if set(LABEL_COLOURS) != set(LABELS):  # a label added to the contract needs a colour here
    raise RuntimeError("tide_core.review.colours: LABEL_COLOURS does not cover tide_core.types.LABELS")


def legend() -> list[dict[str, str]]:
    """Labels in contract order with their colours (what ``/api/meta`` returns)."""
    return [{"label": lab, "colour": LABEL_COLOURS[lab]} for lab in LABELS]
