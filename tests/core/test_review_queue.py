"""The review queue model: sessions under paths, filters, stratified sampling, moves, position."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from replay.core.annotate.annotations import AnnotationStore
from replay.core.annotate.queue_position import (
    QueueDefinition,
    QueuePosition,
    load_position,
    position_file,
    save_position,
)
from replay.core.annotate.queue_sources import iter_sessions, read_ref
from replay.core.annotate.review_queue import (
    QueueEntry,
    QueueFilters,
    QueueSession,
    ReviewQueue,
    allocate,
    build_queue,
    index_corpus,
    load_annotated,
    resolve_position,
    sample_entries,
)
from replay.core.suggest import default_suggester
from tests.conftest import SAMPLES, realdata
from tests.ui.sessions import write_chat


def corpus(tmp_path: Path) -> Path:
    """Three chat sessions with 2, 1 and 2 empty turns."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    write_chat(folder / "a.json", empty_at=(9, 20), title="alpha")
    write_chat(folder / "b.json", empty_at=(5,), title="beta")
    write_chat(folder / "c.json", empty_at=(3, 12), title="gamma")
    return folder


def test_every_session_is_read_once_and_can_be_read_again(tmp_path: Path) -> None:
    paths = [SAMPLES, realdata("opencode"), SAMPLES / "torch-revert.opencode.json"]
    seen = list(iter_sessions(paths))
    names = [ref.name for ref, _session in seen]
    assert len(names) == len(set(names)), "a session given twice comes once"
    # One session per sample file, six opencode exports; torch-revert given twice counts once.
    samples = [p for p in SAMPLES.iterdir() if p.name != "README.md"]
    assert len(seen) == len(samples) + 6
    for ref, session in seen:
        again = read_ref(ref)
        assert (again.label, len(again.turns), again.format) == \
            (session.label, len(session.turns), session.format)


