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


def test_scan_table_says_how_many_warnings_it_does_not_show(tmp_path: Path) -> None:
    """Item 9: the table showed 5 of 7 warnings with no word about the other 2."""
    lines = [json.dumps({"role": "user", "content": "hello"}),
             json.dumps({"role": "assistant", "content": "hi"})]
    lines += [f"{{broken {number}" for number in range(7)]
    lines.append(json.dumps({"role": "user", "content": "bye"}))
    path = tmp_path / "seven.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = run_replay("scan", str(path))
    assert table.returncode == 0, table.stderr
    assert table.stdout.count("warning: line") == 5
    assert "… 2 more warnings (replay scan --json lists them all)" in table.stdout
    listed = json.loads(run_replay("scan", "--json", str(path)).stdout)
    assert len(listed["warnings"]) == 7


def _recovered_and_cut_off(tmp_path: Path) -> tuple[Path, Path]:
    whole = (SAMPLES / "deploy-pivot.opencode.json").read_bytes()
    recovered = tmp_path / "exports" / "captured.json"
    recovered.parent.mkdir()
    recovered.write_bytes(b"Exporting session: ses_3f1a\n" + whole)
    cut = tmp_path / "cut" / "copied.json"
    cut.parent.mkdir()
    cut.write_bytes(whole[:3000])
    return recovered, cut


@pytest.mark.parametrize("command", [
    ("scan",), ("scan", "--json"), ("report",), ("export",), ("export", "--as", "md")])
def test_a_recovered_document_is_a_success_like_a_cut_off_one(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """Item 12: text before the JSON exited 1 (as if a file were skipped), a cut-off one 0."""
    recovered, cut = _recovered_and_cut_off(tmp_path)
    for path in (recovered, cut, recovered.parent):
        done = run_replay(*command, str(path))
        assert done.returncode == 0, (path, done.stderr)
        assert "skipped" not in done.stderr, done.stderr


def test_the_recovered_documents_note_is_still_shown_by_scan(tmp_path: Path) -> None:
    recovered, _ = _recovered_and_cut_off(tmp_path)
    table = run_replay("scan", str(recovered))
    assert "warning: skipped 1 line of text ('Exporting session: ses_3f1a') before the JSON " \
           "document" in " ".join(table.stdout.split())


def test_a_folder_with_a_file_that_is_not_read_still_exits_1(tmp_path: Path) -> None:
    recovered, _ = _recovered_and_cut_off(tmp_path)
    (recovered.parent / "broken.json").write_text('{"messages": [1, 2,, 3]}', encoding="utf-8")
    done = run_replay("scan", str(recovered.parent))
    assert done.returncode == 1
    assert "skipped" in done.stderr and "broken.json" in done.stderr


README_NAMES = {
    "opencode-db": "opencode.db", "claude-code": "Claude Code", "opencode": "opencode (export JSON",
    "opencode-storage": "the storage directory", "codex": "Codex CLI", "gemini": "Gemini CLI",
    "opencode-run": "`opencode run", "aider": "Aider", "mini-swe-agent": "mini-swe-agent",
    "swe-agent": "SWE-agent", "sharegpt": "ShareGPT", "chat-json": "generic chat JSON",
    "chat-jsonl": "generic chat JSON/JSONL", "folder": "project folders",
    "specstory": "SpecStory markdown histories",
}
"""How README's opening names each reader (a reader added later must be named there too)."""


def test_the_readmes_opening_names_every_format_read() -> None:
    """Item 13: the README's first lines left out agent trajectories and `opencode run`."""
    from replay.core.readers import all_readers

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    opening = " ".join(readme.split("\n## ", 1)[0].split())
    assert "agent trajectories" in opening
    for reader in all_readers():
        assert reader.name in README_NAMES, f"README's opening does not name {reader.title}"
        assert README_NAMES[reader.name] in opening, reader.name


def test_an_export_of_no_row_says_why_and_what_would_write_some(tmp_path: Path) -> None:
    """Found trying the README as a newcomer: `replay export S` said only "wrote 0 rows"."""
    session_file = write_chat(tmp_path / "migration.json")
    done = run_replay("export", str(session_file))
    assert done.returncode == 0
    assert done.stderr.startswith("replay: wrote 0 rows (csv) to standard output: no "
                                  "annotation yet")
    assert "--all-empty also writes a row per empty turn" in done.stderr
    assert "wrote 2 rows" in run_replay("export", str(session_file), "--all-empty").stderr


def test_scan_table_says_when_the_session_kept_only_its_first_warnings(tmp_path: Path) -> None:
    lines = [json.dumps({"role": "user", "content": "hello"})]
    lines += [f"{{broken {number}" for number in range(80)]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = " ".join(run_replay("scan", str(path)).stdout.split())
    assert "80 records skipped" in table
    assert ("… 45 more warnings (replay scan --json lists the first 50; later ones are "
            "counted, not kept)") in table
