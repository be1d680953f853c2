"""A search's raw-byte candidates on a file with a huge line (a 50 MB message): the line is
never held whole nor joined a chunk at a time (20 s of copying for 75 MB), and the answers
stay a superset of the lines that hold the needle."""

from __future__ import annotations

import io
import json
import random
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.index import needle_bytes
from replay.core.index.needle_bytes import line_runs, lines_holding, shown_lines_holding


def _runs(data: bytes) -> list[tuple[int, bytes | None, int]]:
    return list(line_runs(io.BytesIO(data).read))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=30), st.booleans())
def test_line_runs_cover_the_file_line_by_line(lines: list[tuple[int, bool]],
                                               ended: bool) -> None:
    """Small chunks and a small bound: runs cover every byte in order, each whole lines, a
    line past the bound alone and unread, with its line feed's offset."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(needle_bytes, "SCAN_BYTES", 8)
        patch.setattr(needle_bytes, "LONG_LINE_BYTES", 20)
        text = b"".join(b"x" * size + b"\n" for size, _ in lines)
        if not ended:
            text += b"tail"
        at = 0
        for base, data, end in _runs(text):
            assert base == at
            if data is None:
                line_end = text.find(b"\n", base)
                assert end == (len(text) if line_end < 0 else line_end)
                assert end - base > 20
                at = end + 1
            else:
                assert data == text[base:end] and data
                assert data.endswith(b"\n") or end == len(text)
                assert all(len(line) <= 20 + 8 for line in data.split(b"\n"))
                at = end
        assert at >= len(text)


def test_a_huge_line_is_a_candidate_and_never_held(tmp_path: Path) -> None:
    """A 24 MB line beside short ones: found as a candidate (its turn is read by the
    search a run at a time), the short lines by their bytes, in linear time and with a few
    chunks held at most (main joined the line a chunk at a time and held it whole, lowered
    too: over 48 MB at its peak; now what may still be a short line, up to 4 MB)."""
    chance = random.Random(3)
    path = tmp_path / "big.jsonl"
    huge = "".join(chance.choice("abc \x1b") for _ in range(1000)) * 24_000
    lines = [json.dumps({"text": "a needle here"}), json.dumps({"text": huge}),
             json.dumps({"text": "nothing"}), json.dumps({"text": "<bash-stdout>needle"})]
    path.write_text("\n".join(lines) + "\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    tracemalloc.start()
    began = time.process_time()
    try:
        found = list(lines_holding(str(path), "needle"))
        shown = shown_lines_holding(str(path), "a needle")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == [starts[0], starts[1], starts[3]]
    assert starts[3] in shown and starts[2] not in shown
    assert peak < needle_bytes.LONG_LINE_BYTES + 8 * needle_bytes.SCAN_BYTES, peak
    assert time.process_time() - began < 5


def test_a_tag_in_a_huge_line_is_found_across_chunks(tmp_path: Path) -> None:
    """A harness tag past the first chunk of a huge line, cut by a chunk's end: the line is
    one of the tagged lines (its turn may show the needle), unread."""
    path = tmp_path / "tagged.jsonl"
    cut = 3 * needle_bytes.SCAN_BYTES - 5  # `<bash-` across the third chunk's end
    body = "x" * (cut - len('{"t": "')) + "<bash-input>ls" + "y" * (5 << 20)
    path.write_text(json.dumps({"t": "short"}) + "\n" + json.dumps({"t": body}) + "\n")
    second = len(json.dumps({"t": "short"})) + 1
    assert shown_lines_holding(str(path), "! ls") == {second}
