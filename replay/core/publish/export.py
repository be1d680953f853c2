"""Export annotations of a session as CSV (spreadsheet-safe) or JSON lines.

Byte-order mark: Excel only reads a CSV as UTF-8 when it starts with a BOM, so files are
written with `utf-8-sig` (`write_file`); standard output gets plain UTF-8, because a BOM
in a pipe would corrupt the first column name for `csvkit`, `awk` and friends. A script
that reads a file with plain `utf-8` sees the first key as `\ufeffsession_id`: it reads with
`utf-8-sig`, or the file is written without the mark (`bom=False`, `export --no-bom`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from replay.core.annotate.annotations import Annotation, session_identity
from replay.core.annotate.outgrown import now_with_content
from replay.core.detection.empty import (
    DEFAULT_RULES,
    DetectionRules,
    EmptyTurn,
    Suggester,
    find_empty_turns,
    is_visible,
)
from replay.core.files import output_stream
from replay.core.safe import json_line, path_text
from replay.core.session.harness import as_shown
from replay.core.session.labels import LabelSet
from replay.core.session.model import Kind, Session, Turn, TurnColumns
from replay.core.session.text import one_line

CSV_COLUMNS: tuple[str, ...] = (
    "session_id", "source_path", "format", "turn_index", "turn_id", "role", "timestamp",
    "empty_reason", "label", "label_title", "note", "confidence", "reviewer", "annotated_at",
    "suggestion", "before_excerpt", "after_excerpt",
    # Appended in the third round, after the first ones, so scripts reading by position keep
    # working: the turn's `#N`, and what the journal holds beside the label.
    "turn_number", "suggestion_rule", "overrule", "blind",
    # Appended (#20) after every column before it: the annotated turn shows content now.
    "turn_now_has_content",
)
"""Columns of the CSV export (and the keys of `--as jsonl`), in the order of the product
contract: the one list every writer follows; a new column is appended at the end."""

EXCERPT_CHARS = 160
"""Length of the before/after excerpts."""

SEARCH_LIMIT = 500
"""How many turns to walk past looking for a non-empty neighbour."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

Row = dict[str, Any]


def _has_content(turn: Turn) -> bool:
    return any(is_visible(part) for part in turn.parts)


def _neighbour(session: Session, index: int, step: int) -> Turn | None:
    """The nearest turn with visible content before (step -1) or after (step 1) `index`."""
    position = index + step
    walked = 0
    while 0 <= position < len(session.turns) and walked < SEARCH_LIMIT:
        turn = session.turns[position]
        if _has_content(turn):
            return turn
        position += step
        walked += 1
    return None


def excerpt(session: Session, turn: Turn | None, limit: int = EXCERPT_CHARS) -> str:
    """One line showing a turn: `#N role: text`, tool calls as `[tool] input`."""
    if turn is None:
        return ""
    pieces: list[str] = []
    for part in session.full_parts(turn):
        if not is_visible(part):
            continue
        if part.kind == Kind.TEXT:
            pieces.append(as_shown(part.text) or part.text)
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            pieces.append(f"[{part.name or 'tool'}] {part.input or part.text or ''}")
        else:
            pieces.append(f"[{part.kind}: {part.name or ''}]")
        if sum(len(piece) for piece in pieces) > limit * 4:
            break
    return one_line(f"#{turn.index + 1} {turn.role}: " + " ".join(pieces), limit)


def _row(
    session: Session, turn: Turn | None, empty: EmptyTurn | None, annotation: Annotation | None,
    labels: LabelSet, has_content: bool | None = False,
) -> Row:
    index = turn.index if turn is not None else (annotation.turn_index if annotation else -1)
    label = labels.get(annotation.label) if annotation else None
    # A missing reply is keyed after its request (`turn` is the request): its own id, the
    # request's index, and the request is the last turn before it.
    placeholder = empty is not None and empty.is_placeholder
    before = turn if placeholder else (_neighbour(session, index, -1) if turn else None)
    return {
        "session_id": session_identity(session),
        # A file name that is not UTF-8 is written with those bytes as \xNN (README).
        "source_path": path_text(session.path),
        "format": session.format,
        "turn_index": index,
        "turn_id": (empty.id if placeholder and empty is not None
                    else turn.id if turn is not None
                    else (annotation.turn_id if annotation else "")),
        "role": (empty.role if placeholder and empty is not None
                 else turn.role if turn is not None else ""),
        "timestamp": turn.timestamp if turn is not None else None,
        "empty_reason": empty.reason if empty else "",
        "label": annotation.label if annotation else "",
        "label_title": label.title if label else "",
        "note": annotation.note if annotation else "",
        "confidence": annotation.confidence if annotation else "",
        "reviewer": annotation.reviewer if annotation else "",
        "annotated_at": annotation.time if annotation else "",
        "suggestion": empty.suggestion if empty else None,
        "before_excerpt": excerpt(session, before),
        "after_excerpt": excerpt(session, _neighbour(session, index, 1)) if turn else "",
        # The `#N` a person sees (`index + 1`, as scan's `number`; a missing reply's is its
        # request's, as the placeholder `#N+` is named after it).
        "turn_number": index + 1 if index >= 0 else None,
        # The rule behind the suggestion the reviewer saw when saving (the journal's), and
        # for a turn nobody annotated the rule behind `suggestion`.
        "suggestion_rule": (annotation.rule if annotation
                            else (empty.suggestion_rule or "") if empty else ""),
        "overrule": annotation.overrule if annotation else "",
        "blind": annotation.blind if annotation else None,
        "turn_now_has_content": has_content,
    }


