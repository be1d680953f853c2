"""Issue 27: `v` on a record of megabytes shows all of it, a page at a time, read from the
file as the reviewer pages, and says which bytes of how many are on screen and where."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label, Static

from replay.core.readers.raw import PAGE_BYTES
from replay.core.session import lifted
from replay.ui.render import clean
from replay.ui.screens.raw import RawScreen
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.test_hostile_text import assert_terminal_safe

PIECE = "line [/] [link=x] list[int] \x1b[2J\x1b]0;PWNED\x07 é✓ "
"""Markup, escapes and characters of two and three bytes (cut by page edges)."""


def _rollout(path: Path, output: str) -> Path:
    def line(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "2026-03-01T10:00:00.000Z", "type": kind,
                           "payload": payload}, ensure_ascii=False) + "\n"

    path.write_text("".join([
        line("session_meta", {"id": "s", "model": "gpt-x"}),
        line("event_msg", {"type": "user_message", "message": "print the log"}),
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "print the log"}]}),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                               "arguments": "{\"command\": [\"cat\", \"log\"]}"}),
        line("response_item", {"type": "function_call_output", "call_id": "c1",
                               "output": output}),
        line("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "done"}]}),
    ]), encoding="utf-8")
    return path


def _text(app: object) -> str:
    return str(app.screen.query_one("#raw-text", Static).render())  # type: ignore[attr-defined]


def _where(app: object) -> str:
    return str(app.screen.query_one("#raw-where", Label).render())  # type: ignore[attr-defined]


async def test_a_big_record_is_paged_through_whole(tmp_path: Path) -> None:
    output = "".join(f"{number:07d} {PIECE}\n" for number in range(60_000)) + "THE END"
    path = _rollout(tmp_path / "rollout.jsonl", output)
    data = path.read_bytes()
    lines = data.split(b"\n")
    record = lines[4]  # the output's line
    offset = len(b"\n".join(lines[:4])) + 1
    pages = -(-len(record) // PAGE_BYTES)
    assert pages > 50
    app = build_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        screen.go(1)  # the step with the call
        await pilot.pause()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
        await pilot.pause()
        where = _where(app)
        # Which bytes of how many, and where in the file; the record itself, cut nowhere.
        turn = screen.session.turns[1]
        assert turn.source is not None
        # (A record over 4 MiB is held as its skeleton: its span in the file is its own.)
        in_file = lifted.file_spans(str(path), turn.source.spans)
        total = sum(length for _, length in in_file) + len(in_file) - 1
        records = b"\n".join(data[start:start + length] for start, length in in_file)
        assert len(records) == total

        def edge(number: int) -> int:  # after the first space, newline or comma from there
            nominal = number * PAGE_BYTES
            ahead = records[nominal:nominal + 256]
            return nominal + min(at for at in (ahead.find(b" "), ahead.find(b"\n"),
                                               ahead.find(b",")) if at >= 0) + 1

        assert f"{total:,} bytes" in where and f"page 1 of {-(-total // PAGE_BYTES):,}" in where
        assert f"bytes 1-{edge(1):,}" in where and str(path) in where, where
        assert "] next page" in where
        assert_terminal_safe(app)
        first = _text(app)
        assert first.startswith(clean(data[turn.source.spans[0][0]:][:200].decode()))
        # To the output's record: the last page holds the record's end.
        await pilot.press("G")
        await pilot.pause()
        last = _text(app)
        assert "THE END" in last and first != last
        # The last page starts inside the output's record (the second of the call's three):
        # its first byte's place in the file.
        spans = in_file
        assert spans[1][0] == offset
        start = edge(-(-total // PAGE_BYTES) - 1)
        at = offset + start - (spans[0][1] + 1)
        assert f"record 2 of 3 at byte {at:,} of" in _where(app), _where(app)
        await pilot.press("left_square_bracket")
        await pilot.pause()
        before_last = _text(app)
        assert before_last not in (first, last)
        # Every page read in turn makes up the records exactly (no byte lost at an edge).
        raw = app.screen
        assert isinstance(raw, RawScreen) and raw.records is not None
        pages = [raw.records.page(number)[0] for number in range(raw.records.pages())]
        assert "".join(pages) == records.decode()
        # No word cut in two: every page but the last ends after a break.
        assert all(text[-1] in " \n," for text in pages[:-1])
        assert_terminal_safe(app)
        await pilot.press("g")
        await pilot.pause()
        assert _text(app) == first
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))


async def test_a_small_record_is_pretty_printed_whole(tmp_path: Path) -> None:
    path = _rollout(tmp_path / "rollout.jsonl", f"short {PIECE}")
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        screen.go(1)
        await pilot.pause()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
        await pilot.pause()
        assert not app.screen.query_one("#raw-where", Label).display
        text = _text(app)
        assert '"call_id": "c1"' in text and "line 4" in text, text[:500]
        assert_terminal_safe(app)
