"""Pilot tests of `replay review`: one queue over many sessions on the replay screen."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from replay.cli import main
from replay.core.annotate.annotations import AnnotationStore, default_journal_path
from replay.core.annotate.journal import Journal
from replay.core.annotate.queue_position import QueueDefinition
from replay.core.annotate.queue_sources import iter_sessions
from replay.core.annotate.review_queue import QueueFilters
from replay.ui.review import QueueScreen, ReviewApp, ReviewOptions, make_review_app
from tests.ui.conftest import TEST_SETTINGS, wait_until
from tests.ui.sessions import write_chat

LAYOUT = {"alpha": (9, 20), "beta": (5,), "gamma": (3, 12), "delta": (7,), "epsilon": (2,)}
"""Sessions (in queue order) and the indices of their empty turns."""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for number, (title, empty_at) in enumerate(LAYOUT.items()):
        write_chat(folder / f"{number}-{title}.json", empty_at=empty_at, title=title)
    return folder


def review(paths: list[Path], *, reviewer: str = "ada", sample: int | None = None,
           seed: int = 0, restart: bool = False, prefetch: bool = True,
           blind: bool | None = None) -> ReviewApp:
    definition = QueueDefinition.of(paths, sample=sample, seed=seed, reviewer=reviewer)
    options = ReviewOptions(paths, definition, QueueFilters(sample=sample, seed=seed),
                            restart=restart, prefetch=prefetch)
    return make_review_app(options, settings=TEST_SETTINGS, reviewer=reviewer, blind=blind)


def on_screen(app: ReviewApp) -> QueueScreen:
    screen = app.screen
    assert isinstance(screen, QueueScreen)
    return screen


async def at(pilot: object, app: ReviewApp, number: int, index: int) -> QueueScreen:
    """Wait until session `number` is on screen at turn `index`."""
    # 30 s on a loaded machine. The queue is complete by then (its totals are final), which
    # the first screen does not wait for (test_the_first_screen_does_not_wait_for_the_corpus).
    await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen)
                     and app.screen.number == number and app.screen.index == index
                     and app.screen.is_mounted and app.queue is not None
                     and app.queue.complete, rounds=1500)
    await pilot.pause()  # type: ignore[attr-defined]
    return on_screen(app)


def session_named(corpus: Path, title: str) -> object:
    return next(s for _ref, s in iter_sessions([corpus]) if s.label == title)


async def test_brackets_cross_session_boundaries(corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await at(pilot, app, 0, 9)
        assert "empty turn 1 / 7 · session 1 / 5" in str(screen.status_text())
        await pilot.press("right_square_bracket")
        screen = await at(pilot, app, 0, 20)
        await pilot.press("right_square_bracket")
        screen = await at(pilot, app, 1, 5)
        assert screen.session.label == "beta"
        assert "empty turn 3 / 7 · session 2 / 5" in str(screen.status_text())
        await pilot.press("right_square_bracket")
        await at(pilot, app, 2, 3)
        await pilot.press("left_square_bracket")
        await at(pilot, app, 1, 5)
        await pilot.press("left_square_bracket")
        screen = await at(pilot, app, 0, 20)
        assert screen.session.label == "alpha"
        # Off an empty turn, ] goes to the next one in the queue, not the session's next turn.
        await pilot.press("left", "left")
        assert "after empty turn 1 / 7" in str(screen.status_text())
        await pilot.press("right_square_bracket")
        await at(pilot, app, 0, 20)


async def test_the_first_screen_does_not_wait_for_the_corpus(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from replay.ui import review as review_module

    release = threading.Event()
    real = review_module.index_corpus

    def slow_corpus(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for number, indexed in enumerate(real(*args, **kwargs)):  # type: ignore[arg-type]
            if number == 2:
                assert release.wait(30), "the test never let the rest be read"
            yield indexed

    monkeypatch.setattr(review_module, "index_corpus", slow_corpus)
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        # Two of five sessions read: the first is on screen, the totals say there is more.
        await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen)
                         and app.screen.is_mounted and app.queue is not None
                         and len(app.queue.sessions) == 2, rounds=1500)
        screen = on_screen(app)
        assert (screen.number, screen.index) == (0, 9) and app.queue is not None
        assert not app.queue.complete
        status = str(screen.status_text())
        assert "empty turn 1 / 3+ · session 1 / 2+" in status and "reading sessions" in status
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: on_screen(app).number == 1)
        await pilot.press("right_square_bracket")  # nothing further is known yet
        await pilot.pause()
        assert (on_screen(app).number, on_screen(app).index) == (1, 5)
        assert any("still being read" in note.message for note in app._notifications)
        release.set()
        screen = await at(pilot, app, 1, 5)
        status = str(screen.status_text())
        assert "empty turn 3 / 7 · session 2 / 5 ·" in status and "reading" not in status
        await pilot.press("right_square_bracket")
        await at(pilot, app, 2, 3)


async def test_u_crosses_to_the_next_unannotated_turn(corpus: Path) -> None:
    # Annotated before the queue opens: alpha #21 and beta #6, in their own journals.
    for title, turn in (("alpha", 20), ("beta", 5)):
        session = session_named(corpus, title)
        AnnotationStore.for_session(session, "ada").commit(f"m{turn:03d}", turn, "continue")
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await at(pilot, app, 0, 9)
        assert "2 / 7 labelled" in str(screen.status_text())
        await pilot.press("u")
        screen = await at(pilot, app, 2, 3)
        assert screen.session.label == "gamma"
        await pilot.press("u", "u", "u")
        await at(pilot, app, 4, 2)
        await pilot.press("u")  # wraps round to the first one not annotated
        await at(pilot, app, 0, 9)


async def test_annotations_go_to_each_sessions_own_journal(corpus: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await pilot.press("1", "enter")
        await pilot.press("right_square_bracket", "right_square_bracket")
        screen = await at(pilot, app, 1, 5)
        await pilot.press("2", "enter")
        await pilot.pause()
        assert "2 / 7 labelled" in str(screen.status_text())
    alpha = Journal(default_journal_path(session_named(corpus, "alpha"))).load().records
    beta = Journal(default_journal_path(session_named(corpus, "beta"))).load().records
    assert [(r["turn_id"], r["label"], r["reviewer"]) for r in alpha] == [
        ("m009", "continue", "ada")]
    assert [(r["turn_id"], r["label"]) for r in beta] == [("m005", "approval")]
    capsys.readouterr()
    assert main(["export", str(corpus / "1-beta.json")]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out.lstrip("\ufeff"))))
    assert [(row["turn_id"], row["label"]) for row in rows] == [("m005", "approval")]


async def test_the_queue_resumes_where_the_reviewer_stopped(corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await pilot.press(*["right_square_bracket"] * 4)
        await at(pilot, app, 2, 12)
    again = review([corpus])
    async with again.run_test(size=(160, 40)) as pilot:
        await at(pilot, again, 2, 12)
    other_reviewer = review([corpus], reviewer="bo")
    async with other_reviewer.run_test(size=(160, 40)) as pilot:
        await at(pilot, other_reviewer, 0, 9)
    restarted = review([corpus], restart=True)
    async with restarted.run_test(size=(160, 40)) as pilot:
        await at(pilot, restarted, 0, 9)


async def sampled_turns(corpus: Path, reviewer: str) -> list[tuple[str, str]]:
    """The turns a reviewer's sampled queue holds (seed 5), once its first is on screen."""
    app = review([corpus], reviewer=reviewer, sample=4, seed=5)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen), rounds=1500)
        assert app.queue is not None
        first = app.queue.entries[0]
        await at(pilot, app, first.session, first.index)
        return [(app.queue.sessions[e.session].label, e.turn_id) for e in app.queue.entries]


