"""The fifteen drift components: what each one measures and how far a batch is from the reference.

Four lenses, each answering a narrower question:

=========  ======================  =========================================  ==========  ============
lens       component               question                                   distance    default floor
                                                                                          (watch/drift)
=========  ======================  =========================================  ==========  ============
text       length                  did the note-length distribution change?   PSI         0.10 / 0.25
text       lines_per_1k            more or fewer line breaks per character?   relative    0.10 / 0.25
text       digit_ratio             share of digit characters                  relative    0.10 / 0.25
text       uppercase_ratio         share of upper-case letters                relative    0.10 / 0.25
text       punct_ratio             share of punctuation characters            relative    0.10 / 0.25
text       nonascii_ratio          share of non-ASCII characters              relative*   0.10 / 0.25
mix        note_type_mix           note-type mix                              JS dist.    0.10 / 0.20
mix        source_mix              source-system mix                          JS dist.    0.10 / 0.20
mix        site_mix                site mix                                   JS dist.    0.10 / 0.20
output     spans_per_1k            recognizer spans per 1,000 characters      relative    0.10 / 0.25
output     label_mix               label mix of recognizer spans              JS dist.    0.10 / 0.20
output     label_rate_drop         largest drop of one label's spans per 1k   rel. drop   0.25 / 0.50
output     confidence              span confidence distribution               PSI         0.10 / 0.25
residual   residual_note_rate      share of released notes with a screen hit  abs. diff.  0.01 / 0.02
residual   residual_label_rise     largest rise of one label's flagged share  abs. diff.  0.01 / 0.02
=========  ======================  =========================================  ==========  ============

PSI = Σ (b − r) · ln(b / r) over bins (proportions floored at 1e-4).  JS distance = the square
root of the base-2 Jensen–Shannon divergence (0 = same mix, 1 = disjoint).  Relative change =
|b − r| / max(r, floor) (*non-ASCII uses a floor of 0.1% of characters so a near-zero reference
does not make every batch "drift").  The per-label components only consider labels with at
least 20 reference spans (or 5 flagged notes).  The residual note rate counts only when it is
also beyond sampling noise: a pooled two-proportion z-test at the 1% level, with at least 30
notes on both sides.  These floors are the lowest alert levels; calibration may raise them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

LENSES = ("text", "mix", "output", "residual")
MIN_LABEL_SPANS = 20
MIN_LABEL_FLAGGED = 5
MIN_DOCS_PER_SIDE = 30


class UnavailableError(Exception):
    """A component cannot be computed; the message is the reason (no data values)."""


def psi(ref_counts: Sequence[float], batch_counts: Sequence[float], eps: float = 1e-4) -> float:
    r = np.asarray(ref_counts, float)
    b = np.asarray(batch_counts, float)
    if r.sum() <= 0 or b.sum() <= 0:
        raise UnavailableError("empty distribution")
    r = np.maximum(r / r.sum(), eps)
    b = np.maximum(b / b.sum(), eps)
    return float(np.sum((b - r) * np.log(b / r)))


def js_distance(ref: dict[str, int], batch: dict[str, int]) -> float:
    keys = sorted(set(ref) | set(batch))
    r = np.array([ref.get(k, 0) for k in keys], float)
    b = np.array([batch.get(k, 0) for k in keys], float)
    if r.sum() <= 0 or b.sum() <= 0:
        raise UnavailableError("no categories")
    r, b = r / r.sum(), b / b.sum()
    m = (r + b) / 2

    def kl(p: npt.NDArray[np.float64], q: npt.NDArray[np.float64]) -> float:
        mask = p > 0
        return float(np.sum(p[mask] * np.log2(p[mask] / q[mask])))

    return math.sqrt(max(0.0, 0.5 * kl(r, m) + 0.5 * kl(b, m)))


def relative_change(ref: float, batch: float, floor: float = 1e-9) -> float:
    return abs(batch - ref) / max(abs(ref), floor)


def _ratio(prof: dict[str, Any], num: str, den: str, scale: float = 1.0) -> float:
    d = prof["text"][den]
    if d <= 0:
        raise UnavailableError(f"no {den} in the documents")
    return float(scale * prof["text"][num] / d)


def _need(prof: dict[str, Any], part: str, side: str = "batch") -> dict[str, Any]:
    if prof.get(part) is None:
        what = "recognizer spans" if part == "spans" else "residual screen results"
        raise UnavailableError(f"no {what} given" + (" when the reference was frozen" if side == "reference" else ""))
    part_profile: dict[str, Any] = prof[part]
    return part_profile


def _fingerprint(ref: dict[str, Any], batch: dict[str, Any], key: str) -> None:
    r, b = ref.get(key), batch.get(key)
    if r and b and r != b:
        raise UnavailableError("re-baseline: the measuring recognizer changed since the reference was frozen")


def _rate_1k(prof: dict[str, Any], count: int) -> float:
    chars = prof["text"]["chars"]
    if chars <= 0:
        raise UnavailableError("no characters")
    return float(1000.0 * count / chars)


def _spans_per_1k(ref: dict[str, Any], batch: dict[str, Any]) -> float:
    _fingerprint(ref, batch, "recognizer_fingerprint")
    r, b = _need(ref, "spans", "reference"), _need(batch, "spans")
    return relative_change(_rate_1k(ref, sum(r["by_label"].values())), _rate_1k(batch, sum(b["by_label"].values())))


def _label_mix(ref: dict[str, Any], batch: dict[str, Any]) -> float:
    _fingerprint(ref, batch, "recognizer_fingerprint")
    return js_distance(_need(ref, "spans", "reference")["by_label"], _need(batch, "spans")["by_label"])


def _label_rate_drop(ref: dict[str, Any], batch: dict[str, Any]) -> float:
    _fingerprint(ref, batch, "recognizer_fingerprint")
    r, b = _need(ref, "spans", "reference")["by_label"], _need(batch, "spans")["by_label"]
    drops = []
    for lab, rc in r.items():
        if rc < MIN_LABEL_SPANS:
            continue
        rr, br = _rate_1k(ref, rc), _rate_1k(batch, b.get(lab, 0))
        drops.append(max(0.0, (rr - br) / rr))
    if not drops:
        raise UnavailableError(f"no label has {MIN_LABEL_SPANS}+ reference spans")
    return max(drops)


def _confidence(ref: dict[str, Any], batch: dict[str, Any]) -> float:
    _fingerprint(ref, batch, "recognizer_fingerprint")
    return psi(_need(ref, "spans", "reference")["conf_hist"], _need(batch, "spans")["conf_hist"])


def two_proportion_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided pooled z-test p-value for k1/n1 vs k2/n2."""
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (k1 / n1 - k2 / n2) / se
    return float(2 * norm.sf(abs(z)))


