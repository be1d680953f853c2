"""A search of a text left in its file (`lifted.contains`, what `turn_holds` asks): the
prompt's count, `n`'s find, the match count and the screen's highlight ask the same of one
50 MB message in a row; it is read and casefolded once (main: each time, a second each),
and a cancelled search stops within a run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replay.core.index.navigation import part_holds, turn_holds
from replay.core.readers import huge_strings
from replay.core.session import lifted
from replay.core.session.model import Kind, Part, Turn
from tests.core.test_huge_strings import _loads

LINE = "The fox [/] list[int] \x1b[2J café 日本 🦊 jumps.\n"
TEXT = LINE * 20_000 + "the LAST line\n"


def _lifted(path: Path) -> str:
    """The placeholder of TEXT, read (again, once the file was touched: a new one) from
    its record in `path`."""
    if path.exists():
        os.utime(path, ns=(1, 1))  # (the same bytes: the text read before is still there)
    else:
        path.write_bytes(json.dumps({"text": TEXT}).encode() + b"\n")
    with open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), 0)
    assert found is not None
    text = _loads(found[0])["text"]  # type: ignore[index]
    assert lifted.holds(text)
    return text


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    decoded: list[int] = []
    real = lifted.FileText._decode

    def decode(self: lifted.FileText, begin: int, stop: int) -> str:
        decoded.append(stop - begin)
        return real(self, begin, stop)

    monkeypatch.setattr(lifted.FileText, "_decode", decode)
    return decoded


def test_a_text_left_in_its_file_is_looked_through_once_per_needle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    first, again = _lifted(path), _lifted(path)  # the turn and its parts read back
    assert first != again
    size = path.stat().st_size
    decoded = _counting(monkeypatch)
    turn = Turn(id="t", role="assistant", parts=[Part(kind=Kind.TEXT, text=first)])
    for _ in range(3):  # the prompt's count, the find, the match count
        assert turn_holds(turn, "the last line")
    assert part_holds(Part(kind=Kind.TEXT, text=again), "the last line")  # the highlight
    assert not turn_holds(turn, "not there")
    assert not turn_holds(turn, "not there")
    # once for each needle (a little more: runs across two decoded pieces); main read it
    # whole for each question, 6 times
    assert sum(decoded) < 2.6 * size, (sum(decoded), size)


def test_a_cancelled_search_stops_and_keeps_no_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    text = _lifted(path)
    decoded = _counting(monkeypatch)
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2

    turn = Turn(id="t", role="assistant", parts=[Part(kind=Kind.TEXT, text=text)])
    assert not turn_holds(turn, "the last line", cancelled)
    assert sum(decoded) < 0.4 * path.stat().st_size  # a piece decoded, not the whole text
    assert turn_holds(turn, "the last line")  # (the cancelled search said nothing)
