"""What an `EncodedList` holds for its open batch is about its elements' JSON, not the
buffers orjson wrote them into (4 KiB or more each, kept by the bytes orjson returns).

A scan of an Aider history of many chats keeps each chat's report (one short `empty_turns`
list each, its batch open) until the reports pass `spill.MEMORY_BYTES` pickled: holding
orjson's buffers, 10,000 of them took 40 MB (a 5 MB history scanned in 75 MB, not 38)."""

from __future__ import annotations

import tracemalloc
from typing import Any

from replay.core.corpus import spill as spill_module
from replay.core.corpus.encoded import EncodedList
from replay.core.corpus.spill import spill
from replay.core.safe import json_bytes


def _report(number: int) -> dict[str, Any]:
    return {"path": f"history.md#{number}", "empty_turns": EncodedList(
        [{"turn": number % 7, "reason": "no-reply", "evidence": "blank"}])}


def _held(make: Any) -> tuple[Any, int]:
    """What `make()` gives, and the bytes allocated and still held once it is made."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        made = make()
        return made, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_short_elements_are_held_at_about_their_size() -> None:
    elements = [{"turn": number, "reason": "empty"} for number in range(2000)]
    encoded = sum(len(json_bytes(element)) + 1 for element in elements)
    lists, held = _held(lambda: [EncodedList([element]) for element in elements])
    assert [list(one) for one in lists] == [[element] for element in elements]
    # Each list: its slots, its open list and one bytes of ~30 characters (~250 bytes).
    assert held < 2000 * 400 + encoded, held


def test_reports_kept_before_spilling_are_held_at_about_their_size(
        monkeypatch: Any) -> None:
    monkeypatch.setattr(spill_module, "MEMORY_BYTES", 4 << 20)  # (the default)
    reports, held = _held(lambda: spill(_report(number) for number in range(3000)))
    assert isinstance(reports, list) and len(reports) == 3000  # (not spilled: all kept)
    assert [list(report["empty_turns"]) for report in reports[:7]] == [
        [{"turn": number, "reason": "no-reply", "evidence": "blank"}] for number in range(7)]
    # A dict, its path, an EncodedList holding ~60 bytes: well under 1 KiB a report.
    assert held < 3000 * 1024, held
