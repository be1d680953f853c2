"""Issue 27 item 4: a 50 MB message opens and unfolds in bounded time, and shows all of it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from replay.core.safe import _CONTROL
from replay.ui.render import LongText, fold
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, wait_until

LINE = "word " * 12 + "\n"
BIG = LINE * (50_000_000 // len(LINE))


def _write(path: Path, text: str) -> Path:
    path.write_text(json.dumps({"id": "big", "messages": [
        {"role": "user", "content": "please write it"},
        {"role": "assistant", "content": text},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "ok"}]}))
    return path


def _plain_passes(text: str) -> float:
    """Seconds, best of two, of three passes of the library over `text` (encode it, replace
    its controls, split its lines once tabs are expanded): what this machine does now in the
    time an unfold must take at most a few of."""
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        text.encode("utf-8")
        _CONTROL.sub(".", text)
        text.expandtabs(8).split("\n")
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("text", [BIG, "x" * 50_000_000, ("é" * 99 + "\t") * 500_000],
                         ids=["many-lines", "one-line", "wide-and-tabs"])
async def test_a_fifty_megabyte_message_opens_and_unfolds_within_two_seconds(
        tmp_path: Path, text: str) -> None:
    app = build_app(_write(tmp_path / "big.json", text))
    async with app.run_test(size=(120, 36)) as pilot:
        # Indexing the file (300 MB for the escaped text) is not what is timed here: it may
        # take over `ready`'s 10 s on a loaded machine, so it gets a minute.
        await wait_until(pilot, lambda: app.replay_screen is not None
                         and not app.replay_screen.indexing, rounds=3000)
        await pilot.pause()
        screen = app.replay_screen
        assert screen is not None
        started = time.perf_counter()
        screen.go(1)
        await pilot.pause()
        opened = time.perf_counter() - started
        current = screen.query_one("#current", TurnLines)
        assert "(click or o shows it all)" in current.plain_text
        started = time.perf_counter()
        await pilot.press("o")
        await pilot.pause()
        unfolded = time.perf_counter() - started
        # 2 s on an idle machine (0.5 s measured); a loaded one stretches every step alike,
        # and so does a virtual machine whose host takes its CPU (steal time, which the load
        # average does not show): then the bound is six plain passes over the text, timed
        # here (an unfold 4 s where those passes took 1 s was seen at a steal of 10-40%).
        limit = max(2.0 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)),
                    6 * _plain_passes(text))
        assert opened < limit and unfolded < limit, (opened, unfolded, limit)
        # All of it is there: as many rows as the text needs, each drawn on demand.
        (start, _, long), = current._long
        rows = long.layout(current._rendered_width)
        assert rows > len(text) // 120 and current.line_count > rows
        tail = ["".join(segment.text for segment in current._row(start + rows - back)).strip()
                for back in (1, 2)]
        last = tail[0] or tail[1]  # a text ending in a newline ends with an empty row
        assert last and text.expandtabs(8).rstrip().endswith(last)
        current.scroll_to(y=start + rows - 5, animate=False, immediate=True)
        await pilot.pause()
        await pilot.press("o")  # folded again
        await pilot.pause()
        assert current.line_count < 1_000


def test_fold_is_bounded_by_characters_too() -> None:
    shown, hidden = fold("x" * 1_000_000, 24)
    assert len(shown) <= 20_000 and hidden == 1
    shown, hidden = fold("a\n" * 100 + "b" * 1_000_000 + "\nc\n", 24)
    assert shown.count("\n") == 23 and hidden >= 78


def test_long_text_rows_wrap_by_cells_and_keep_every_character() -> None:
    text = "abcdefgh\n" + "日本語テキスト" + "\n\n" + "x" * 25
    long = LongText(text, indent=1)
    rows = long.layout(11)  # 10 cells of text a row
    shown = ["".join(segment.text for segment in long.row(n)) for n in range(rows)]
    assert all(len(row.encode("utf-16-le")) // 2 <= 11 for row in shown)
    assert "".join(row.strip() for row in shown) == text.replace("\n", "")
    assert rows == 1 + 2 + 1 + 3


def test_long_text_escapes_controls() -> None:
    long = LongText("a\x1b]0;PWNED\x07b" * 10)
    long.layout(200)
    row = "".join(segment.text for segment in long.row(0))
    assert "\x1b" not in row and "\x07" not in row and "[BEL]" in row


def test_long_text_of_one_cell_symbols_is_laid_out_by_length_as_rich_would_wrap_it() -> None:
    # `␛` (a control spelled out), `…`, box drawing: one cell each, though not Latin-1; a
    # 10 MB reply of such lines was wrapped grapheme by grapheme (4.4 s of CPU to unfold).
    from rich.cells import cell_len, chop_cells

    from replay.ui import render

    lines = ["a\x1b[2J b … ─ c" * 3, "plain", "日本語 a\u0301", "␛" * 30]
    long = LongText("\n".join(lines), indent=1)
    rows = long.layout(11)
    expected = sum(len(chop_cells(render.clean(line), 10)) or 1 for line in lines)
    assert rows == expected
    shown = ["".join(segment.text for segment in long.row(n)) for n in range(rows)]
    assert all(cell_len(row) == 11 for row in shown)  # padded to the width, never over
    assert render._narrow("a ␛ … ─") and not render._narrow("日本") \
        and not render._narrow("a\u0301")
