"""The seams a new user fell through (issue 23), tried where the user meets them: the app
driven by Pilot, the command line run as a subprocess."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay.core.annotate.annotations import AnnotationStore
from replay.core.readers import load_sessions
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text
from tests.ui.sessions import write_chat


def run_replay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`replay ARGS` as a user runs it (the test's isolated data directory is inherited)."""
    return subprocess.run([sys.executable, "-m", "replay", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=os.environ.copy())


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8-sig", newline="") as stream:
        return list(csv.DictReader(stream))


def three_reviewers(session_file: Path, journal: Path) -> None:
    """bob and cy have labelled the first empty turn (#10) in `journal`; cy also the second."""
    session = load_sessions(session_file)[0]
    bob = AnnotationStore.for_session(session, "bob", journal)
    bob.commit("m009", 9, "approval", "bob thinks so", suggestion="continue",
               rule="plan-then-silence", overrule="context")
    cy = AnnotationStore.for_session(session, "cy", journal)
    cy.commit("m009", 9, "continue", blind=True)
    cy.commit("m020", 20, "reflect")


async def test_e_in_the_app_writes_the_rows_of_replay_export_all_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 2: `e` wrote ada's row alone where `replay export` wrote all three reviewers'."""
    session_file = write_chat(tmp_path / "migration.json")
    journal = tmp_path / "team.jsonl"
    three_reviewers(session_file, journal)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = build_app(session_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter", "e")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: any("Exported" in n.message
                                            for n in app._notifications))
        said = next(n.message for n in app._notifications if "Exported" in n.message)
    [exported] = list(out.glob("*-annotations.csv"))
    from_app = read_csv(exported)
    cli = run_replay("export", str(session_file), "--all-empty", "--annotations", str(journal),
                     "-o", str(tmp_path / "cli.csv"))
    assert cli.returncode == 0, cli.stderr
    from_cli = read_csv(tmp_path / "cli.csv")
    assert [(row["turn_number"], row["reviewer"], row["label"]) for row in from_app] == [
        ("10", "ada", "thinking"), ("10", "bob", "approval"), ("10", "cy", "continue"),
        ("21", "cy", "reflect")]
    assert from_app == from_cli
    assert "every reviewer's" in said and "replay export --all-empty" in said


async def test_a_blind_review_exports_only_the_reviewers_own_rows_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind reviewer must not meet the others' labels, not even in the export file."""
    from dataclasses import replace

    from tests.ui.conftest import TEST_SETTINGS

    session_file = write_chat(tmp_path / "migration.json")
    journal = tmp_path / "team.jsonl"
    three_reviewers(session_file, journal)
    monkeypatch.chdir(tmp_path)
    app = build_app(session_file, annotations=journal, reviewer="ada",
                    settings=replace(TEST_SETTINGS, blind=True))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter", "e")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: any("Exported" in n.message
                                            for n in app._notifications))
        said = next(n.message for n in app._notifications if "Exported" in n.message)
    [exported] = list(tmp_path.glob("*-annotations.csv"))
    rows = read_csv(exported)
    assert {row["reviewer"] for row in rows if row["label"]} == {"ada"}
    assert "ada's annotations only (blind review)" in said


SESSION_ID = "9d2f6a51-0c3e-4b7d-8a11-5e6f7a8b9c0d"


