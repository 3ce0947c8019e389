"""Evaluation report writers: JSON (machine), Markdown (people), PNG (recall with 95% CIs).

Reports hold counts, rates and intervals only -- no note text and no span values -- so they
can leave the secure environment with the model card.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tide_core.evaluation.evaluate import EvalReport


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _ci(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]"


def to_markdown(report: EvalReport) -> str:
    split = getattr(report, "split", False)
    label_set = getattr(report, "label_set", "fine")
    lines = [
        "# TIDE span-level evaluation",
        "",
        f"- documents: {report.n_docs}; span match: same label and overlap ≥ {report.tau:g} × union"
        + (
            "; split match on (several same-label pieces, each ≥ 0.5 inside, covering ≥ "
            f"{report.tau:g} of the gold span)"
            if split
            else ""
        ),
        f"- 95% intervals: {report.bootstrap['n_resamples']} document-level bootstrap resamples "
        f"(seed {report.bootstrap['seed']}, percentile method)",
    ]
    if label_set != "fine":
        lines.append(f"- label set: {label_set} ({', '.join(report.labels)}); gold and predictions mapped")
    if report.crosswalk:
        lines.append(f"- label crosswalk: {report.crosswalk}")
    if report.excluded_labels:
        lines.append(
            "- excluded by crosswalk: " + ", ".join(f"{k} ({v})" for k, v in sorted(report.excluded_labels.items()))
        )
    if report.reader_issues:
        lines.append("- reader issues: " + ", ".join(f"{k}: {v}" for k, v in sorted(report.reader_issues.items())))
    for name, info in report.pairing.items():
        lines.append(
            f"- system {name}: {info['n_pred_docs']} prediction documents; "
            f"{info['gold_without_pred']} gold documents without predictions; "
            f"{info['pred_not_in_gold']} prediction documents not in the gold (ignored)"
        )
    for sysres in report.systems:
        d = sysres.to_dict()
        o = d["overall"]
        ci = o.get("ci", {})
        lines += [
            "",
            f"## System {sysres.name}",
            "",
            f"Micro recall **{_fmt(o['micro_recall'])}**{_ci(ci.get('micro_recall'))}, "
            f"precision {_fmt(o['micro_precision'])}{_ci(ci.get('micro_precision'))}, "
            f"F1 {_fmt(o['micro_f1'])}; macro recall {_fmt(o['macro_recall'])}{_ci(ci.get('macro_recall'))}, "
            f"macro precision {_fmt(o['macro_precision'])}; character-level recall "
            f"{_fmt(o['char_recall'])}{_ci(ci.get('char_recall'))}.",
            "",
            "| label | gold | pred | TP | FP | FN | recall [95% CI] | precision [95% CI] | F1 |",
            "|---|---:|---:|---:|---:|---:|---|---|---:|",
        ]
        for lab, m in d["category"].items():
            if m["n_gold"] == 0 and m["n_pred"] == 0:
                continue
            c = m.get("ci", {})
            lines.append(
                f"| {lab} | {m['n_gold']} | {m['n_pred']} | {m['tp']} | {m['fp']} | {m['fn']} | "
                f"{_fmt(m['recall'])}{_ci(c.get('recall'))} | {_fmt(m['precision'])}{_ci(c.get('precision'))} | "
                f"{_fmt(m['f1'])} |"
            )
        for key, s in d["sensitivity"].items():
            lines += [
                "",
                f"Sensitivity ({key}): micro recall {_fmt(s['micro_recall'])}, "
                f"micro precision {_fmt(s['micro_precision'])}, macro recall {_fmt(s['macro_recall'])}.",
            ]
        lines += _characters_md(d)
    if report.paired:
        a, b = report.systems[0].name, report.systems[1].name
        lines += [
            "",
            f"## Paired bootstrap test: recall {b} − {a}",
            "",
            "| label | gold | recall A | recall B | Δ [95% CI] | p | p (Bonferroni) |",
            "|---|---:|---:|---:|---|---:|---:|",
        ]
        for r in report.paired:
            lines.append(
                f"| {r['label']} | {r['n_gold']} | {_fmt(r['recall_a'])} | {_fmt(r['recall_b'])} | "
                f"{_fmt(r['delta'])}{_ci(r['ci'])} | {_fmt(r['p_value'], 4)} | {_fmt(r['p_bonferroni'], 4)} |"
            )
    return "\n".join(lines) + "\n"


def _characters_md(d: dict[str, Any]) -> list[str]:
    """Character-level privacy section of one system (``SystemResult.to_dict()``)."""
    ch = d.get("characters")
    if not ch:
        return []
    o = ch["overall"]
    lines = [
        "",
        "### Character level (privacy view)",
        "",
        f"Gold PHI characters left uncovered by any prediction: **{_fmt(o['uncovered_share'])}** "
        f"({o['uncovered_chars']} of {o['gold_chars']}); letters and digits left uncovered: "
        f"**{_fmt(o.get('alnum_uncovered_share'))}** ({o.get('uncovered_alnum', 0)} of {o.get('gold_alnum', 0)}); "
        "covered by the same label "
        f"{_fmt(o['same_label_share'])}; character precision {_fmt(o['char_precision'])} "
        f"({o['pred_in_gold_chars']} of {o['pred_chars']} predicted characters inside gold PHI).",
        "",
        "| label | gold chars | uncovered share | gold letters/digits | letters/digits uncovered | "
        "same-label share | predicted chars | char precision |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lab, m in ch["category"].items():
        if m["gold_chars"] == 0 and m["pred_chars"] == 0:
            continue
        lines.append(
            f"| {lab} | {m['gold_chars']} | {_fmt(m['uncovered_share'])} | {m.get('gold_alnum', 0)} | "
            f"{_fmt(m.get('alnum_uncovered_share'))} | {_fmt(m['same_label_share'])} | "
            f"{m['pred_chars']} | {_fmt(m['char_precision'])} |"
        )
    ct = d.get("clinical_terms_removed")
    if ct:
        lines += [
            "",
            f"Clinical terms removed: {ct['n_removed']} of {ct['n_terms']} "
            f"({_fmt(ct['share'])}) in {ct['n_docs']} documents listing clinical_terms.",
        ]
    return lines


def plot_recall(report: EvalReport, path: str | Path) -> Path:
    """Bar chart of per-category recall with 95% CI error bars (one bar group per system).

    Drawn on a bare ``Figure`` (Agg canvas), not through ``pyplot``: no process-wide backend or figure registry.
    """
    path = Path(path)
    labels = [lab for lab in report.labels if any(s.point["category"][lab]["n_gold"] > 0 for s in report.systems)]
    fig = Figure(figsize=(max(6, 0.9 * len(labels) + 2), 4))
    ax = fig.subplots()
    width = 0.8 / len(report.systems)
    x = np.arange(len(labels))
    for k, sysres in enumerate(report.systems):
        vals = [sysres.point["category"][lab]["recall"] or 0.0 for lab in labels]
        lo_err, hi_err = [], []
        for lab, v in zip(labels, vals, strict=False):
            ci = (sysres.intervals or {}).get("category", {}).get(lab, {}).get("recall")
            if ci and ci[0] is not None:
                lo_err.append(max(0.0, v - ci[0]))
                hi_err.append(max(0.0, ci[1] - v))
            else:
                lo_err.append(0.0)
                hi_err.append(0.0)
        ax.bar(
            x + (k - (len(report.systems) - 1) / 2) * width,
            vals,
            width,
            yerr=[lo_err, hi_err],
            capsize=3,
            label=f"system {sysres.name}",
        )
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"span recall (τ={report.tau:g})")
    ax.set_title("Per-category recall, 95% bootstrap CI")
    if len(report.systems) > 1:
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def write_report(report: EvalReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``eval_report.json``, ``eval_report.md`` and ``recall_by_category.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / "eval_report.json",
        "markdown": out / "eval_report.md",
        "png": out / "recall_by_category.png",
    }
    paths["json"].write_text(json.dumps(report.to_dict(), indent=2, sort_keys=False), encoding="utf-8")
    paths["markdown"].write_text(to_markdown(report), encoding="utf-8")
    plot_recall(report, paths["png"])
    return paths
