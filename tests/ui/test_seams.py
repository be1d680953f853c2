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
