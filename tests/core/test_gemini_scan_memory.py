"""A Gemini recording is scanned with its turns as columns (`Reader.scan_indexed`): a message
rewritten later keeps the scan from letting its turn go, and as whole turns 120-byte messages
cost the scan 9x the file. Same reports as the whole read."""

from __future__ import annotations

import gc
import json
import tracemalloc
import uuid
from pathlib import Path

from replay.core.corpus.scan import scan_session
from replay.core.corpus.tasks import SessionTask, scan_task
from replay.core.readers import get_reader, load_sessions
from replay.core.suggest import default_suggester


def _recording(path: Path, count: int) -> Path:
    """Small messages with uuid ids, every seventh one empty, the odd one written again."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"sessionId": "g", "projectHash": "h"}) + "\n")
        for number in range(count):
            message = {"id": str(uuid.UUID(int=number * 2654435761)),
                       "timestamp": f"2026-03-01T10:{number // 60 % 60:02d}:{number % 60:02d}Z",
                       "type": "user" if number % 2 == 0 else "gemini",
                       "content": "" if number % 7 == 3 else f"m{number}"}
            handle.write(json.dumps(message) + "\n")
            if number % 97 == 5:  # written again, a little later, with its text
                handle.write(json.dumps(dict(message, content=f"again {number}")) + "\n")
    return path


def _peak(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = scan_task(SessionTask(str(path)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [report] = result.reports
    assert report["turns"] > 0
    return peak


def test_a_recording_of_small_messages_is_scanned_as_columns(tmp_path: Path) -> None:
    """Measured: the scan's peak grew by about 1,100 bytes a message as whole turns, now
    about 230 (columns, the id table, the packed reports of the empty turns). From 10,000
    messages: below that the open batches of the reports weighed on the smaller peak (at
    5,000, 1 MB of orjson's 4 KiB buffers until `EncodedList` copied its elements out, which
    made the slope look steeper though neither peak grew)."""
    small = _peak(_recording(tmp_path / "small.jsonl", 10_000))
    big = _peak(_recording(tmp_path / "big.jsonl", 30_000))
    per_message = (big - small) / 20_000
    assert per_message < 300, per_message


def test_the_columned_scan_reports_what_the_whole_read_does(tmp_path: Path) -> None:
    path = _recording(tmp_path / "g.jsonl", 3_000)
    [report] = scan_task(SessionTask(str(path))).reports
    [whole] = load_sessions(path, "gemini")
    expected = scan_session(whole, suggester=default_suggester()).to_json()
    assert json.dumps(report, sort_keys=True, default=list) == json.dumps(
        expected, sort_keys=True, default=list)
    assert get_reader("gemini").scan_indexed
