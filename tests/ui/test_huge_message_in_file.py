"""Issue 27: the app holds a huge message of a JSON-lines file as a window on the file, not as
text: opened, unfolded and scrolled to its end, it costs a fraction of the message (main held
the line's bytes and its decoded text at once, 2-4x), and its rows are those of the text
(a window onto a file rewritten since shows a line saying so, never other text)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from hypothesis import given, settings

from replay.core.readers import huge_strings
from replay.core.safe import has_controls
from replay.core.session import lifted
from replay.ui.render import LongText
from replay.ui.widgets.turn_view import TurnLines
from tests.core.test_huge_strings import _loads, small_thresholds
from tests.ui.conftest import build_app, ready
from tests.ui.test_huge_message_formats import claude_code, opencode_export
from tests.ui.test_huge_message_rows import (
    OldLongText,
    _rows,
    hostile,
    rewrite_shows_a_notice,
    search_shows_the_needle,
)

LINE = "The fox 🦊 [/] [link=x]click[/link] list[int] \x1b[2J jumps over the dog.\n"
TEXT = LINE * (16_000_000 // len(LINE)) + "the last line [/] \x1b[1m\n"
"""16 M characters (64 MB as a string: it has an emoji), with escapes and markup."""
STRING_BYTES = 4 * len(TEXT)


async def _unfolded_peak(path: Path) -> tuple[int, list[str]]:
    """The traced peak from the app's start to the message unfolded and scrolled to its end,
    and the rows then on screen."""
    tracemalloc.start()
    try:
        app = build_app(path)
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot, app)
            screen = app.replay_screen
            assert screen is not None
            shown = await _unfolded_to_its_end(pilot, screen, 1)
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, shown


async def _unfolded_to_its_end(pilot: object, screen: object, index: int) -> list[str]:
    """The rows on screen once turn `index` is shown, unfolded and scrolled to its end
    (none passing a control character)."""
    screen.go(index)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.press("o")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    current = screen.query_one("#current", TurnLines)  # type: ignore[attr-defined]
    current.scroll_end(animate=False, immediate=True)
    await pilot.pause()  # type: ignore[attr-defined]
    strips = [current.render_line(y) for y in range(current.scrollable_content_region.height)]
    for strip in strips:
        for segment in strip:
            assert not has_controls(segment.text), segment
    return ["".join(segment.text for segment in strip).strip() for strip in strips]


async def test_a_huge_message_is_read_and_unfolded_without_holding_it(tmp_path: Path) -> None:
    for make in (claude_code, opencode_export):
        (tmp_path / make.__name__).mkdir()
        (tmp_path / f"{make.__name__}-small").mkdir()
        path = make(tmp_path / make.__name__, TEXT)
        peak, shown = await _unfolded_peak(path)
        small, _ = await _unfolded_peak(make(tmp_path / f"{make.__name__}-small", LINE * 20))
        # main: the line (20 MB, in a buffer grown by doubling) and its text (64 MB) at once,
        # 1.5x the text. Now: the line starts and lengths, a run of the text at a time, the
        # start of the line while it is told to be long (0.3x, a few MB however long).
        assert peak - small < 0.6 * STRING_BYTES, (make.__name__, peak, small)
        assert "the last line [/] ␛[ESC][1m" in shown, shown


async def test_a_message_whose_file_was_rewritten_is_not_shown_wrongly(tmp_path: Path) -> None:
    await rewrite_shows_a_notice(claude_code(tmp_path, TEXT), 1)


@settings(max_examples=80, deadline=None)
@given(text=hostile)
def test_rows_drawn_from_the_file_are_those_of_the_text(tmp_path_factory: object,
                                                         text: str) -> None:
    text = text * 3 + "\n" + text
    if not text.strip():
        return
    path = tmp_path_factory.mktemp("rows") / "s.jsonl"  # type: ignore[attr-defined]
    path.write_bytes(json.dumps({"text": text}).encode() + b"\n")
    with small_thresholds(), open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), 0)
    assert found is not None
    rope = lifted.source(_loads(found[0])["text"])  # type: ignore[index]
    if rope is None:
        return  # too short to be lifted
    for width in (5, 40, 81):
        assert _rows(LongText(rope), width) == _rows(OldLongText(text), width)


async def test_a_search_finds_and_shows_the_end_of_a_message_left_in_its_file(
        tmp_path: Path) -> None:
    path = claude_code(tmp_path, LINE * (12_000_000 // len(LINE)) + "the needle [/] \x1b[1m\n")
    await search_shows_the_needle(path, tmp_path)


async def test_a_huge_message_among_many_turns_reads_back_from_its_skeleton(
        tmp_path: Path) -> None:
    """A big session's turns are read back from their records (`TurnIndex`): the huge one's
    record is its skeleton, read back as such (not the first bytes of the line)."""
    path = claude_code(tmp_path, TEXT)
    lines = path.read_text().splitlines(keepends=True)
    filler = []
    for number in range(600):
        filler.append(json.dumps({
            "type": "user", "sessionId": "5b0c1a52-0000-4000-8000-000000000001",
            "uuid": f"f-{number}", "timestamp": "2026-01-01T00:00:09Z",
            "message": {"role": "user", "content": f"filler {number}"}}) + "\n")
    path.write_text("".join(filler[:300] + lines + filler[300:]))
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        big = next(index for index in range(len(screen.session.turns))
                   if screen.session.turns[index].role == "assistant"
                   and screen.session.turns[index].parts[0].text_length > 1_000_000)
        assert screen.session.turns[big].parts[0].text_length == len(TEXT)
        shown = await _unfolded_to_its_end(pilot, screen, big)
        assert "the last line [/] ␛[ESC][1m" in shown, shown
        assert not any("could not be read back" in row for row in shown), shown