async def test_a_seeded_sample_is_the_same_for_two_reviewers(corpus: Path) -> None:
    drawn = [await sampled_turns(corpus, reviewer) for reviewer in ("ada", "bo")]
    assert len(drawn[0]) == 4 and drawn[0] == drawn[1]
    other = review([corpus], sample=4, seed=6)
    async with other.run_test(size=(160, 40)) as pilot:
        # Its first screen mounted before the app closes (closing mid-mount is another test).
        await wait_until(pilot, lambda: isinstance(other.screen, QueueScreen)
                         and other.screen.is_mounted, rounds=1500)
        assert other.queue is not None
        assert [(other.queue.sessions[e.session].label, e.turn_id)
                for e in other.queue.entries] != drawn[0]


def read_ahead(app: ReviewApp, number: int) -> Callable[[], bool]:
    """True once session `number` is read (or there is no such session)."""
    return lambda: number >= len(LAYOUT) or number in app.cache


async def test_next_session_is_read_ahead_and_few_are_kept(corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await wait_until(pilot, lambda: 1 in app.cache)
        for number, index in ((0, 20), (1, 5), (2, 3), (2, 12), (3, 7), (4, 2)):
            await pilot.press("right_square_bracket")
            await at(pilot, app, number, index)
            await wait_until(pilot, read_ahead(app, number + 1))
            assert len(app.cache) <= 3
        crossings = app.crossings[1:]
        assert [c.number for c in crossings] == [1, 2, 3, 4]
        assert all(c.ready for c in crossings), "every next session was read ahead"


async def test_without_read_ahead_a_crossing_waits_for_the_read(corpus: Path) -> None:
    app = review([corpus], prefetch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await pilot.press("right_square_bracket", "right_square_bracket")
        await at(pilot, app, 1, 5)
        assert not app.crossings[-1].ready


async def test_playing_carries_on_into_the_next_session(corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await pilot.press("right_square_bracket")
        await at(pilot, app, 0, 20)
        await pilot.press("space")
        # Past alpha's end, beta opens a few turns before its empty turn and plays up to it.
        screen = await at(pilot, app, 1, 5)
        await wait_until(pilot, lambda: not screen.playback.playing)
        assert screen.paused_at_empty
        # An empty turn left out of the queue does not stop playback.
        assert app.queue is not None


def bar_text(screen: QueueScreen) -> str:
    return str(screen.query_one("#annotation-suggestion", Static).render())


async def test_blind_queue_hides_suggestions_and_others_in_every_session(corpus: Path) -> None:
    for title, turn in (("alpha", 9), ("beta", 5)):
        AnnotationStore.for_session(session_named(corpus, title), "bo").commit(
            f"m{turn:03d}", turn, "resumption")
    app = review([corpus], blind=True)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await at(pilot, app, 0, 9)
        assert "blind review" in bar_text(screen) and "bo resumption" not in bar_text(screen)
        await pilot.press("right_square_bracket", "right_square_bracket")
        screen = await at(pilot, app, 1, 5)
        suggestion = screen.empty_turn(5).suggestion  # type: ignore[union-attr]
        assert "blind review" in bar_text(screen) and "bo resumption" not in bar_text(screen)
        assert suggestion is None or f"suggested: {suggestion}" not in bar_text(screen)
        await pilot.press("enter")  # nothing picked: the hidden suggestion is not taken
        assert screen.store.get("m005") is None
        await pilot.press("9", "enter")
        await pilot.pause()
        assert "bo resumption" in bar_text(screen)
    seeing = review([corpus], restart=True)
    async with seeing.run_test(size=(160, 40)) as pilot:
        screen = await at(pilot, seeing, 0, 9)
        assert "bo resumption" in bar_text(screen)


async def test_sessions_walked_past_are_let_go(corpus: Path) -> None:
    import gc

    from replay.core.session.model import Session

    def alive() -> set[str]:
        gc.collect()
        return {o.label for o in gc.get_objects()
                if isinstance(o, Session) and o.label in LAYOUT}

    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        for number, index in ((0, 20), (1, 5), (2, 3), (2, 12), (3, 7), (4, 2)):
            await pilot.press("right_square_bracket")
            await at(pilot, app, number, index)
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The one on screen and the one before it; alpha, beta and gamma are gone.
        assert alive() <= {"delta", "epsilon"}


async def test_crossing_under_the_help_screen_keeps_one_queue_screen(corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(160, 40)) as pilot:
        await at(pilot, app, 0, 9)
        await pilot.press("question_mark")
        await pilot.pause()
        app.open_position(2)  # what playback does at a session's end
        await wait_until(pilot, lambda: app.current == 1)
        await pilot.pause()
        assert sum(isinstance(s, QueueScreen) for s in app.screen_stack) == 1
        await pilot.press("escape")
        await at(pilot, app, 1, 5)


async def test_a_narrow_header_keeps_the_turn_and_play_state_beside_the_queue_place(
        corpus: Path) -> None:
    app = review([corpus])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await at(pilot, app, 0, 9)
        shown = str(screen.status_text())[:80]  # what fits on the line
        assert "empty turn 1 / 7 · session 1 / 5" in shown
        assert "turn 10 / 30 · paused" in shown
