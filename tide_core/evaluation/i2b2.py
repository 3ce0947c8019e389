"""i2b2 2014 de-identification XML reader.

A file looks like::

    <deIdi2b2><TEXT><![CDATA[ ...note... ]]></TEXT>
    <TAGS><DATE id="P0" start="16" end="26" text="..." TYPE="DATE" comment=""/> ...</TAGS></deIdi2b2>

The tag name is the PHI category and ``TYPE`` its subtype; both go through the crosswalk
(``NAME/DOCTOR`` → DOCTOR ...).  Every tag's offsets are checked against the TEXT: when
``TEXT[start:end]`` differs from the tag's ``text`` attribute, the reader looks for the
attribute text within ``search_window`` characters and, when ``relocate`` is on, moves the span
there (issue ``offset_relocated`` with the shift); otherwise it keeps the offsets and reports
``offset_mismatch``.  ``strict=True`` raises on any mismatch instead.  Issues give offsets and
shifts, never the text.  The note id is the file stem; the patient id is the part before the
first ``-`` (i2b2 files are named PATIENT-RECORD.xml).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tide_core.errors import InputError
from tide_core.evaluation.crosswalk import Crosswalk, i2b2_crosswalk
from tide_core.evaluation.documents import LoadedDocs, ReaderIssue
from tide_core.evaluation.gold_io import GoldDoc
from tide_core.spans import Span


def _relocate(text: str, needle: str, start: int, window: int) -> int | None:
    """Start of the occurrence of ``needle`` nearest to ``start`` within ``window`` chars."""
    if not needle:
        return None
    lo = max(0, start - window)
    hi = min(len(text), start + len(needle) + window)
    best: int | None = None
    pos = text.find(needle, lo, hi)
    while pos != -1:
        if best is None or abs(pos - start) < abs(best - start):
            best = pos
        pos = text.find(needle, pos + 1, hi)
    return best


def read_i2b2_document(
    path: str | Path,
    crosswalk: Crosswalk | None = None,
    *,
    relocate: bool = True,
    search_window: int = 64,
    strict: bool = False,
    recognizer: str = "gold@1",
) -> tuple[GoldDoc, list[ReaderIssue]]:
    path = Path(path)
    crosswalk = crosswalk or i2b2_crosswalk()
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise InputError(
            "E709",
            f"{path.name} is not well-formed XML (line {exc.position[0]})",
            hint="i2b2 files need <TEXT><![CDATA[...]]></TEXT> and <TAGS>",
        ) from None
    text_el = root.find("TEXT")
    if text_el is None or text_el.text is None:
        raise InputError("E709", f"{path.name} has no <TEXT> element", hint="expected <TEXT><![CDATA[...]]></TEXT>")
    text = text_el.text
    note_id = path.stem
    spans: list[Span] = []
    issues: list[ReaderIssue] = []
    tags = root.find("TAGS")
    for tag in list(tags) if tags is not None else []:
        tag_id = tag.get("id", "?")
        try:
            start, end = int(tag.get("start", "")), int(tag.get("end", ""))
        except ValueError:
            raise InputError(
                "E710",
                f"{path.name} tag {tag_id}: start/end are not integers",
                hint="every PHI tag needs integer start and end attributes",
            ) from None
        surface = tag.get("text")
        if surface is not None and text[start:end] != surface:
            new = _relocate(text, surface, start, search_window)
            if strict:
                raise InputError(
                    "E711",
                    f"{path.name} tag {tag_id}: offsets [{start}, {end}) do not "
                    "match the tag text" + (f" (found {new - start:+d} chars away)" if new is not None else ""),
                    hint="fix the offsets, or read with strict=False to relocate them",
                )
            if relocate and new is not None:
                issues.append(
                    ReaderIssue(
                        note_id,
                        "offset_relocated",
                        start,
                        end,
                        f"tag {tag_id}: moved {new - start:+d} chars to match its text",
                    )
                )
                start, end = new, new + len(surface)
            else:
                issues.append(
                    ReaderIssue(
                        note_id,
                        "offset_mismatch",
                        start,
                        end,
                        f"tag {tag_id}: TEXT slice differs from the tag text "
                        f"(length {end - start} vs {len(surface)}); kept as annotated",
                    )
                )
        if not (0 <= start < end <= len(text)):
            issues.append(
                ReaderIssue(note_id, "out_of_range", start, end, f"tag {tag_id}: outside text of length {len(text)}")
            )
            continue
        label = crosswalk.lookup(tag.tag, tag.get("TYPE"))
        if label is None:
            continue
        spans.append(Span(note_id, start, end, label, 1.0, recognizer))
    spans.sort(key=lambda s: (s.start, s.end, s.label))
    return GoldDoc(note_id, note_id.split("-")[0], text, tuple(spans), {"format": "i2b2"}), issues


def read_i2b2(path: str | Path, crosswalk: Crosswalk | None = None, **kwargs: Any) -> LoadedDocs:
    """Read one i2b2 XML file or every ``*.xml`` under a folder (sorted by name)."""
    path = Path(path)
    files = sorted(path.rglob("*.xml")) if path.is_dir() else ([path] if path.exists() else [])
    if not files:
        raise InputError("E709", f"no i2b2 XML files at {path}", hint="pass a folder of *.xml or one file")
    crosswalk = crosswalk or i2b2_crosswalk()
    docs, issues = [], []
    for f in files:
        doc, doc_issues = read_i2b2_document(f, crosswalk, **kwargs)
        docs.append(doc)
        issues.extend(doc_issues)
    return LoadedDocs(docs, issues, "i2b2", crosswalk.excluded.copy())
