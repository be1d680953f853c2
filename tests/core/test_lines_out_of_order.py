"""A Claude Code reply whose lines come far apart (lines out of order, as in a file put
together from pieces): the app's index holds every part the whole read gives, not only the
parts that came while the turn was still whole in memory. Found by the r5 fuzz (shuffle)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from replay.core.index.turn_index import TurnIndex
from replay.core.readers import detect_reader, load_sessions
from replay.core.readers.base import iter_lines
from tests.conftest import REALDATA

SOURCE = (REALDATA / "claude-code" / "claude-code-log__test_data__real_projects__-Users-dain-"
          "workspace-JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")


def _facts(turn: object) -> tuple[object, ...]:
    return (turn.id, turn.role, [(p.kind, p.text, p.name, p.input, p.output, p.status)  # type: ignore[attr-defined]
                                 for p in turn.parts])  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_reply_whose_lines_come_far_apart_is_indexed_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    path = tmp_path / SOURCE.name
    path.write_bytes(b"".join(lines))
    [whole] = load_sessions(path)
    # One turn kept whole: every other is read back from its records and columns.
    monkeypatch.setattr(TurnIndex.__init__, "__kwdefaults__",
                        {**TurnIndex.__init__.__kwdefaults__, "tail": 1, "cache": 1})
    reader = detect_reader(path)
    assert reader.builder is not None and reader.index_turns is not None
    builder = reader.builder(str(path))
    reader.index_turns(builder)
    with open(path, "rb") as handle:
        for line, offset, number in iter_lines(handle):
            builder.feed(line, offset, number)
    builder.finish()
    session = reader.complete(path, builder) if reader.complete is not None else builder.session
    assert isinstance(session.turns, TurnIndex)
    assert len(session.turns) == len(whole.turns)
    differ = [n for n in range(len(whole.turns))
              if _facts(session.turns[n]) != _facts(whole.turns[n])]
    assert differ == []
