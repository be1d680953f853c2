"""The app's session lists read their counts from the scan cache: a second `replay` on an
unchanged home (or a second `replay DIR`) reads no session file again, a changed file is read
again, and `--no-cache` reads them all."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from replay.core.discovery import counts
from replay.resources import default_sample
from replay.ui.screens.picker import SessionPicker
from replay.ui.widgets.session_table import SessionTable
from tests.conftest import realdata
from tests.core.homes import CLAUDE_IDEAS, CLAUDE_SOUND, build_home
from tests.ui.conftest import build_app, wait_until

OLD = 1_700_000_000
"""A modification time long past: a file changed a moment ago is not cached (its stamp could
miss a write within the same clock tick)."""


def age(root: Path, when: int = OLD) -> None:
    """Every file under `root` last written at `when`."""
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (when, when))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The session files the session list reads to count them, in order."""
    seen: list[Path] = []
    scan = counts.scan_task

    def counting(task):  # type: ignore[no-untyped-def]
        seen.append(task.entry.path)
        return scan(task)

    monkeypatch.setattr(counts, "scan_task", counting)
    return seen


async def listed_counts(app) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Run the app until every row of its session list has its counts: title -> (turns,
    empty)."""
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count > 0)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        await wait_until(pilot, lambda: picker._waiting == 0 and picker.drawn)
        await pilot.pause()
        table = picker.query_one(SessionTable)
        rows = {}
        for row in range(table.row_count):
            cells = [str(cell) for cell in table.get_row_at(row)]
            rows[cells[4] + " " + cells[-1]] = (cells[1], cells[2])
        return rows


async def test_a_second_launch_reads_no_unchanged_session_and_a_changed_one_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[Path]) -> None:
    home = build_home(tmp_path / "home")
    age(home.root)
    monkeypatch.setenv("HOME", str(home.root))

    first = await listed_counts(build_app(default_sample(), discover=True))
    assert all(turns != "…" for turns, _ in first.values())
    read_first = list(reads)
    # opencode's storage folder keeps a session in many files: stamped by all of them, it
    # is not read again either while none changes.
    storage = [path for path in read_first if "storage" in path.parts]
    assert len(read_first) > len(storage) >= 1

    reads.clear()
    second = await listed_counts(build_app(default_sample(), discover=True))
    assert second == first
    assert reads == []

    # One session file changes (a later write, half its records): read again, and only it.
    changed = home.claude_projects / "-experiments-ideas" / \
        "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
    lines = changed.read_bytes().splitlines(keepends=True)
    changed.write_bytes(b"".join(lines[:len(lines) // 2]))
    age(changed.parent, OLD + 60)
    reads.clear()
    third = await listed_counts(build_app(default_sample(), discover=True))
    assert reads == [changed]
    moved = [title for title in first if third.get(title) != first[title]]
    assert len(moved) == 1 and int(third[moved[0]][0]) < int(first[moved[0]][0])

    # --no-cache: every session is read again.
    reads.clear()
    assert await listed_counts(
        build_app(default_sample(), discover=True, cache=False)) == third
    assert len(reads) == len(read_first)


async def test_a_folder_list_keeps_started_and_subagents_and_reads_nothing_again(
        tmp_path: Path, reads: list[Path]) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in (CLAUDE_IDEAS, CLAUDE_SOUND):
        shutil.copyfile(realdata(name), folder / name.rsplit("__", 1)[1])
    age(folder)

    first = await listed_counts(build_app(folder))
    assert len(reads) == 2
    reads.clear()
    app = build_app(folder)
    second = await listed_counts(app)
    assert second == first and reads == []


async def test_a_subagent_added_beside_a_session_counts_it_again(
        tmp_path: Path, reads: list[Path]) -> None:
    from tests.core.homes import CLAUDE_AGENT, CLAUDE_MAIN

    folder = tmp_path / "project"
    folder.mkdir()
    main = folder / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    shutil.copyfile(realdata(CLAUDE_MAIN), main)
    shutil.copyfile(realdata(CLAUDE_SOUND), folder / CLAUDE_SOUND.rsplit("__", 1)[1])
    (main.with_suffix("") / "subagents").mkdir(parents=True)
    age(folder)
    os.utime(main.with_suffix("") / "subagents", (OLD, OLD))
    await listed_counts(build_app(folder))
    reads.clear()
    await listed_counts(build_app(folder))
    assert reads == []

    # The subagent's file appears (the session's own file unchanged): that row is recounted.
    agent = main.with_suffix("") / "subagents" / "agent-a36efb2a1231c41e2.jsonl"
    shutil.copyfile(realdata(CLAUDE_AGENT), agent)
    os.utime(agent, (OLD, OLD))
    os.utime(agent.parent, (OLD + 60, OLD + 60))
    reads.clear()
    app = build_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and app.screen._waiting == 0 and app.screen.drawn)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        row = next(row for row in picker.rows if row.entry is not None
                   and row.entry.path == main)
        assert row.summary is not None and row.summary.subagents == 1
    assert reads == [main]


async def test_counts_that_come_in_at_once_are_drawn_in_linear_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Counts from the cache arrive all at once. Asked to fit a cell narrower than its column,
    # the table measured every cell of the column again: drawing 2,000 rows of counts took
    # minutes. Now a row's cells are made about once as its counts come in, and only the rows
    # on screen are drawn.
    from textual.app import App

    from replay.core.corpus.scan import SessionSummary
    from replay.core.detection.empty import DEFAULT_RULES
    from replay.core.discovery.found import FoundSession
    from replay.core.readers import folder
    from replay.core.readers.base import SessionEntry
    from replay.ui.screens import picker as picker_module
    from replay.ui.screens.picker import PickerRow

    count = 300
    rows = []
    for number in range(count):
        entry = SessionEntry(key=f"s{number}", path=Path(f"/p{number % 7}/{number}.jsonl"),
                             own_file=True, format="claude-code")
        rows.append(PickerRow(entry=entry, found=FoundSession(
            agent="claude-code", entry=entry, session_id=f"{number:08d}-id",
            project=f"/home/me/p{number % 7}", updated=1.7e9 + number,
            # Longest first: every later title is narrower than its column.
            title="t" * (60 - number % 50))))
    measured = []
    cells = picker_module.discovered_cells

    def counting(row: PickerRow) -> tuple[object, ...]:
        measured.append(1)
        return cells(row)

    class Lists(App[None]):
        def on_mount(self) -> None:
            self.push_screen(SessionPicker("~", rows, DEFAULT_RULES, folder.READER))

    app = Lists()
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and app.screen.query(SessionTable))
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        monkeypatch.setattr(picker_module, "discovered_cells", counting)
        for number, row in enumerate(picker.rows):
            assert row.entry is not None
            picker.show_summary(row.entry, SessionSummary(
                label="x", started=None, turns=number * 37, empty=number % 3, subagents=0,
                format="claude-code"), None)
        await wait_until(pilot, lambda: picker._waiting == 0 and picker.drawn)
        await pilot.pause()
        table = picker.query_one(SessionTable)
        assert sorted(int(str(cell).replace(",", "")) for cell in table.get_column("turns")) \
            == [number * 37 for number in range(count)]
    # About one per row that came in, and the rows on screen: not one per cell per cell.
    assert len(measured) < 10 * count


async def test_a_broken_cache_file_is_said_once_and_the_list_still_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[Path]) -> None:
    from replay.core.corpus.cache import cache_path

    folder = tmp_path / "project"
    folder.mkdir()
    for name in (CLAUDE_IDEAS, CLAUDE_SOUND):
        shutil.copyfile(realdata(name), folder / name.rsplit("__", 1)[1])
    age(folder)
    broken = cache_path()
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(b"not a database, " * 64)
    app = build_app(folder)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and app.screen._waiting == 0 and app.screen.drawn)
        await pilot.pause()
        said = [n for n in app._notifications if n.title == "Scan cache"]
        assert len(said) == 1 and "set it aside" in str(said[0].message)
    assert len(reads) == 2
    assert broken.with_name(broken.name + ".broken").exists()
    reads.clear()
    # The new cache kept what was counted.
    assert await listed_counts(build_app(folder)) and reads == []


def sessions_json(capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, int]]:
    """`replay sessions --json` (counted here, one job): session path and key -> (turns,
    empty)."""
    import orjson

    from replay.cli import main

    assert main(["sessions", "--json", "--jobs", "1"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {f"{row['path']} {row['session_id']}": (row["turns"], row["empty"]) for row in rows}


async def test_replay_sessions_and_the_app_share_their_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    home = build_home(tmp_path / "home")
    age(home.root)
    monkeypatch.setenv("HOME", str(home.root))

    # `replay sessions` counts every session; the app's list then reads none of them.
    counted = sessions_json(capsys)
    assert len(reads) == len(counted) == 10
    reads.clear()
    shown = await listed_counts(build_app(default_sample(), discover=True))
    assert reads == [] and len(shown) == 10
    assert sorted(shown.values()) == sorted((f"{turns:,}", str(empty))
                                            for turns, empty in counted.values())

    # The other way round: the app counts a changed session, `replay sessions` reads none.
    changed = home.claude_projects / "-experiments-ideas" / \
        "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
    lines = changed.read_bytes().splitlines(keepends=True)
    changed.write_bytes(b"".join(lines[:len(lines) // 3]))
    age(changed.parent, OLD + 60)
    reads.clear()
    await listed_counts(build_app(default_sample(), discover=True))
    assert reads == [changed]
    reads.clear()
    again = sessions_json(capsys)
    assert reads == []
    moved = [key for key in counted if again[key] != counted[key]]
    assert len(moved) == 1 and str(changed) in moved[0]
    assert again[moved[0]][0] < counted[moved[0]][0]


async def test_an_opencode_storage_session_is_read_again_only_when_one_of_its_files_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[Path]) -> None:
    home = build_home(tmp_path / "home")
    age(home.root)
    monkeypatch.setenv("HOME", str(home.root))
    await listed_counts(build_app(default_sample(), discover=True))
    storage = home.data_home / "opencode" / "storage"
    session = next(path for path in reads if "storage" in path.parts)
    reads.clear()
    assert await listed_counts(build_app(default_sample(), discover=True)) and reads == []

    # A part file written again in place, same size (a tool's output replaced): its session
    # is read again, and only it.
    part = next((storage / "part").rglob("*.json"))
    part.write_bytes(part.read_bytes())
    os.utime(part, (OLD + 60, OLD + 60))
    await listed_counts(build_app(default_sample(), discover=True))
    assert reads == [session]

    # A new message file appears (the session goes on): read again.
    messages = next((storage / "message").iterdir())
    newest = sorted(messages.iterdir())[-1]
    shutil.copyfile(newest, messages / ("zz" + newest.name))
    os.utime(messages / ("zz" + newest.name), (OLD, OLD))
    reads.clear()
    await listed_counts(build_app(default_sample(), discover=True))
    assert reads == [session]
    reads.clear()
    await listed_counts(build_app(default_sample(), discover=True))
    assert reads == []


async def test_a_session_file_removed_leaves_the_cache_when_its_folder_is_listed(
        tmp_path: Path, reads: list[Path]) -> None:
    import sqlite3

    from replay.core.corpus.cache import cache_path

    folder = tmp_path / "project"
    folder.mkdir()
    for name in (CLAUDE_IDEAS, CLAUDE_SOUND):
        shutil.copyfile(realdata(name), folder / name.rsplit("__", 1)[1])
    age(folder)
    await listed_counts(build_app(folder))

    def kept() -> list[str]:
        with sqlite3.connect(cache_path()) as db:
            return sorted(os.fsdecode(path) for (path,) in db.execute(
                "SELECT path FROM results"))

    assert kept() == sorted(str(path) for path in folder.iterdir())
    gone = folder / CLAUDE_SOUND.rsplit("__", 1)[1]
    gone.unlink()
    # (A third file keeps it a list: one session alone would be opened.)
    shutil.copyfile(realdata(CLAUDE_IDEAS), folder / "copy.jsonl")
    age(folder)
    await listed_counts(build_app(folder))
    assert str(gone) not in kept() and len(kept()) == 2


async def test_a_scan_of_a_folder_makes_its_list_in_the_app_read_nothing(
        tmp_path: Path, reads: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    from replay.cli import main

    folder = tmp_path / "project"
    folder.mkdir()
    for name in (CLAUDE_IDEAS, CLAUDE_SOUND):
        shutil.copyfile(realdata(name), folder / name.rsplit("__", 1)[1])
    age(folder)
    expected = await listed_counts(build_app(folder, cache=False))
    reads.clear()
    assert main(["scan", "--json", "--jobs", "1", str(folder)]) == 0
    capsys.readouterr()
    # The scan filled the rows (reports and the list's summary): the app reads nothing, and
    # shows what it shows without the cache (turns, empty turns, start, title).
    assert await listed_counts(build_app(folder)) == expected
    assert reads == []


async def test_the_app_and_replay_sessions_share_rows_under_the_configs_rules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from replay.config import load_settings
    from tests.ui.conftest import TEST_SETTINGS

    home = build_home(tmp_path / "home")
    age(home.root)
    monkeypatch.setenv("HOME", str(home.root))
    config = Path(os.environ["REPLAY_CONFIG_FILE"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("missing_replies = true\ntool_only_is_empty = true\n")
    settings = replace(TEST_SETTINGS, missing_replies=True, tool_only_is_empty=True)
    assert load_settings().settings.missing_replies

    counted = sessions_json(capsys)
    reads.clear()
    shown = await listed_counts(build_app(default_sample(), discover=True, settings=settings))
    assert reads == []
    assert sorted(shown.values()) == sorted((f"{turns:,}", str(empty))
                                            for turns, empty in counted.values())
    # The defaults' counts are other rows: the app with the default settings reads again.
    await listed_counts(build_app(default_sample(), discover=True))
    assert len(reads) == len(counted)
