"""BRAT standoff reader (``NAME.txt`` + ``NAME.ann``).

Only text-bound annotations (``T`` lines: ``T1<TAB>LABEL START END[;START END...]<TAB>TEXT``)
are read; relations, events, attributes and notes are ignored.  A discontinuous annotation
(fragments separated by ``;``) is handled by ``discontinuous``:

- ``"split"`` (default): each fragment becomes its own span of the same label;
- ``"hull"``: one span from the first fragment's start to the last fragment's end;
- ``"skip"``: dropped.

Every discontinuous annotation is flagged as a :class:`ReaderIssue` whatever the policy, and
the ``TEXT`` column is checked against the ``.txt`` slice (mismatches are reported by offset).
The ``.txt`` file is read without newline translation so offsets stay byte-for-byte BRAT's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tide_core.errors import InputError
from tide_core.evaluation.crosswalk import Crosswalk, identity_crosswalk
from tide_core.evaluation.documents import LoadedDocs, ReaderIssue
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span

Discontinuous = Literal["split", "hull", "skip"]


def _read_text(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def read_brat_document(
    ann_path: str | Path,
    crosswalk: Crosswalk | None = None,
    discontinuous: Discontinuous = "split",
    recognizer: str = "gold@1",
) -> tuple[GoldDoc, list[ReaderIssue]]:
    ann_path = Path(ann_path)
    txt_path = ann_path.with_suffix(".txt")
    if not txt_path.exists():
        raise InputError(
            "E707",
            f"BRAT annotation {ann_path.name} has no matching .txt file",
            hint="BRAT documents are pairs NAME.txt + NAME.ann in the same folder",
        )
    crosswalk = crosswalk or identity_crosswalk()
    text = _read_text(txt_path)
    note_id = ann_path.stem
    spans: list[Span] = []
    issues: list[ReaderIssue] = []
    for line_no, line in enumerate(_read_text(ann_path).splitlines(), start=1):
        if not line.startswith("T"):
            continue
        parts = line.split("\t")
        if len(parts) < 2:
            raise InputError(
                "E708",
                f"{ann_path.name} line {line_no}: malformed text-bound annotation",
                hint="expected ID<TAB>LABEL START END<TAB>TEXT",
            )
        head = parts[1].split(" ", 1)
        if len(head) != 2:
            raise InputError(
                "E708", f"{ann_path.name} line {line_no}: annotation has no offsets", hint="expected LABEL START END"
            )
        label_raw, offsets_raw = head
        try:
            frags = [tuple(int(x) for x in frag.split()) for frag in offsets_raw.split(";")]
            if any(len(f) != 2 for f in frags):
                raise ValueError
        except ValueError:
            raise InputError(
                "E708",
                f"{ann_path.name} line {line_no}: offsets are not integer pairs",
                hint="write START END, fragments separated by ';'",
            ) from None
        ann_text = parts[2] if len(parts) > 2 else None
        if len(frags) > 1:
            issues.append(
                ReaderIssue(
                    note_id,
                    "discontinuous",
                    frags[0][0],
                    frags[-1][1],
                    f"{parts[0]}: {len(frags)} fragments, policy={discontinuous}",
                )
            )
        if any(not (0 <= s < e <= len(text)) for s, e in frags):
            issues.append(
                ReaderIssue(
                    note_id,
                    "out_of_range",
                    frags[0][0],
                    frags[-1][1],
                    f"{parts[0]}: offsets outside text of length {len(text)}",
                )
            )
            continue
        if ann_text is not None and " ".join(text[s:e] for s, e in frags) != ann_text:
            issues.append(
                ReaderIssue(
                    note_id,
                    "offset_mismatch",
                    frags[0][0],
                    frags[-1][1],
                    f"{parts[0]}: TEXT column differs from the .txt slice "
                    f"(lengths {len(ann_text)} vs {sum(e - s for s, e in frags)})",
                )
            )
        label = crosswalk.lookup(label_raw)
        if label is None:
            continue
        if len(frags) > 1 and discontinuous == "skip":
            continue
        if len(frags) > 1 and discontinuous == "hull":
            frags = [(frags[0][0], frags[-1][1])]
        for s, e in frags:
            spans.append(Span(note_id, s, e, label, 1.0, recognizer))
    spans.sort(key=lambda sp: (sp.start, sp.end, sp.label))
    return GoldDoc(note_id, "", text, tuple(spans), {"format": "brat"}), issues


def read_brat(
    path: str | Path, crosswalk: Crosswalk | None = None, discontinuous: Discontinuous = "split"
) -> LoadedDocs:
    """Read one ``.ann`` file or every ``*.ann`` under a folder (sorted by name)."""
    path = Path(path)
    if path.is_dir():
        anns = sorted(path.rglob("*.ann"))
    elif path.suffix == ".ann":
        anns = [path]
    elif path.with_suffix(".ann").exists():
        anns = [path.with_suffix(".ann")]
    else:
        anns = []
    if not anns:
        raise InputError(
            "E707", f"no BRAT .ann files at {path}", hint="pass a folder of NAME.txt + NAME.ann pairs or one .ann file"
        )
    crosswalk = crosswalk or identity_crosswalk()
    docs, issues = [], []
    for ann in anns:
        doc, doc_issues = read_brat_document(ann, crosswalk, discontinuous)
        docs.append(doc)
        issues.extend(doc_issues)
    return LoadedDocs(docs, issues, "brat", crosswalk.excluded.copy())
