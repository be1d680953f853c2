"""Issue 27: what a search and the stops of a big session hold grow by a few bytes a turn,
not by a Python int (36 bytes with its list slot) per candidate, match or stop.

`e` is in nearly every uuid and in every `user` record: the prompt's count kept every match
as a list of ints (the app's search phase on 417,000 tiny Gemini messages went from 81 to
96 MB while `e` was counted), a JSON document's candidates were a list, a set and a sorted
list, and a session whose every other turn is empty held its stops as a list of ints."""

from __future__ import annotations

import gc
import json
import tracemalloc
import uuid
from pathlib import Path

import pytest

from replay.core.index.navigation import Navigator
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import mini_swe_agent
from replay.core.readers.base import read_line_session
from replay.core.readers.gemini import GeminiBuilder, index_turns
from replay.core.session.model import Session
from tests.core.test_traj_memory import _steady

SMALL, BIG = 10_000, 40_000
"""Turns of the two files: what grows is the difference over the 30,000 turns between them
(what a search holds whatever the file, its chunks of the file and their copies, does not)."""


def _indexed(path: Path, count: int, empty_every: int = 0) -> tuple[Session, TurnIndex]:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"sessionId": "g", "projectHash": "h"}) + "\n")
        for number in range(count):
            text = "" if empty_every and number % empty_every == 1 else f"m{number}"
            handle.write(json.dumps({"id": str(uuid.UUID(int=number * 2654435761)),
                                     "type": "user" if number % 2 else "gemini",
                                     "content": text}) + "\n")
    builder = GeminiBuilder(str(path))
    index = index_turns(builder, tail=4, cache=4)
    return read_line_session(path, builder), index


def _traced(work: object) -> tuple[object, int, int]:
    """(what `work()` returns, the memory it left held, its peak), traced."""
    gc.collect()
    tracemalloc.start()
    try:
        result = work()  # type: ignore[operator]
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, held, peak


@pytest.fixture(autouse=True)
def _small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # Reads and stretches small, so that what is fixed per chunk does not hide what grows.
    monkeypatch.setattr("replay.core.index.needle_bytes.SCAN_BYTES", 256 << 10)
    monkeypatch.setattr("replay.core.index.id_column.STRETCH_IDS", 2048)


def _per_turn(tmp_path: Path, measure: object) -> float:
    """Bytes a turn that `measure(count)` (held or peak bytes) grows by from SMALL to BIG."""
    small, big = measure(SMALL), measure(BIG)  # type: ignore[operator]
    return (big - small) / (BIG - SMALL)


def test_the_candidates_of_a_needle_in_every_turn_of_a_document_cost_a_few_bytes_a_turn(
        tmp_path: Path) -> None:
    """A document's candidates were a list, a set and a sorted list of ints, and every line
    end read was kept in a dict (70 bytes a turn at the peak, measured); now the holding
    lines' offsets (8 bytes each, two lines a turn here), a byte a turn and the answer's
    four, as for a JSON-lines file (19, measured)."""
    def peak(count: int) -> int:
        # A mini-swe-agent run: a JSON document (`DocumentTurnIndex` in the app), `e` in
        # every record.
        path = _steady(tmp_path / f"run-{count}.traj.json", count // 2)
        [session] = mini_swe_agent.read_indexed(path, tail=4, cache=4)
        turns = session.turns
        assert isinstance(turns, TurnIndex)
        candidates, _, peak = _traced(lambda: turns.lines_with("e"))
        assert candidates == list(range(len(turns)))
        return peak
    grown = _per_turn(tmp_path, peak)
    assert grown < 30, grown


def test_the_matches_of_a_count_are_held_in_four_bytes_each(tmp_path: Path) -> None:
    def held(count: int) -> int:
        session, index = _indexed(tmp_path / f"uuids-{count}.jsonl", count)
        navigator = Navigator(session)
        index.lines_with("e")  # the candidates, as the prompt's count has them already
        hits, held, _ = _traced(lambda: navigator.matches("e"))
        assert hits == [i for i in range(count) if "e" in index.id_at(i)
                        or index.role_at(i) == "user"]
        return held
    grown = _per_turn(tmp_path, held)
    assert grown < 8, grown  # 40 before


def test_the_stops_of_a_session_are_held_in_four_bytes_each(tmp_path: Path) -> None:
    def held(count: int) -> int:
        session, _ = _indexed(tmp_path / f"empties-{count}.jsonl", count, empty_every=2)
        navigator, held, _ = _traced(lambda: Navigator(session))
        assert navigator.empty_indices == [i for i in range(count) if i % 2 == 1]
        return held
    grown = _per_turn(tmp_path, held)
    assert grown < 5, grown  # a stop every other turn: 20 before


def test_a_search_holds_a_few_small_chunks_of_the_file_at_most(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """A needle in no record: what is left of the peak is the chunks of the file read (four
    copies of a 1 MiB chunk, 4.5 MB measured; now of 256 KiB)."""
    monkeypatch.undo()  # the module's own chunk size
    _, index = _indexed(tmp_path / "rare.jsonl", 60_000)  # 5.5 MB
    candidates, _, peak = _traced(lambda: index.lines_with("nowhere"))
    assert list(candidates) == list(range(60_000 - 4, 60_000))  # the tail: whole turns
    assert peak < 2_000_000, peak


def test_two_searches_at_once_read_the_file_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt's count and `n`'s find ask for the same needle at once: the second waits
    for the first's answer instead of reading the file beside it (twice the memory)."""
    import threading

    from replay.core.index import turn_index

    _, index = _indexed(tmp_path / "uuids.jsonl", SMALL)
    reads: list[str] = []
    second = threading.Event()
    real = turn_index.lines_holding

    def reading(path: str, piece: str) -> object:
        reads.append(piece)
        if len(reads) == 1:
            second.wait(2)  # long enough for the other thread to start reading too
        else:
            second.set()
        return real(path, piece)

    monkeypatch.setattr(turn_index, "lines_holding", reading)
    answers: list[object] = []
    threads = [threading.Thread(target=lambda: answers.append(index.lines_with("m12")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == ["m12"]
    assert answers[0] == answers[1] and answers[0]


def test_a_search_while_the_file_is_still_read_answers_for_the_turns_it_began_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviewer searches while the app still reads the file: turns added meanwhile (the
    loader's thread) are not marked past the end of the search's one byte a turn."""
    from replay.core.index import turn_index
    from replay.core.readers.base import iter_lines

    path = tmp_path / "growing.jsonl"
    _indexed(path, SMALL)  # the file
    builder = GeminiBuilder(str(path))
    index = index_turns(builder, tail=4, cache=4)
    lines = list(iter_lines(open(path, "rb")))  # noqa: SIM115 - read whole, closed by gc
    for line, offset, lineno in lines[:SMALL // 2]:
        builder.feed(line, offset, lineno)
    before = len(index)
    real = turn_index.lines_holding

    def reading(path: str, piece: str) -> object:
        for line, offset, lineno in lines[SMALL // 2:]:  # the loader goes on meanwhile
            builder.feed(line, offset, lineno)
        return real(path, piece)

    monkeypatch.setattr(turn_index, "lines_holding", reading)
    candidates = index.lines_with("e")
    assert candidates is not None and len(index) > before
    assert list(candidates) == sorted(set(candidates)) and candidates[-1] < before