def claude_lines(path: Path, *records: dict[str, object]) -> Path:
    """A Claude Code session file of these records, each with the envelope the tool writes."""
    import json

    lines = []
    for second, record in enumerate(records, 1):
        lines.append(json.dumps({"parentUuid": None, "isSidechain": False, "sessionId": SESSION_ID,
                                 "version": "2.1.0", "cwd": "/work", "gitBranch": "main",
                                 "timestamp": f"2026-01-01T10:00:{second:02d}.000Z", **record}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def user(uuid: str, content: object) -> dict[str, object]:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}


def assistant(uuid: str, message_id: str, *blocks: dict[str, object]) -> dict[str, object]:
    return {"type": "assistant", "uuid": uuid, "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-test",
        "content": list(blocks), "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 10}}}


async def test_a_signature_only_thinking_block_reads_the_same_in_the_turn_and_the_evidence(
        tmp_path: Path) -> None:
    """Item 5: the turn said "reasoning (empty)", the evidence "reasoning: encrypted (144 B)"."""
    path = claude_lines(
        tmp_path / "s.jsonl",
        user("u1", "Why does the build fail?"),
        assistant("a1", "msg_1", {"type": "thinking", "thinking": "", "signature": "s" * 144}),
        user("u2", "hello?"),
        assistant("a2", "msg_2", {"type": "text", "text": "Looking now."}))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        assert app.replay_screen is not None and app.replay_screen.index == 1
        text = screen_text(app)
    assert "reasoning (empty)" not in text
    assert "evidence: reasoning: encrypted (144 B)" in text
    assert "⋯ reasoning: encrypted (144 B)" in text


async def test_a_slash_command_shows_as_the_harness_shows_it(tmp_path: Path) -> None:
    """Item 6: `<command-name>clear</command-name>` was shown raw."""
    path = claude_lines(
        tmp_path / "s.jsonl",
        user("u1", "Fix the flaky test"),
        assistant("a1", "msg_1", {"type": "text", "text": "Done: pinned the seed."}),
        user("u2", "<command-name>clear</command-name>\n  <command-message>clear"
                   "</command-message>\n  <command-args></command-args>"),
        user("u3", "<command-message>review is reading [/] the diff…</command-message>\n"
                   "<command-name>/review</command-name>\n<command-args>123 [bold]x"
                   "</command-args>"),
        user("u4", "<local-command-stdout>Line 1 of output\nLine 2</local-command-stdout>"),
        user("u5", "<bash-input>ls [red]</bash-input>"),
        user("u6", "<local-command-stdout></local-command-stdout>"))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        assert screen.index == 6  # the empty local-command output
        text = screen_text(app)
        assert "⎿ (no output)" in text
        screen.go(5)
        await pilot.pause()
        text = screen_text(app)
    assert "<command-" not in text and "<local-command" not in text and "<bash" not in text
    assert "/clear" in text
    assert "/review 123 [bold]x" in text and "review is reading [/] the diff…" in text
    assert "⎿ Line 1 of output" in text and "  Line 2" in text
    assert "! ls [red]" in text


def test_csv_excerpts_name_the_command_as_the_app_does(tmp_path: Path) -> None:
    path = claude_lines(
        tmp_path / "s.jsonl",
        user("u1", "Fix the flaky test"),
        assistant("a1", "msg_1", {"type": "text", "text": "Done: pinned the seed."}),
        user("u2", "<command-name>clear</command-name><command-args></command-args>"),
        user("u3", "<local-command-stdout></local-command-stdout>"))
    done = run_replay("export", str(path), "--all-empty", "--as", "jsonl")
    assert done.returncode == 0, done.stderr
    assert '"before_excerpt":"#3 user: /clear"' in done.stdout


async def test_a_file_of_a_summary_line_alone_says_what_it_holds(tmp_path: Path) -> None:
    """Item 7: a file holding only a summary line showed "(no turns yet)", not following."""
    path = tmp_path / "summary.jsonl"
    path.write_text('{"type":"summary","summary":"Fixing the flaky test","leafUuid":"abc"}\n',
                    encoding="utf-8")
    words = "no conversation: only 1 bookkeeping record, no message"
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: words in screen_text(app))
        assert "(no turns yet)" not in screen_text(app)
    table = run_replay("scan", str(path))
    assert table.returncode == 0
    assert words in " ".join(table.stdout.split())


async def _screenshot_from_the_palette(app: object, pilot: object) -> str:
    """Pick Screenshot in the palette; the notification it gives."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))  # type: ignore[attr-defined]
    await pilot.press(*"Screenshot")  # type: ignore[attr-defined]
    options = app.screen.query_one(CommandList)  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: options.option_count > 0
                     and "Screenshot" in str(options.get_option_at_index(0).prompt))
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: any(n.title == "Screenshot"
                                        for n in app._notifications))  # type: ignore[attr-defined]
    return next(n.message for n in app._notifications  # type: ignore[attr-defined]
                if n.title == "Screenshot")


async def test_the_palettes_screenshot_lands_in_the_current_directory_and_says_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 10: with no ~/Downloads the palette's Screenshot said "Failed to save screenshot"."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    app = build_app(write_chat(tmp_path / "migration.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        said = await _screenshot_from_the_palette(app, pilot)
    [saved] = list(work.glob("*.svg"))
    assert said == f"Saved screenshot to {saved}"
    assert saved.read_text(encoding="utf-8").startswith("<svg")
    assert not (home / "Downloads").exists()


async def test_without_a_current_directory_the_screenshot_goes_to_the_data_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    app = build_app(write_chat(tmp_path / "migration.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        gone.rmdir()
        said = await _screenshot_from_the_palette(app, pilot)
    from replay.core.paths import data_dir

    [saved] = list((data_dir() / "screenshots").glob("*.svg"))
    assert said == f"Saved screenshot to {saved}"


async def test_review_of_one_session_without_empty_turns_counts_it_in_the_singular(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found trying `replay review` on one file: "no empty turn to review in 1 sessions"."""
    from replay.core.annotate.queue_position import QueueDefinition
    from replay.core.annotate.review_queue import QueueFilters
    from replay.ui.review import ReviewOptions, make_review_app
    from tests.ui.conftest import TEST_SETTINGS

    path = write_chat(tmp_path / "calm.json", empty_at=())
    options = ReviewOptions([path], QueueDefinition.of([path], reviewer="ada"), QueueFilters())
    app = make_review_app(options, settings=TEST_SETTINGS, reviewer="ada")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, rounds=1500)
    assert app.return_code == 0
    assert "replay: no empty turn to review in 1 session\n" in capsys.readouterr().err