def export_rows(
    session: Session,
    annotations: Iterable[Annotation],
    labels: LabelSet,
    *,
    all_empty: bool = False,
    suggester: Suggester | None = None,
    rules: DetectionRules = DEFAULT_RULES,
) -> list[Row]:
    """One row per annotation of this session (and, with `all_empty`, per unannotated empty turn).

    Rows follow the turn order, then reviewer; `turn_index` is 0-based like `scan --json`.
    Annotations of turns the session no longer holds are kept, with blank turn columns. An
    annotated missing reply (`<request id>+no-reply`) is exported whatever `rules` say;
    unannotated ones only when `rules.missing_replies`.
    """
    identity = session_identity(session)
    annotations = list(annotations)
    noted = {note.turn_id for note in annotations}
    turns = session.turns
    if isinstance(turns, TurnColumns):
        # A compact index: look ids up in it, never read every turn back.
        def by_id(turn_id: str) -> Turn | None:
            found = turns.ids_with(turn_id, prefix=False, limit=1)
            return turns[found[0]] if found else None
    else:
        whole = {turn.id: turn for turn in turns}
        by_id = whole.get
    found = find_empty_turns(session, rules.with_options(missing_replies=True), suggester)
    empties = {empty.id: empty for empty in found
               if rules.missing_replies or not empty.is_placeholder or empty.id in noted}
    keyed: list[tuple[int, str, str, Row]] = []
    annotated: set[str] = set()
    current = [note for note in annotations if not note.withdrawn and note.session_id == identity]
    # Labelled while empty, not empty now (a reply still being written then): said, not hidden.
    outgrown = now_with_content(session, (note.turn_id for note in current), empties)
    for note in current:
        empty = empties.get(note.turn_id)
        turn = by_id(note.turn_id) if empty is None else session.turns[empty.index]
        annotated.add(note.turn_id)
        has_content: bool | None = note.turn_id in outgrown or (note.has_content and empty is None)
        if not has_content and empty is None and turn is None:
            has_content = None  # the session no longer holds the turn: unknown
        row = _row(session, turn, empty, note, labels, has_content)
        keyed.append((row["turn_index"], note.reviewer, note.time, row))
    if all_empty:
        for empty in empties.values():
            if empty.id not in annotated:
                row = _row(session, session.turns[empty.index], empty, None, labels)
                keyed.append((empty.index, "", "", row))
    keyed.sort(key=lambda item: item[:3])
    return [row for *_, row in keyed]


def neutralise(value: object) -> str:
    """A cell as text, with a leading `'` when a spreadsheet would run it as a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str):
        return str(value)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def write_csv(rows: Iterable[Row], stream: IO[str]) -> int:
    """Write a header and the rows as RFC 4180 CSV (CRLF, minimal quoting); returns the row count.

    Open files with `newline=""` so embedded line breaks stay as written.
    """
    writer = csv.writer(stream, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    count = 0
    for row in rows:
        writer.writerow([neutralise(row.get(column)) for column in CSV_COLUMNS])
        count += 1
    return count


def write_jsonl(rows: Iterable[Row], stream: IO[str]) -> int:
    """Write one JSON object per row, columns in CSV order; returns the row count."""
    count = 0
    for row in rows:
        # json_line: C1, bidi and zero-width characters as \u escapes, the same text decoded.
        stream.write(json_line({column: row.get(column) for column in CSV_COLUMNS}).decode())
        count += 1
    return count


def write_file(rows: Iterable[Row], path: str | Path, kind: str = "csv", *,
               bom: bool = True) -> int:
    """Write rows to a file as `csv` (UTF-8 with a BOM unless `bom` is False) or `jsonl`;
    returns the row count.

    A regular file is written beside its destination and renamed over it, so a failed export
    never leaves a half-written file in place of a good one; a symbolic link is written
    through to its target, a FIFO or a device is written into (see `output_stream`).

    Raises:
        OSError: the file cannot be written.
    """
    encoding = "utf-8-sig" if kind == "csv" and bom else "utf-8"
    with output_stream(path, encoding) as stream:
        return write_csv(rows, stream) if kind == "csv" else write_jsonl(rows, stream)
