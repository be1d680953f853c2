"""An opencode run is scanned through a window of turns (`Reader.scan_feed`): a first pass
finds each message's last event, and a turn is judged and let go once no later line can
change it. The report is exactly the whole scan's, late events of old messages included, in
memory that does not grow with the turns."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, scan_records, scan_session
from replay.core.corpus.tasks import SessionTask, scan_task
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers import load_sessions
from replay.core.readers.opencode_run import READER, late_events, scan_feed
from replay.core.suggest import default_suggester
from tests.conftest import SAMPLES
from tests.core.test_turn_index_formats import _event, awkward_run

RULES = {
    "default": DEFAULT_RULES,
    "tool-only": DEFAULT_RULES.with_options(tool_only_is_empty=True),
    "missing-replies": DEFAULT_RULES.with_options(missing_replies=True),
}


def _write(path: Path, events: list[Any], end: str = "\n") -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + end
                            for e in events), encoding="utf-8")
    return path


def _late_run(steps: int, seed: int,
              late_at: tuple[int, ...] = (1, 3, 40, 45, 120, 400, 700)) -> list[Any]:
    """Steps of every shape (empty ones, tool calls, errors), with late events of old
    messages: `late_at` steps back (within the look-ahead, past it, past the look-back), a
    late text making an empty step non-empty, a late tool event replacing a call's part, a
    late `step_finish` completing an old step, and the first message's last word at the very
    end of the file."""
    rng = random.Random(seed)
    events: list[Any] = []
    number = 0

    def add(kind: str, message: str | None, **part: Any) -> None:
        nonlocal number
        number += 1
        events.append(_event(kind, message, number, **part))

    for step in range(steps):
        message = f"msg_{step:05d}"
        add("step-start", message)
        pick = rng.random()
        if pick < 0.3:
            pass  # an empty step (maybe given a text later)
        elif pick < 0.55:
            add("text", message, text=rng.choice(["done", "[/] [link=x] list[int]", "\u202e é"]))
        elif pick < 0.75:
            tool = {"callID": f"call_{step}", "tool": "bash"}
            add("tool", message, **tool, state={"status": "running", "input": {"cmd": "ls"}})
            add("tool", message, **tool, state={"status": "completed", "input": {"cmd": "ls"},
                                                "output": f"file{step}\n"})
        elif pick < 0.85:
            add("reasoning", message, text="thinking " * rng.randint(1, 40))
        elif pick < 0.9:
            events.append({"type": "error", "timestamp": 1_700_000_000_000 + number,
                           "sessionID": "ses_x",
                           "error": {"name": "APIError", "data": {"message": "overloaded"}}})
        if rng.random() < 0.8:
            add("step-finish", message, reason="stop")
        if rng.random() < 0.05:
            events.append({"type": "error", "timestamp": 2, "sessionID": "ses_x",
                           "error": {"name": "ProviderError", "data": {"message": "gone"}}})
        if rng.random() < 0.02:
            add("text", None, text="a part of no message")
        if rng.random() < 0.01:
            events.append({"type": "note", "sessionID": "ses_x"})
        if rng.random() < 0.01:
            events.append(rng.choice(["not json {", "[1, 2]", ""]))
        for back in late_at:
            if step >= back and rng.random() < 0.08:
                old = f"msg_{step - back:05d}"
                kind = rng.choice(["text", "tool", "step-finish", "reasoning"])
                if kind == "text":
                    add("text", old, text=f"a late word, {back} steps on")
                elif kind == "tool":
                    add("tool", old, callID=f"call_{step - back}", tool="bash",
                        state={"status": "completed", "input": {"cmd": "ls"}, "output": "late"})
                elif kind == "step-finish":
                    add("step-finish", old, reason="stop")
                else:
                    add("reasoning", old, text="a late thought")
    add("text", "msg_00000", text="the first step's last word, at the end")
    return events


def _files(tmp_path: Path) -> list[Path]:
    files = [SAMPLES / "dry-run-flag.opencode-run.jsonl", awkward_run(tmp_path / "awkward.jsonl")]
    for seed in range(3):
        files.append(_write(tmp_path / f"late{seed}.jsonl", _late_run(900, seed)))
    # No late event at all; and one whose every message comes back once, far later.
    files.append(_write(tmp_path / "plain.jsonl", _late_run(400, 9, late_at=())))
    echoes = _late_run(300, 4, late_at=())
    echoes += [_event("text", f"msg_{step:05d}", 90_000 + step, text="echo")
               for step in range(0, 300, 3)]
    files.append(_write(tmp_path / "echoes.jsonl", echoes))
    # CR line ends, and a byte-order mark with blank lines between events.
    files.append(_write(tmp_path / "cr.jsonl", _late_run(200, 5), end="\r"))
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + _write(tmp_path / "x.jsonl", _late_run(200, 6),
                                             end="\n\n").read_bytes())
    files.append(bom)
    return files


def _full(report: Any) -> list[Any]:
    return [report.to_json(), report.session.events, report.session.skipped,
            [(e.suggestion_confidence, e.suggestion_reasons, e.suggestion_rule)
             for e in report.empty_turns]]


@pytest.mark.parametrize("rules", list(RULES))
def test_the_windowed_scan_equals_the_whole_scan(tmp_path: Path, rules: str) -> None:
    for path in _files(tmp_path):
        whole = scan_session(load_sessions(path)[0], RULES[rules], default_suggester())
        streamed = scan_records(scan_feed(path), RULES[rules])
        assert _full(streamed) == _full(whole), path.name
        assert whole.to_json()["turns"] > 0


def test_a_window_alone_gets_the_late_files_wrong(tmp_path: Path) -> None:
    """The cases are real: scanned as a plain window (each turn judged once LOOK_AHEAD turns
    follow it and let go LOOK_BACK turns later, as for a builder that only appends), a late
    event changes a turn already judged, or meets one already let go."""
    path = _write(tmp_path / "late.jsonl", _late_run(900, 0, late_at=(45, 120, 400)))
    whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
    feed = scan_feed(path)
    feed.builder._late = None  # type: ignore[attr-defined]  # (as if no first pass)
    feed.builder.settled = None  # type: ignore[attr-defined]
    assert scan_records(feed).to_json() != whole.to_json()
    feed = scan_feed(_write(tmp_path / "far.jsonl", _late_run(2500, 0, late_at=(1200,))))
    feed.builder._late = None  # type: ignore[attr-defined]
    feed.builder.settled = None  # type: ignore[attr-defined]
    with pytest.raises(IndexError):
        scan_records(feed)


def test_scan_task_scans_a_run_through_the_window(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "late.jsonl", _late_run(300, 1))
    fed: list[int] = []
    scan = scan_module.scan_records

    def watched(feed: Any, *args: Any, **kwargs: Any) -> Any:
        fed.append(1)
        return scan(feed, *args, **kwargs)

    monkeypatch.setattr("replay.core.corpus.tasks.scan_records", watched)
    [report] = scan_task(SessionTask(str(path))).reports
    assert fed == [1]
    whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
    assert report == whole.to_json()
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [r["warnings"] for r in scan_task(SessionTask(str(empty))).reports] == [
        ["the file is empty: 0 turns read"]]
    assert READER.scan_feed is scan_feed


def test_the_window_stays_bounded_when_old_messages_come_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Late events up to 45 steps back (past the look-back): the window holds a turn while
    # its message may still change, and no more.
    path = _write(tmp_path / "late.jsonl", _late_run(3000, 2, late_at=(1, 3, 40, 45))[:-1])
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    report = scan_records(scan_feed(path))
    assert report.to_json()["turns"] >= 3000
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD + 45) + 64, max(kept)
    # The first message's word at the very end: read when the second message begins, so
    # the window stays as bounded (it held every turn, 3,000), and the report is the same.
    kept.clear()
    path = _write(tmp_path / "last.jsonl", _late_run(3000, 2, late_at=(1, 3, 40, 45)))
    report = scan_records(scan_feed(path))
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 64, max(kept)
    whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
    assert report.to_json() == whole.to_json()


def _big_run(path: Path, steps: int, last_word: bool = False) -> Path:
    """Steps of a start, a text (three in four) and a finish, a late reasoning for the step
    before last every tenth; with `last_word`, the first step's last event at the end."""
    with open(path, "w", encoding="utf-8") as handle:
        for step in range(steps):
            message = f"msg_{step:06d}"
            parts: list[tuple[str, dict[str, Any]]] = [("step-start", {})]
            if step % 4:
                parts.append(("text", {"text": f"step {step} " + "word " * 20}))
            parts.append(("step-finish", {"reason": "stop"}))
            for number, (kind, part) in enumerate(parts):
                handle.write(json.dumps(_event(kind, message, step * 4 + number, **part))
                             + "\n")
            if step % 10 == 9:  # a late word for the step before last
                handle.write(json.dumps(_event("reasoning", f"msg_{step - 2:06d}",
                                               step * 4 + 3, text="late")) + "\n")
        if last_word:
            handle.write(json.dumps(_event("text", "msg_000000", steps * 4,
                                           text="the first step's last word")) + "\n")
    return path


