"""Pilot tests of the placeholder a missing reply gets (`--missing-replies`): it is a stop of its
own between the request and what followed, named `#N+`, and annotated like an empty turn."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from replay.core.annotate.journal import Journal
from replay.core.detection.empty import DEFAULT_RULES
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until

RULES = DEFAULT_RULES.with_options(missing_replies=True)
ASK = "summarise the failing tests"


def gemini_session(path: Path) -> Path:
    """#1 ask, #2 reply, #3 ask, #4 `info: Request cancelled.`, #5 ask again, #6 reply, #7, #8."""
    messages = [
        ("1", "user", "list the files", 0), ("2", "gemini", "a.py and b.py", 4),
        ("3", "user", ASK, 10), ("4", "info", "Request cancelled.", 13),
        ("5", "user", ASK, 18), ("6", "gemini", "Two tests fail.", 25),
        ("7", "user", "fix them", 40), ("8", "gemini", "Fixed both.", 50),
    ]
    path.write_text(json.dumps({
        "sessionId": "g-missing", "projectHash": "p", "startTime": "2026-01-01T10:00:00Z",
        "lastUpdated": "2026-01-01T10:00:50Z",
        "messages": [{"id": own, "type": kind, "content": text,
                      "timestamp": f"2026-01-01T10:00:{second:02d}Z"}
                     for own, kind, text, second in messages]}))
    return path


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


def text_of(screen: ReplayScreen, pane: str) -> str:
    return screen.query_one(f"#{pane}", TurnLines).plain_text


def banner(screen: ReplayScreen) -> str:
    return str(screen.query_one("#banner", Static).render())


def status(screen: ReplayScreen) -> str:
    return str(screen.query_one("#status", Static).render())


async def test_playback_stops_at_the_placeholder_after_the_request(tmp_path: Path) -> None:
    app = build_app(gemini_session(tmp_path / "g.json"), annotations=tmp_path / "j.jsonl",
                    rules=RULES)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        # Resumes at the first stop not annotated: the missing reply after #3, not #3 itself.
        assert (screen.index, screen.at_placeholder) == (2, True)
        screen.go(0, placeholder=False)
        screen.playback.speed = 16.0
        await pilot.press("space")
        await wait_until(pilot, lambda: screen.paused_at_empty)
        assert (screen.index, screen.at_placeholder) == (2, True)
        assert "turn 3+ / 8" in status(screen) and "paused at empty turn" in status(screen)
        current = text_of(screen, "current")
        assert "#3+ assistant · not in the file" in current
        assert "no reply — info: Request cancelled. 3 s later" in current
        assert "#3+ the reply to #3 never came" in banner(screen)
        assert "evidence: no reply · info: Request cancelled." in banner(screen)
        # Before ends with the request; After starts with what came next.
        before, after = text_of(screen, "before"), text_of(screen, "after")
        assert before.rstrip().endswith(ASK) and "#3 user" in before
        assert after.lstrip().startswith("#4 system") and "Request cancelled." in after
        assert "∅ empty" not in before  # the request is no empty turn
        await pilot.press("y")  # copies what is known of it, not the request's words
        assert app.clipboard == ("#3+ (not in the file) no reply — info: Request cancelled. "
                                 "3 s later")
        # Playing on leaves the placeholder for the next turn.
        await pilot.press("space")
        await wait_until(pilot, lambda: screen.index >= 3)
        assert not screen.at_placeholder


async def test_steps_visit_the_placeholder_between_request_and_next_turn(tmp_path: Path) -> None:
    app = build_app(gemini_session(tmp_path / "g.json"), annotations=tmp_path / "j.jsonl",
                    rules=RULES)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        screen.go(1, placeholder=False)
        seen = []
        for key in ["right"] * 3 + ["left"] * 3:
            await pilot.press(key)
            seen.append(f"#{screen.index + 1}{'+' if screen.at_placeholder else ''}")
        assert seen == ["#3", "#3+", "#4", "#3+", "#3", "#2"]
        # On the request itself: no annotation bar, and the banner points at the placeholder.
        await pilot.press("right")
        assert not screen.query_one("#annotation").display
        assert "got no reply: → shows the placeholder #3+" in banner(screen)
        await pilot.press("right_square_bracket")
        assert (screen.index, screen.at_placeholder) == (2, True)
        assert screen.query_one("#annotation").display


