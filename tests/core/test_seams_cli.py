"""The seams a new user fell through on the command line (issue 23), run as a subprocess."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay.core.annotate.annotations import AnnotationStore
from replay.core.publish.export import CSV_COLUMNS
from replay.core.readers import load_sessions
from tests.conftest import SAMPLES
from tests.ui.sessions import write_chat

FIRST_COLUMNS = (
    "session_id", "source_path", "format", "turn_index", "turn_id", "role", "timestamp",
    "empty_reason", "label", "label_title", "note", "confidence", "reviewer", "annotated_at",
    "suggestion", "before_excerpt", "after_excerpt",
)
"""The columns scripts read by position before the third round: they never move."""


def run_replay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`replay ARGS` as a user runs it (the test's isolated data directory is inherited)."""
    return subprocess.run([sys.executable, "-m", "replay", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=os.environ.copy())


@pytest.fixture
def annotated(tmp_path: Path) -> tuple[Path, Path]:
    """A chat session and a journal in which bob overruled a suggestion and cy chose blind."""
    session_file = write_chat(tmp_path / "migration.json")
    journal = tmp_path / "team.jsonl"
    session = load_sessions(session_file)[0]
    AnnotationStore.for_session(session, "bob", journal).commit(
        "m009", 9, "approval", suggestion="continue", rule="plan-then-silence",
        overrule="context")
    AnnotationStore.for_session(session, "cy", journal).commit("m020", 20, "reflect", blind=True)
    return session_file, journal


def test_csv_appends_turn_number_rule_overrule_and_blind_after_the_old_columns(
        annotated: tuple[Path, Path], tmp_path: Path) -> None:
    """Item 3: the CSV dropped the overrule reason, the rule, the blind flag and the #N."""
    session_file, journal = annotated
    out = tmp_path / "review.csv"
    done = run_replay("export", str(session_file), "--annotations", str(journal), "-o", str(out))
    assert done.returncode == 0, done.stderr
    with open(out, encoding="utf-8-sig", newline="") as stream:
        header, *rows = list(csv.reader(stream))
    assert tuple(header[:len(FIRST_COLUMNS)]) == FIRST_COLUMNS
    assert header[len(FIRST_COLUMNS):len(FIRST_COLUMNS) + 4] == [
        "turn_number", "suggestion_rule", "overrule", "blind"]
    assert tuple(header) == CSV_COLUMNS
    by_name = [dict(zip(header, row, strict=True)) for row in rows]
    assert [(row["reviewer"], row["turn_number"], row["suggestion_rule"], row["overrule"],
             row["blind"]) for row in by_name] == [
        ("bob", "10", "plan-then-silence", "context", "false"),
        ("cy", "21", "", "", "true")]


def test_jsonl_has_the_same_keys_with_typed_values(annotated: tuple[Path, Path]) -> None:
    session_file, journal = annotated
    done = run_replay("export", str(session_file), "--annotations", str(journal),
                      "--as", "jsonl", "--all-empty")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(tuple(record) == CSV_COLUMNS for record in records)
    assert [(r["turn_number"], r["overrule"], r["blind"]) for r in records] == [
        (10, "context", False), (21, "", True)]


def test_unannotated_rows_name_the_rule_behind_their_suggestion(tmp_path: Path) -> None:
    done = run_replay("export", str(SAMPLES / "torch-revert.opencode.json"), "--all-empty",
                      "--as", "jsonl")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records and all(r["blind"] is None and r["overrule"] == "" for r in records)
    assert all(r["turn_number"] == r["turn_index"] + 1 for r in records)
    assert any(r["suggestion"] and r["suggestion_rule"] for r in records)


def test_no_bom_writes_a_file_that_plain_utf8_reads(annotated: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    """Item 3: `DictReader(open(f, encoding="utf-8"))` saw the key `\\ufeffsession_id`."""
    session_file, journal = annotated
    marked, plain = tmp_path / "marked.csv", tmp_path / "plain.csv"
    for out, extra in ((marked, ()), (plain, ("--no-bom",))):
        done = run_replay("export", str(session_file), "--annotations", str(journal),
                          "-o", str(out), *extra)
        assert done.returncode == 0, done.stderr
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert not plain.read_bytes().startswith(b"\xef\xbb\xbf")
    with open(plain, encoding="utf-8", newline="") as stream:
        assert next(csv.DictReader(stream))["session_id"] == "migration"
    with open(marked, encoding="utf-8-sig", newline="") as stream:
        assert next(csv.DictReader(stream))["session_id"] == "migration"
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "utf-8-sig" in readme and "--no-bom" in readme