def test_unreadable_paths_are_reported_and_the_rest_read(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("not a transcript\n")
    problems = []
    seen = list(iter_sessions([junk, corpus(tmp_path)], problem=problems.append))
    assert len(seen) == 3
    assert len(problems) == 1 and problems[0].fatal and "junk.txt" in problems[0].message


def test_queue_orders_session_by_session_and_filters(tmp_path: Path) -> None:
    indexed = list(index_corpus([corpus(tmp_path)], suggester=default_suggester()))
    queue = build_queue(indexed, QueueFilters())
    assert [(queue.sessions[e.session].label, e.number) for e in queue.entries] == [
        ("alpha", 10), ("alpha", 21), ("beta", 6), ("gamma", 4), ("gamma", 13)]
    only_formats = build_queue(indexed, QueueFilters(format="codex"))
    assert len(only_formats) == 0 and only_formats.sessions == []
    reasons = {entry.reason for entry in queue.entries}
    one = sorted(reasons)[0]
    narrowed = build_queue(indexed, QueueFilters(reasons=frozenset({one})))
    assert narrowed.entries and {e.reason for e in narrowed.entries} == {one}
    suggestion = next(e.suggestion for e in queue.entries if e.suggestion)
    by_suggestion = build_queue(indexed, QueueFilters(suggestion=suggestion))
    assert by_suggestion.entries
    assert all(e.suggestion == suggestion for e in by_suggestion.entries)
    # Sessions are renumbered: a session with no entry left is not in the queue.
    assert [e.session for e in by_suggestion.entries] == sorted(
        e.session for e in by_suggestion.entries)
    assert max(e.session for e in by_suggestion.entries) == len(by_suggestion.sessions) - 1


def _session(name: str, format: str = "chat-json") -> QueueSession:
    from replay.core.annotate.queue_sources import SessionRef

    return QueueSession(SessionRef(f"/x/{name}", format, "#0"), name, format, name,
                        f"/j/{name}", 40)


def _queue(layout: dict[str, list[int]]) -> ReviewQueue:
    indexed = [(_session(name), [QueueEntry(0, i, f"{name}-{i}", "user", "blank-text")
                                 for i in indices])
               for name, indices in layout.items()]
    return build_queue(indexed, QueueFilters())


def test_moves_cross_session_boundaries() -> None:
    queue = _queue({"a": [3, 9], "b": [5], "c": [1, 30]})
    assert queue.next_after(0, 9) == 2          # last of a -> first of b
    assert queue.next_after(0, 4) == 1          # within a
    assert queue.next_after(2, 30) is None      # end of the queue
    assert queue.previous_before(1, 5) == 1     # first of b -> last of a
    assert queue.previous_before(0, 3) is None
    assert queue.position_of(2, 30) == 4 and queue.position_of(2, 29) is None
    assert queue.last_at_or_before(1, 20) == 2
    assert queue.entries_of(2) == range(3, 5) and queue.entries_of(7) == range(5, 5)
    done = {"a-3", "b-5"}
    assert queue.next_unannotated(0, lambda e: e.turn_id in done) == 1
    assert queue.next_unannotated(1, lambda e: e.turn_id in done) == 3
    assert queue.next_unannotated(4, lambda e: e.turn_id in done) == 1  # wraps round
    assert queue.next_unannotated(0, lambda e: True) is None


def test_allocation_is_proportional_with_every_stratum_kept() -> None:
    sizes = {("a", "x"): 80, ("a", "y"): 15, ("b", "x"): 4, ("b", "z"): 1}
    counts = allocate(sizes, 20)
    assert sum(counts.values()) == 20
    assert all(counts[key] >= 1 for key in sizes)
    assert counts[("a", "x")] == 15 and counts[("a", "y")] == 3
    assert allocate(sizes, 200) == sizes
    small = allocate(sizes, 2)
    assert sum(small.values()) == 2 and small[("a", "x")] >= 1
    assert all(0 <= small[key] <= sizes[key] for key in sizes)


def _population() -> list[tuple[QueueSession, QueueEntry]]:
    candidates = []
    for number in range(30):
        session = _session(f"s{number:02d}", "codex" if number % 3 == 0 else "opencode")
        for index in range(number % 5 + 1):
            reason = ("aborted", "blank-text", "no-content")[(number + index) % 3]
            candidates.append((session, QueueEntry(0, index, f"t{index}", "user", reason)))
    return candidates


def test_sample_is_reproducible_stratified_and_independent_of_order() -> None:
    candidates = _population()
    first = sample_entries(candidates, 25, seed=7)
    again = sample_entries(candidates, 25, seed=7)
    assert first == again and len(first) == 25
    other = sample_entries(candidates, 25, seed=8)
    assert other != first, "another seed draws other turns"
    reversed_draw = sample_entries(list(reversed(candidates)), 25, seed=7)
    assert {(s.identity, e.turn_id) for s, e in reversed_draw} == \
        {(s.identity, e.turn_id) for s, e in first}
    strata = Counter((s.format, e.reason) for s, e in candidates)
    drawn = Counter((s.format, e.reason) for s, e in first)
    assert set(drawn) == set(strata), "every format and reason is in the sample"
    for key, size in strata.items():
        assert abs(drawn[key] - 25 * size / len(candidates)) <= 1.5
    # The sample keeps the queue's order.
    positions = [candidates.index(item) for item in first]
    assert positions == sorted(positions)
    assert sample_entries(candidates, 10_000, seed=1) == candidates


def test_position_round_trip_and_key(tmp_path: Path) -> None:
    definition = QueueDefinition.of([tmp_path], sample=10, seed=3, reviewer="ada")
    assert load_position(definition) is None
    assert save_position(definition, QueuePosition("/x/b::#0", "b-5", 2)) is None
    assert load_position(definition) == QueuePosition("/x/b::#0", "b-5", 2)
    others = [QueueDefinition.of([tmp_path], sample=10, seed=4, reviewer="ada"),
              QueueDefinition.of([tmp_path], sample=10, seed=3, reviewer="bo"),
              QueueDefinition.of([tmp_path], reviewer="ada")]
    assert all(load_position(other) is None for other in others)
    assert QueueDefinition.of([tmp_path / "." ], sample=10, seed=3, reviewer="ada").key == \
        definition.key
    position_file(definition).write_text("{broken")
    assert load_position(definition) is None


def test_position_resolves_to_the_same_turn_or_the_same_place() -> None:
    queue = _queue({"a": [3, 9], "b": [5], "c": [1, 30]})
    assert resolve_position(queue, "/x/c::#0", "c-1", 0) == 3
    assert resolve_position(queue, "/x/c::#0", "gone", 4) == 4
    assert resolve_position(queue, "/x/zzz::#0", "gone", 99) == 4
    assert resolve_position(_queue({}), "/x/a::#0", "a-3", 0) is None


def test_annotated_turns_come_from_each_sessions_journal(tmp_path: Path) -> None:
    indexed = list(index_corpus([corpus(tmp_path)]))
    queue = build_queue(indexed, QueueFilters())
    sessions = {ref.name: session for ref, session in iter_sessions([tmp_path / "corpus"])}
    beta = next(s for s in sessions.values() if s.label == "beta")
    store = AnnotationStore.for_session(beta, "ada")
    store.commit("m005", 5, "continue")
    AnnotationStore.for_session(beta, "bo").commit("m005", 5, "other")
    annotated, problems = load_annotated(queue, "ada")
    assert problems == []
    assert annotated == {0: set(), 1: {"m005"}, 2: set()}
    journal = Path(queue.sessions[1].journal)
    assert [json.loads(line)["session_id"] for line in journal.read_text().splitlines()] == \
        [queue.sessions[1].identity] * 2


def test_negative_sample_is_refused() -> None:
    with pytest.raises(ValueError):
        sample_entries(_population(), -1, seed=0)