async def test_the_placeholder_is_annotated_and_resumed_by_its_own_key(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    path = gemini_session(tmp_path / "g.json")
    app = build_app(path, annotations=journal, rules=RULES, reviewer="ada")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.at_placeholder
        await pilot.press("5", "tab", *"cancelled by hand", "enter")
        await pilot.pause()
        [record] = Journal(journal).load().records
        assert (record["turn_id"], record["turn_index"], record["label"], record["note"]) == (
            "3+no-reply", 2, "artifact", "cancelled by hand")
        assert "1 / 1 annotated" in status(screen)
        from replay.ui.commands import EmptyTurnProvider

        [(title, help_text, index)] = EmptyTurnProvider(screen)._entries()
        assert title.startswith("✓ Empty #3+ assistant · no-reply") and index == 2
        assert "before: summarise the failing tests" in help_text  # its request
        # The request itself is never annotated in its place.
        screen.go(2, placeholder=False)
        await pilot.press("5")
        assert len(Journal(journal).load().records) == 1
    again = build_app(path, annotations=journal, rules=RULES, reviewer="ada")
    async with again.run_test(size=(140, 40)) as pilot:
        await ready(pilot, again)
        screen = screen_of(again)
        screen.go(2)
        await pilot.pause()
        assert screen.at_placeholder
        assert "saved: artifact by ada" in str(screen.query_one("#annotation-state",
                                                                 Static).render())


async def test_go_to_takes_the_placeholder_name(tmp_path: Path) -> None:
    app = build_app(gemini_session(tmp_path / "g.json"), annotations=tmp_path / "j.jsonl",
                    rules=RULES)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("colon", *"#3", "enter")
        assert (screen.index, screen.at_placeholder) == (2, False)
        await pilot.press("colon", *"#3+", "enter")
        assert (screen.index, screen.at_placeholder) == (2, True)
        await pilot.press("colon", *"5+no-reply", "enter")  # request #5 was answered
        await pilot.pause()
        assert (screen.index, screen.at_placeholder) == (2, True)
        assert any("#5+ names the missing reply after #5" in str(n.message)
                   for n in app._notifications)
        await pilot.press("colon", *"#1", "enter", "colon", *"3+no-reply", "enter")
        assert (screen.index, screen.at_placeholder) == (2, True)


async def test_without_the_rule_there_is_no_placeholder(tmp_path: Path) -> None:
    app = build_app(gemini_session(tmp_path / "g.json"), annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        screen.go(1)
        await pilot.press("right", "right")
        assert (screen.index, screen.at_placeholder) == (3, False)
        app.toggle_missing_replies()
        await pilot.pause()
        await pilot.press("left")
        assert (screen.index, screen.at_placeholder) == (2, True)


async def test_following_stops_at_the_placeholder_once_no_reply_is_coming(
        tmp_path: Path) -> None:
    import orjson

    from tests.core.test_missing_reply import GEMINI_HEAD, gemini_line

    path = tmp_path / "live.jsonl"
    path.write_bytes(orjson.dumps(GEMINI_HEAD) + b"\n"
                     + gemini_line("1", "user", "list the files", 0)
                     + gemini_line("2", "gemini", "a.py and b.py", 4))

    def append(*lines: bytes) -> None:
        with open(path, "ab") as handle:
            handle.write(b"".join(lines))

    app = build_app(path, follow=True, rules=RULES, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        append(gemini_line("3", "user", ASK, 10))
        await wait_until(pilot, lambda: len(screen.session.turns) == 3, rounds=300)
        await wait_until(pilot, lambda: screen.index == 2)
        # Waiting for its reply: no stop yet.
        assert screen.navigator.empty_indices == [] and not screen.paused_at_empty
        append(gemini_line("4", "info", "Request cancelled.", 13))
        await wait_until(pilot, lambda: screen.paused_at_empty, rounds=300)
        assert (screen.index, screen.at_placeholder) == (2, True)
        assert any("New empty turn #3+: paused here" in str(n.message)
                   for n in app._notifications)
        assert "no reply — info: Request cancelled. 3 s later" in text_of(screen, "current")
        await pilot.press("5", "enter")
        assert screen.store.get("3+no-reply").label == "artifact"  # type: ignore[union-attr]
        # More turns arrive: the view stays at the stop until the reviewer moves on.
        append(gemini_line("5", "user", ASK, 18), gemini_line("6", "gemini", "Two fail.", 25))
        await wait_until(pilot, lambda: len(screen.session.turns) == 6, rounds=300)
        await pilot.pause()
        assert (screen.index, screen.at_placeholder) == (2, True)
        await pilot.press("f")
        assert (screen.index, screen.at_placeholder) == (5, False)


async def test_a_review_queue_shows_queued_missing_replies_as_placeholders(
        tmp_path: Path) -> None:
    from replay.core.annotate.queue_position import QueueDefinition
    from replay.core.annotate.review_queue import QueueFilters
    from replay.ui.review import QueueScreen, ReviewOptions, make_review_app

    folder = tmp_path / "corpus"
    folder.mkdir()
    first = gemini_session(folder / "a.json")
    second = folder / "b.json"
    second.write_text(first.read_text().replace("g-missing", "g-other")
                      .replace("2026-01-01", "2026-01-02"))
    definition = QueueDefinition.of([folder], reviewer="ada", missing_replies=True)
    options = ReviewOptions([folder], definition, QueueFilters())
    app = make_review_app(options, rules=RULES, reviewer="ada",
                          annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen)
                         and app.screen.is_mounted and app.screen.index == 2, rounds=1500)
        screen = app.screen
        assert isinstance(screen, QueueScreen) and screen.at_placeholder
        await pilot.press("5", "enter", "right_square_bracket")
        await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen)
                         and app.screen.number == 1, rounds=1500)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QueueScreen)
        assert (screen.index, screen.at_placeholder) == (2, True)
        assert "#3+ the reply to #3 never came" in banner(screen)