def _residual_rate(ref: dict[str, Any], batch: dict[str, Any]) -> tuple[float, dict[str, float]]:
    _fingerprint(ref, batch, "screen_fingerprint")
    r, b = _need(ref, "residual", "reference"), _need(batch, "residual")
    if r["n_notes"] < MIN_DOCS_PER_SIDE or b["n_notes"] < MIN_DOCS_PER_SIDE:
        raise UnavailableError(f"fewer than {MIN_DOCS_PER_SIDE} screened notes on one side")
    rr, br = r["n_flagged"] / r["n_notes"], b["n_flagged"] / b["n_notes"]
    p = two_proportion_p(r["n_flagged"], r["n_notes"], b["n_flagged"], b["n_notes"])
    # only a rise beyond sampling noise (1% level) counts; a fall is good news
    return (max(0.0, br - rr) if p < 0.01 else 0.0), {"p_value": p, "reference": rr, "batch": br}


def _residual_label_rise(ref: dict[str, Any], batch: dict[str, Any]) -> float:
    _fingerprint(ref, batch, "screen_fingerprint")
    r, b = _need(ref, "residual", "reference"), _need(batch, "residual")
    if r["n_notes"] < MIN_DOCS_PER_SIDE or b["n_notes"] < MIN_DOCS_PER_SIDE:
        raise UnavailableError(f"fewer than {MIN_DOCS_PER_SIDE} screened notes on one side")
    rises = [
        max(0.0, b["notes_by_label"].get(lab, 0) / b["n_notes"] - c / r["n_notes"])
        for lab, c in r["notes_by_label"].items()
    ]
    rises += [b["notes_by_label"][lab] / b["n_notes"] for lab in b["notes_by_label"] if lab not in r["notes_by_label"]]
    return max(rises) if rises else 0.0