async def test_the_real_edge_cases_file_shows_its_command_and_its_output_as_claude_code_does(
        tmp_path: Path) -> None:
    from tests.conftest import realdata

    path = realdata("claude-code/claude-code-log__test_data__edge_cases.jsonl")
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(5)
        await pilot.pause()
        command = screen_text(app)
        screen.go(6)
        await pilot.pause()
        output = screen_text(app)
    assert "/test-command --verbose --output /tmp/test.log" in command
    assert "Running a test command to verify system functionality" in command
    assert '{"text"' not in command and "<command-" not in command
    assert "⎿ Command output here:" in output and "<local-command-stdout>" not in output


async def test_a_journal_that_cannot_be_read_still_exports_the_reviewers_own_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The others' rows are read from the journal at export time: a journal gone unreadable
    (a folder now stands there) must not cost the reviewer the export of their own work."""
    import shutil

    session_file = write_chat(tmp_path / "migration.json")
    journal = tmp_path / "team.jsonl"
    three_reviewers(session_file, journal)
    monkeypatch.chdir(tmp_path)
    app = build_app(session_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter")
        await pilot.pause()
        journal.unlink()
        journal.mkdir()
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: any("Exported" in n.message
                                            for n in app._notifications))
        said = next(n.message for n in app._notifications if "Exported" in n.message)
        shutil.rmtree(journal)
    [exported] = list(tmp_path.glob("*-annotations.csv"))
    rows = read_csv(exported)
    assert [(row["reviewer"], row["label"]) for row in rows if row["label"]] == [
        ("ada", "thinking")]
    assert "ada's annotations only: cannot read annotations from" in said


async def test_a_commands_arguments_never_drive_the_terminal(tmp_path: Path) -> None:
    path = claude_lines(
        tmp_path / "s.jsonl",
        user("u1", "Fix it"),
        assistant("a1", "msg_1", {"type": "text", "text": "Done."}),
        user("u2", "<command-name>/title</command-name><command-args>\x1b]0;pwned\x07 "
                   "\x1b[31mred</command-args>"),
        user("u3", "<local-command-stdout></local-command-stdout>"))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        text = screen_text(app)
    assert "/title" in text and "red" in text
    assert "\x1b" not in text and "\x07" not in text
