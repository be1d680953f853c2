"""Rows of the annotation export, CSV safety and round trips, JSON lines."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from replay.core.annotate.annotations import Annotation
from replay.core.detection.empty import EmptyTurn
from replay.core.publish.export import (
    CSV_COLUMNS,
    export_rows,
    neutralise,
    write_csv,
    write_file,
    write_jsonl,
)
from replay.core.session.labels import DEFAULT_LABELS
from replay.core.session.model import Kind, Part, Session, Turn


def _session() -> Session:
    """Eight turns: two empty user turns (#3, #4 in 1-based terms) and one empty assistant (#7)."""
    session = Session(path="/data/chat.json", format="chat", session_id="s1")
    texts = [
        ("user", [Part(Kind.TEXT, "Please fix the flaky test, then run it again")]),
        ("assistant", [Part(Kind.TEXT, "Plan: pin the seed,\nrerun  the suite.")]),
        ("user", [Part(Kind.TEXT, "<conversation_data>\n\n</conversation_data>")]),
        ("user", []),
        ("assistant", [Part(Kind.TOOL_CALL, name="bash", input="pytest -q")]),
        ("user", [Part(Kind.TEXT, "ok " * 100)]),
        ("assistant", [Part(Kind.REASONING, "thinking hard")]),
        ("user", [Part(Kind.TEXT, "why did you stop?")]),
    ]
    for number, (role, parts) in enumerate(texts):
        session.add(Turn(id=f"m{number}", role=role, parts=parts,
                         timestamp=f"2025-01-01T10:0{number}:00Z"))
    return session


def _note(turn: str, index: int, label: str, reviewer: str = "ana", **extra: str) -> Annotation:
    return Annotation("s1", turn, index, label, reviewer=reviewer, time="2025-02-02T00:00:00.000Z",
                      **extra)


def test_one_row_per_annotation_in_turn_order() -> None:
    notes = [
        _note("m6", 6, "thinking", confidence="high"),
        _note("m2", 2, "approval", note="plan stated just before"),
        _note("m2", 2, "continue", reviewer="bo"),
        _note("m3", 3, ""),  # withdrawn
        Annotation("other-session", "m2", 2, "artifact"),
    ]
    rows = export_rows(_session(), notes, DEFAULT_LABELS)
    assert [(r["turn_id"], r["reviewer"], r["label"]) for r in rows] == [
        ("m2", "ana", "approval"), ("m2", "bo", "continue"), ("m6", "ana", "thinking")]
    first = rows[0]
    assert first == {
        "session_id": "s1", "source_path": "/data/chat.json", "format": "chat",
        "turn_index": 2, "turn_id": "m2", "role": "user", "timestamp": "2025-01-01T10:02:00Z",
        "empty_reason": "empty-wrapper", "label": "approval", "label_title": "Tacit approval",
        "note": "plan stated just before", "confidence": "medium", "reviewer": "ana",
        "annotated_at": "2025-02-02T00:00:00.000Z", "suggestion": None,
        "before_excerpt": "#2 assistant: Plan: pin the seed, rerun the suite.",
        "after_excerpt": "#5 assistant: [bash] pytest -q",
        "turn_number": 3, "suggestion_rule": "", "overrule": "", "blind": False,
        "turn_now_has_content": False,
    }
    assert rows[2]["empty_reason"] == "reasoning-only"
    assert rows[2]["before_excerpt"].startswith("#6 user: ok ok")
    assert len(rows[2]["before_excerpt"]) == 160 and rows[2]["before_excerpt"].endswith("…")
    assert rows[2]["after_excerpt"] == "#8 user: why did you stop?"


def test_all_empty_adds_unannotated_empty_turns_with_suggestions() -> None:
    def suggester(session: Session, empty: EmptyTurn) -> tuple[str, str, list[str]] | None:
        return ("continue", "low", ["test"]) if empty.role == "user" else None

    rows = export_rows(_session(), [_note("m2", 2, "approval")], DEFAULT_LABELS,
                       all_empty=True, suggester=suggester)
    assert [(r["turn_id"], r["label"], r["suggestion"], r["empty_reason"]) for r in rows] == [
        ("m2", "approval", "continue", "empty-wrapper"),
        ("m3", "", "continue", "no-content"),
        ("m6", "", None, "reasoning-only"),
    ]
    assert rows[1]["before_excerpt"].startswith("#2 assistant")
    assert rows[1]["reviewer"] == "" and rows[1]["label_title"] == ""


def test_annotations_of_non_empty_or_vanished_turns_and_unknown_labels() -> None:
    rows = export_rows(_session(), [_note("m0", 0, "mine"), _note("gone", 40, "approval")],
                       DEFAULT_LABELS)
    assert [(r["turn_id"], r["turn_index"], r["role"], r["empty_reason"], r["label_title"])
            for r in rows] == [("m0", 0, "user", "", ""), ("gone", 40, "", "", "Tacit approval")]
    assert rows[0]["before_excerpt"] == ""
    assert rows[1]["before_excerpt"] == "" and rows[1]["after_excerpt"] == ""


def test_excerpts_read_full_parts_of_shortened_turns() -> None:
    session = _session()
    session.turns[1].parts = [Part(Kind.TEXT, "Plan: short", shortened=True, length=5000)]
    session.loader = lambda turn: [Part(Kind.TEXT, "Plan: the whole text that was cut")]
    rows = export_rows(session, [_note("m2", 2, "approval")], DEFAULT_LABELS)
    assert rows[0]["before_excerpt"] == "#2 assistant: Plan: the whole text that was cut"


def test_session_without_id_matches_its_path_identity() -> None:
    session = _session()
    session.session_id = None
    from replay.core.annotate.annotations import session_identity

    identity = session_identity(session)
    rows = export_rows(session, [Annotation(identity, "m2", 2, "approval")], DEFAULT_LABELS)
    assert [r["session_id"] for r in rows] == [identity]


TRICKY = [
    'say "hi", then stop',
    "line one\nline two\r\nline three",
    "naïve café — 日本語 🙂",
    "=SUM(A1:A9)",
    "+1",
    "-1",
    "@x",
    "\tindented",
    "\rreturn",
    "plain, with comma",
]


def _read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_round_trip_keeps_tricky_cells_and_neutralises_formulas() -> None:
    rows = [{**{column: "" for column in CSV_COLUMNS}, "turn_index": n, "note": value}
            for n, value in enumerate(TRICKY)]
    buffer = io.StringIO(newline="")
    assert write_csv(rows, buffer) == len(TRICKY)
    text = buffer.getvalue()
    assert text.startswith(",".join(CSV_COLUMNS) + "\r\n")
    table = _read_back(text)
    assert table[0] == list(CSV_COLUMNS)
    notes = [line[CSV_COLUMNS.index("note")] for line in table[1:]]
    assert notes == [
        'say "hi", then stop',
        "line one\nline two\r\nline three",
        "naïve café — 日本語 🙂",
        "'=SUM(A1:A9)",
        "'+1",
        "'-1",
        "'@x",
        "'\tindented",
        "'\rreturn",
        "plain, with comma",
    ]
    assert [line[CSV_COLUMNS.index("turn_index")] for line in table[1:]] == [
        str(n) for n in range(len(TRICKY))]
    assert len(table) == len(TRICKY) + 1


@given(st.text())
def test_any_text_survives_the_csv_round_trip(value: str) -> None:
    buffer = io.StringIO(newline="")
    write_csv([{"note": value, "label": "approval"}], buffer)
    line = _read_back(buffer.getvalue())[1]
    cell = line[CSV_COLUMNS.index("note")]
    expected = neutralise(value)
    assert cell == expected
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert (cell[1:] if cell != value else cell) == value


def test_neutralise_leaves_numbers_and_plain_text() -> None:
    assert neutralise(-1) == "-1"
    assert neutralise(None) == ""
    assert neutralise("a=b") == "a=b"


def test_write_file_csv_has_a_bom_and_jsonl_has_none(tmp_path: Path) -> None:
    rows = export_rows(_session(), [_note("m2", 2, "approval", note="=1+1")], DEFAULT_LABELS)
    target = tmp_path / "out.csv"
    target.write_text("old content")
    assert write_file(rows, target, "csv") == 1
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfsession_id,source_path,")
    table = _read_back(data.decode("utf-8-sig"))
    assert table[1][CSV_COLUMNS.index("note")] == "'=1+1"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    lines_path = tmp_path / "out.jsonl"
    assert write_file(rows, lines_path, "jsonl") == 1
    record = orjson.loads(lines_path.read_bytes())
    assert list(record) == list(CSV_COLUMNS)
    assert record["note"] == "=1+1" and record["turn_index"] == 2 and record["suggestion"] is None


def test_write_jsonl_keeps_raw_values() -> None:
    buffer = io.StringIO()
    assert write_jsonl([{"note": "a\nb", "turn_index": 3}], buffer) == 1
    record = orjson.loads(buffer.getvalue())
    assert record["note"] == "a\nb" and record["turn_index"] == 3 and record["label"] is None
    assert buffer.getvalue().count("\n") == 1


def test_a_label_on_a_turn_that_now_has_content_is_exported_and_says_so() -> None:
    notes = [
        _note("m1", 1, "thinking"),  # labelled while it was still being written
        _note("m6", 6, "thinking"),  # still empty
        _note("gone", 40, "artifact"),  # the session no longer holds it
        Annotation("s1", "m7", 7, "thinking", reviewer="bo", has_content=True),
    ]
    rows = {row["turn_id"]: row for row in export_rows(_session(), notes, DEFAULT_LABELS)}
    assert rows["m1"]["turn_now_has_content"] is True
    assert (rows["m1"]["label"], rows["m1"]["empty_reason"]) == ("thinking", "")
    assert rows["m6"]["turn_now_has_content"] is False
    assert rows["gone"]["turn_now_has_content"] is None
    assert rows["m7"]["turn_now_has_content"] is True  # marked in the journal by the app
    stream = io.StringIO()
    write_csv(rows.values(), stream)
    table = list(csv.reader(io.StringIO(stream.getvalue())))
    assert table[0][-1] == "turn_now_has_content"
    by_id = {line[CSV_COLUMNS.index("turn_id")]: line[-1] for line in table[1:]}
    assert by_id == {"m1": "true", "m6": "false", "gone": "", "m7": "true"}


def test_marking_a_label_whose_turn_has_content_keeps_it_and_is_read_back(
        tmp_path: Path) -> None:
    from replay.core.annotate.annotations import AnnotationStore, annotations_from_records
    from replay.core.annotate.journal import Journal

    journal = Journal(tmp_path / "j.jsonl")
    store = AnnotationStore(journal, "s1", "ana")
    saved = store.commit("m1", 1, "thinking", "labelled while it was written")
    marked = store.mark_has_content("m1")
    assert marked is not None and marked.has_content and marked.time == saved.time
    assert store.mark_has_content("m1") is None and store.mark_has_content("m9") is None
    assert store.undo() is not None and store.get("m1") is None  # the commit, not the mark
    records = journal.load().records
    assert [record.get("turn_has_content") for record in records] == [None, True, None]
    store.commit("m1", 1, "thinking")
    store.mark_has_content("m1")
    (note,) = annotations_from_records(journal.load().records)
    assert (note.label, note.note, note.has_content) == ("thinking", "", True)