@dataclass(frozen=True)
class ComponentSpec:
    name: str
    lens: str
    kind: str
    default_watch: float
    default_drift: float
    compute: Callable[
        [dict[str, Any], dict[str, Any]], Any
    ]  # (reference profile, batch profile) -> value | (value, extra)


def _rel(
    num: str, den: str, scale: float = 1.0, floor: float = 1e-9
) -> Callable[[dict[str, Any], dict[str, Any]], float]:
    def f(ref: dict[str, Any], batch: dict[str, Any]) -> float:
        return relative_change(_ratio(ref, num, den, scale), _ratio(batch, num, den, scale), floor)

    return f


def _mix(key: str) -> Callable[[dict[str, Any], dict[str, Any]], float]:
    def f(ref: dict[str, Any], batch: dict[str, Any]) -> float:
        if set(ref["mix"][key]) == {"?"} and set(batch["mix"][key]) == {"?"}:
            raise UnavailableError(f"no {key} metadata")
        return js_distance(ref["mix"][key], batch["mix"][key])

    return f


COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec("length", "text", "psi", 0.10, 0.25, lambda r, b: psi(r["length_hist"], b["length_hist"])),
    ComponentSpec("lines_per_1k", "text", "relative", 0.10, 0.25, _rel("lines", "chars", 1000.0)),
    ComponentSpec("digit_ratio", "text", "relative", 0.10, 0.25, _rel("digits", "chars")),
    ComponentSpec("uppercase_ratio", "text", "relative", 0.10, 0.25, _rel("upper", "alpha")),
    ComponentSpec("punct_ratio", "text", "relative", 0.10, 0.25, _rel("punct", "chars")),
    ComponentSpec("nonascii_ratio", "text", "relative", 0.10, 0.25, _rel("nonascii", "chars", floor=1e-3)),
    ComponentSpec("note_type_mix", "mix", "js_distance", 0.10, 0.20, _mix("note_type")),
    ComponentSpec("source_mix", "mix", "js_distance", 0.10, 0.20, _mix("source")),
    ComponentSpec("site_mix", "mix", "js_distance", 0.10, 0.20, _mix("site")),
    ComponentSpec("spans_per_1k", "output", "relative", 0.10, 0.25, _spans_per_1k),
    ComponentSpec("label_mix", "output", "js_distance", 0.10, 0.20, _label_mix),
    ComponentSpec("label_rate_drop", "output", "largest_drop", 0.25, 0.50, _label_rate_drop),
    ComponentSpec("confidence", "output", "psi", 0.10, 0.25, _confidence),
    ComponentSpec("residual_note_rate", "residual", "abs_diff_tested", 0.01, 0.02, _residual_rate),
    ComponentSpec("residual_label_rise", "residual", "abs_diff", 0.01, 0.02, _residual_label_rise),
)
COMPONENT_NAMES = tuple(c.name for c in COMPONENTS)


def compute(
    spec: ComponentSpec, ref: dict[str, Any], batch: dict[str, Any]
) -> tuple[float | None, str | None, dict[str, Any]]:
    """(value, reason-if-unavailable, extra) -- never raises for missing data."""
    try:
        out = spec.compute(ref, batch)
    except UnavailableError as exc:
        return None, str(exc), {}
    except (KeyError, ZeroDivisionError):
        return None, "statistic missing from the reference or batch", {}
    if isinstance(out, tuple):
        return float(out[0]), None, out[1]
    return float(out), None, {}
