"""Snapshots of the main states (Textual pinned exactly, so these only move when we change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.config import Settings
from replay.ui.app import make_app
from tests.ui.conftest import ready
from tests.ui.sessions import write_chat

SETTINGS = Settings(animations=False)


def session_file(tmp_path: Path) -> Path:
    return write_chat(tmp_path / "migration.json", turns=30, empty_at=(9, 20))


def test_first_screen_paused_at_empty_turn(snap_compare: object, tmp_path: Path) -> None:
    app = make_app(session_file(tmp_path), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        # "here is the first one not annotated" shows only when loading took over 0.5 s (a
        # loaded machine).
        app.clear_notifications()
        await pilot.pause()  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]


def test_ordinary_turn_after_stepping(snap_compare: object, tmp_path: Path) -> None:
    app = make_app(session_file(tmp_path), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        await pilot.press("right", "right")  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]


def test_annotated_with_label_picked(snap_compare: object, tmp_path: Path) -> None:
    app = make_app(session_file(tmp_path), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        # "here is the first one not annotated" shows only when loading took over 0.5 s.
        app.clear_notifications()
        await pilot.press("2", "enter", "right_square_bracket", "7")  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]


def test_help(snap_compare: object, tmp_path: Path) -> None:
    app = make_app(session_file(tmp_path), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        await pilot.press("question_mark")  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]


def test_narrow_terminal(snap_compare: object, tmp_path: Path) -> None:
    app = make_app(session_file(tmp_path), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]


def test_narrow_terminal_following_a_long_session_name(snap_compare: object,
                                                        tmp_path: Path) -> None:
    """At 80 columns, following: the name is cut, the app's name, format and speed give
    way, the position, play state and following stay."""
    path = write_chat(tmp_path / "long.json",
                      title="Refactor the importers [/] list[int] into one registry")
    app = make_app(path, settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        app.clear_notifications()
        screen = app.replay_screen
        assert screen is not None
        screen.following = True
        screen.live.at_live_end = False
        screen.live.new_turns = 3
        screen.show()
        await pilot.pause()  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]


@pytest.mark.parametrize("theme", ["replay-dark", "replay-light", "replay-contrast"])
def test_theme(snap_compare: object, tmp_path: Path, theme: str) -> None:
    settings = Settings(animations=False, theme=theme)
    app = make_app(session_file(tmp_path), settings=settings, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]


def test_session_picker(snap_compare: object, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.ui.screens.picker import SessionPicker
    from tests.ui.conftest import wait_until

    folder = tmp_path / "exports"
    folder.mkdir()
    write_chat(folder / "a.json", turns=6, empty_at=(3,), title="first")
    write_chat(folder / "b.json", turns=8, empty_at=(), title="second")
    monkeypatch.chdir(tmp_path)
    app = make_app(Path("exports"), settings=SETTINGS, annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query("SessionTable"))
                         and app.screen.query_one("SessionTable").row_count == 2)

    assert snap_compare(app, terminal_size=(100, 20), run_before=run_before)  # type: ignore[operator]


def test_aider_history_list_at_80_columns(snap_compare: object, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The virtual list of a history's chats, every count in, the cursor moved down a page.
    from replay.ui.screens.picker import SessionPicker
    from tests.core.test_aider import HISTORY
    from tests.ui.conftest import wait_until

    (tmp_path / ".aider.chat.history.md").write_text(HISTORY * 40, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    app = make_app(Path(".aider.chat.history.md"), settings=SETTINGS,
                   annotations=tmp_path / "j.jsonl")

    async def run_before(pilot: object) -> None:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query("SessionTable"))
                         and app.screen._waiting == 0 and app.screen.drawn, rounds=2_000)
        await pilot.press("pagedown", "down")  # type: ignore[attr-defined]
        await pilot.pause(0.3)  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)  # type: ignore[operator]


def test_missing_reply_placeholder(snap_compare: object, tmp_path: Path) -> None:
    from replay.core.detection.empty import DEFAULT_RULES
    from tests.ui.test_missing_reply import gemini_session

    app = make_app(gemini_session(tmp_path / "g.json"), settings=SETTINGS,
                   annotations=tmp_path / "j.jsonl",
                   rules=DEFAULT_RULES.with_options(missing_replies=True))

    async def run_before(pilot: object) -> None:
        await ready(pilot, app)
        app.clear_notifications()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)  # type: ignore[operator]
