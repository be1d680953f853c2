"""Pilot tests of blind review and of saying why a suggestion is overruled."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from replay.core.annotate.annotations import Annotation
from replay.core.annotate.journal import Journal
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


def bar_text(screen: ReplayScreen) -> str:
    return str(screen.query_one("#annotation-suggestion", Static).render())


def other_reviewer(journal: Path, session_id: str) -> None:
    Journal(journal).append(Annotation(session_id, "m009", 9, "resumption", reviewer="bo",
                                       time="2026-01-01T00:00:00.000Z").to_json())


async def test_blind_hides_suggestion_and_others_until_saved(chat_file: Path,
                                                             tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada", blind=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        other_reviewer(journal, screen.store.session_id)
        screen.load_others()
        screen.show()
        suggestion = screen.empty_turn(9).suggestion  # type: ignore[union-attr]
        assert suggestion
        text = bar_text(screen)
        assert "blind review" in text and suggestion not in text and "bo" not in text
        await pilot.press("enter")  # nothing picked: Enter must not take the hidden suggestion
        assert screen.store.get("m009") is None
        await pilot.press("9", "enter")
        await pilot.pause()
        text = bar_text(screen)
        assert f"suggested: {suggestion}" in text and "bo resumption" in text
        await pilot.press("d", "enter")  # why, said after the reveal: still a blind label
        await pilot.pause()
    record = Journal(journal).load().records[-1]
    assert (record["label"], record["suggestion"], record["blind"]) == ("other", suggestion, True)
    assert record["overrule"] == "evidence"
    assert record["rule"]


async def test_not_blind_shows_others_and_accepts_suggestion(chat_file: Path,
                                                             tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        other_reviewer(journal, screen.store.session_id)
        screen.load_others()
        screen.show()
        assert "bo resumption" in bar_text(screen)
        await pilot.press("enter")
    record = Journal(journal).load().records[-1]
    assert record["label"] == record["suggestion"] and "blind" not in record


async def test_overrule_reason_in_one_key(chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        suggestion = screen.empty_turn(9).suggestion  # type: ignore[union-attr]
        other = "other" if suggestion != "other" else "reflect"
        key = {"other": "9", "reflect": "4"}[other]
        await pilot.press(key)
        assert f"why not {suggestion}?" in bar_text(screen)
        await pilot.press("d")
        assert "the evidence is misread" in bar_text(screen)
        await pilot.press("d", "enter")
        await pilot.pause()
    record = Journal(journal).load().records[-1]
    assert (record["label"], record["overrule"]) == (other, "context")


async def test_banner_shows_the_next_message(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        banner = str(screen.query_one("#banner", Static).render())
        following = next(t for t in screen.session.turns[10:] if t.role == "user")
        assert f"next: #{following.index + 1} user" in banner
        assert following.parts[0].text[:30] in banner


async def test_palette_toggles_missing_reply_stops(tmp_path: Path) -> None:
    import json

    path = tmp_path / "gemini.json"
    path.write_text(json.dumps({"sessionId": "g1", "projectHash": "p",
                                "startTime": "2026-01-01T10:00:00Z",
                                "lastUpdated": "2026-01-01T10:00:09Z", "messages": [
        {"id": "1", "type": "user", "timestamp": "2026-01-01T10:00:00Z",
         "content": "summarise the failing tests"},
        {"id": "2", "type": "info", "timestamp": "2026-01-01T10:00:02Z",
         "content": "Request cancelled."},
        {"id": "3", "type": "user", "timestamp": "2026-01-01T10:00:05Z",
         "content": "summarise the failing tests"},
        {"id": "4", "type": "gemini", "timestamp": "2026-01-01T10:00:09Z",
         "content": "Two tests fail."}]}))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.navigator.empty_indices == []
        app.toggle_missing_replies()
        await pilot.pause()
        assert screen.navigator.empty_indices == [0]
        await pilot.press("right_square_bracket")
        banner = str(screen.query_one("#banner", Static).render())
        assert "the reply to #1 never came" in banner and "info: Request cancelled." in banner


async def test_palette_toggles_tool_only_stops_and_back(tmp_path: Path) -> None:
    import json

    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "One file: a.py."}]}))
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.navigator.empty_indices == []
        app.toggle_tool_only()
        await pilot.pause()
        assert screen.navigator.empty_indices == [1]
        assert app.options.rules.tool_only_is_empty
        app.toggle_tool_only()
        await pilot.pause()
        assert screen.navigator.empty_indices == []


async def test_blind_overrule_reason_is_saved_by_d_alone(chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada", blind=True)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        suggestion = screen.empty_turn(9).suggestion  # type: ignore[union-attr]
        assert suggestion and suggestion != "other"
        await pilot.press("9", "d")  # before the reveal: d says what to do, saves nothing
        assert screen.store.get("m009") is None and screen.annotation.overrule == ""
        await pilot.press("enter")
        await pilot.pause()
        saved = len(Journal(journal).load().records)
        await pilot.press("d")  # one key: the reason is on disk, no second save
        await pilot.pause()
        records = Journal(journal).load().records
        assert len(records) == saved + 1
        assert (records[-1]["label"], records[-1]["overrule"], records[-1]["blind"]) == (
            "other", "evidence", True)
        assert any("Why not" in str(n.message) and "the evidence is misread" in str(n.message)
                   for n in app._notifications)
        await pilot.press("d")  # another reason replaces it, saved at once too
        await pilot.pause()
        assert Journal(journal).load().records[-1]["overrule"] == "context"
        assert screen.store.get("m009").overrule == "context"  # type: ignore[union-attr]
        # Quit and reopen: the reason is what the journal gives back.
    again = build_app(chat_file, annotations=journal, reviewer="ada", blind=True)
    async with again.run_test(size=(140, 40)) as pilot:
        await ready(pilot, again)
        assert screen_of(again).store.get("m009").overrule == "context"  # type: ignore[union-attr]


async def test_d_on_a_label_equal_to_the_suggestion_overrules_nothing(chat_file: Path,
                                                                     tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("enter")  # takes the suggestion
        await pilot.pause()
        records = len(Journal(journal).load().records)
        await pilot.press("d")
        await pilot.pause()
        assert len(Journal(journal).load().records) == records and screen.annotation.overrule == ""