def _peak(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = scan_task(SessionTask(str(path)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.error is None
    return peak


def test_memory_does_not_grow_by_whole_turns(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # What grows with the turns is the first pass's id map (let go before the second pass)
    # and the packed reports: 15 bytes a turn measured; holding every turn whole (the scan
    # before) cost 1,500. (Reads of 256 KB: buffers of 4 MB are not full on files this small.)
    monkeypatch.setattr("replay.core.readers.base.CHUNK_BYTES", 256 << 10)
    small, big = _big_run(tmp_path / "small.jsonl", 2000), _big_run(tmp_path / "big.jsonl", 8000)
    per_turn = (_peak(big) - _peak(small)) / 6000
    assert per_turn < 300, per_turn


def test_a_first_message_s_last_word_at_the_end_holds_no_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first message's last event at the very end of the run: it is read (by its offset)
    when the second message begins, so no turn waits for it. Every turn was held until then
    (about 1,500 bytes a turn, 1.9x the file at 50 MB); now as without it."""
    monkeypatch.setattr("replay.core.readers.base.CHUNK_BYTES", 256 << 10)
    small = _big_run(tmp_path / "small.jsonl", 2000, last_word=True)
    big = _big_run(tmp_path / "big.jsonl", 8000, last_word=True)
    per_turn = (_peak(big) - _peak(small)) / 6000
    assert per_turn < 300, per_turn
    for path in (small, big):
        whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
        assert scan_task(SessionTask(str(path))).reports == [whole.to_json()]
        assert whole.session.turns[0].parts[-1].text == "the first step's last word"


def test_both_passes_read_into_one_buffer(tmp_path: Path) -> None:
    """What a scan of a 24 MB run peaks at, fixed cost included: the passes read each event
    as a view into one 4 MB buffer (as a Claude Code scan does), not as a chunk joined to the
    last one's tail and split into bytes objects: 23.0 MB measured before, 9.9 now (a 25 MB
    run scanned at 2.0x the file, now 1.3x)."""
    path = _big_run(tmp_path / "run.jsonl", 40_000)
    assert path.stat().st_size > 20_000_000
    assert _peak(path) < 14_000_000


def test_a_file_changed_between_the_passes_is_one_error(tmp_path: Path) -> None:
    """A late event read by its offset from a file rewritten since the first pass: one
    "could not be read" line for the file, never a report mixing the two."""
    path = _big_run(tmp_path / "run.jsonl", 50, last_word=True)
    feed = scan_feed(path)
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(ValueError, match="file changed while it was read"):
        scan_records(feed)


def test_the_second_pass_reads_what_the_first_saw(tmp_path: Path) -> None:
    """A run still being written: lines added after the first pass are not read (the
    report is the one of the file as the first pass saw it, never a mix)."""
    path = _write(tmp_path / "growing.jsonl", _late_run(200, 3))
    whole = scan_session(load_sessions(path)[0], DEFAULT_RULES, default_suggester())
    feed = scan_feed(path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(_event("text", "msg_00001", 99_999, text="later")) + "\n")
        handle.write(json.dumps(_event("text", "msg_new", 99_998, text="new")) + "\n")
    assert scan_records(feed).to_json() == whole.to_json()


def test_late_events_are_those_after_a_newer_message_began() -> None:
    lines = [json.dumps(e).encode() for e in (
        _event("step-start", "a", 1), _event("text", "a", 2, text="w"),
        _event("text", "b", 3, text="x"), _event("text", "a", 4, text="y"),
        _event("text", None, 5, text="z"), _event("text", "b", 6, text="v"),
        _event("text", "b", 7, text="u"))]
    lines += [b"not json", b'{"type": "error", "error": {}}', json.dumps(
        {"type": "text", "sessionID": "s", "part": "no object"}).encode()]
    late = late_events("run.jsonl", ((line, 100 * number, number)
                                     for number, line in enumerate(lines, start=1)))
    marked = [number for number in range(1, 11) if late.lines[number >> 3] & (1 << (number & 7))]
    assert marked == [4, 6, 7]
    assert late.by_message == {"a": [(400, len(lines[3]), 4)],
                               "b": [(600, len(lines[5]), 6), (700, len(lines[6]), 7)]}
