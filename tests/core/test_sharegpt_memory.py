"""What the app holds per message of a big ShareGPT document (`read_fed`: a `TurnIndex`):
no times where the file records none (`index/float_column.py`), and only the records'
starts for reading turns back (`span_feed.ElementNumbers`)."""

from __future__ import annotations

import gc
import json
import math
import tracemalloc
from pathlib import Path

import pytest

from replay.core.index.float_column import NanColumn
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import get_reader, read_fed


def _sharegpt(path: Path, messages: int) -> Path:
    turns = [{"from": "human" if number % 3 == 0 else "gpt",
              "value": "" if number % 3 == 2 else f"message {number} about the order"}
             for number in range(messages)]
    path.write_text(json.dumps({"id": "big", "conversations": turns}, indent=1),
                    encoding="utf-8")
    return path


def _held(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        found = read_fed(get_reader("sharegpt"), path)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found is not None
    [session] = found
    index = session.turns
    assert isinstance(index, TurnIndex)
    last = len(index) - 1
    assert index[last].parts[0].text == f"message {last} about the order" or last % 3 == 2
    assert index[1].parts and index.time_at(1) is None
    return held


def test_a_big_sharegpt_document_holds_under_60_bytes_a_message(tmp_path: Path) -> None:
    """Measured: 75 bytes a message before (16 of them NaN times, 8 the records' ends), 51
    now (the made-up ids, roles, kinds, flags, sizes, spans and line columns)."""
    _held(_sharegpt(tmp_path / "warm.json", 100))  # what the first read sets up once
    small = _held(_sharegpt(tmp_path / "small.json", 10_000))
    big = _held(_sharegpt(tmp_path / "big.json", 40_000))
    per_message = (big - small) / 30_000
    assert per_message < 62, per_message


def test_a_nan_column_holds_nothing_until_a_time_comes() -> None:
    column = NanColumn()
    for _ in range(1000):
        column.append(math.nan)
    assert len(column) == 1000 and column.itemsize == 0 and math.isnan(column[999])
    column[3] = math.nan
    assert column.itemsize == 0
    with pytest.raises(IndexError):
        column[1000]
    column[5] = 12.5
    column.append(7.0)
    assert column.itemsize == 8 and len(column) == 1001
    assert column[5] == 12.5 and column[1000] == 7.0 and math.isnan(column[4])
