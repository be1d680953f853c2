"""opencode's event stream (`opencode run --format json`): detected by content, one turn per
assistant message, followed line by line."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import find_empty_turns
from replay.core.live.follow import SessionFollower
from replay.core.readers import ReaderError, detect_reader, load_sessions
from replay.core.readers.opencode_run import RunBuilder
from replay.core.readers.raw import raw_record_text
from replay.core.session.model import Kind
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "dry-run-flag.opencode-run.jsonl"


def _events() -> list[dict[str, object]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_detected_by_content_not_as_an_export_or_chat_lines(tmp_path: Path) -> None:
    assert detect_reader(SAMPLE).name == "opencode-run"
    other = tmp_path / "out.json"
    other.write_bytes(SAMPLE.read_bytes())
    assert detect_reader(other).name == "opencode-run"
    assert detect_reader(SAMPLES / "deploy-pivot.opencode.json").name == "opencode"


def test_one_turn_per_message_with_its_parts_in_order() -> None:
    (session,) = load_sessions(SAMPLE)
    assert session.session_id == _events()[0]["sessionID"]
    assert [t.role for t in session.turns] == ["assistant"] * 4
    first, second, third, last = session.turns
    assert [p.kind for p in first.parts] == [Kind.STEP, Kind.TEXT, Kind.TOOL_CALL, Kind.STEP]
    tools = [(p.name, p.status) for p in second.parts if p.kind == Kind.TOOL_CALL]
    assert tools == [("edit", "completed"), ("bash", "error")]
    assert third.completed is not None and third.completed >= (third.time or 0)
    assert [p.kind for p in last.parts] == [Kind.STEP, Kind.STEP]


def test_empty_turn_is_the_last_step_that_showed_nothing() -> None:
    (session,) = load_sessions(SAMPLE)
    (empty,) = find_empty_turns(session)
    assert (empty.index, empty.reason) == (3, "markers-only")
    assert empty.evidence == ["step markers: 2", "last turn of the session"]


def test_raw_record_is_every_event_of_the_message() -> None:
    (session,) = load_sessions(SAMPLE)
    text = raw_record_text(session.turns[0])
    assert text.count('"type": "step_start"') == 1 and text.count('"type": "step_finish"') == 1
    assert '"type": "tool_use"' in text


def test_an_error_event_is_an_error_of_the_turn_it_cut(tmp_path: Path) -> None:
    events = _events()[:1]
    events.append({"type": "error", "timestamp": 1, "sessionID": events[0]["sessionID"],
                   "error": {"name": "APIError", "data": {"message": "overloaded"}}})
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    (session,) = load_sessions(path)
    (turn,) = session.turns
    assert (turn.parts[-1].kind, turn.parts[-1].name) == (Kind.ERROR, "APIError")
    (empty,) = find_empty_turns(session)  # a step start and an error: nothing shown
    assert "error: APIError" in empty.evidence


def test_followed_line_by_line_it_ends_as_read_whole(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    target = tmp_path / "live.jsonl"
    target.write_bytes(b"".join(lines[:3]))
    follower = SessionFollower(target)
    follower.poll()
    for line in lines[3:]:
        with open(target, "ab") as handle:
            handle.write(line)
        follower.poll()
    session = follower.poll(final=True).session
    (whole,) = load_sessions(SAMPLE)
    assert session is not None
    assert [(t.id, [p.kind for p in t.parts]) for t in session.turns] == [
        (t.id, [p.kind for p in t.parts]) for t in whole.turns]


_INTS = st.integers(-(2**63), 2**63 - 1)
_WRONG = st.one_of(st.none(), st.booleans(), _INTS, st.text(max_size=5),
                   st.lists(_INTS, max_size=2), st.builds(dict))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_events_never_raise(tmp_path: Path, data: st.DataObject) -> None:
    events = _events()
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(events) - 1))
        event = events[index]
        holder = event["part"] if isinstance(event.get("part"), dict) and data.draw(
            st.booleans()) else event
        key = data.draw(st.sampled_from(sorted(holder) or ["type"]))
        holder[key] = data.draw(_WRONG)  # type: ignore[index]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    builder = RunBuilder(str(path))
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        builder.feed(line, 0, number)
    try:
        sessions = load_sessions(path)
    except ReaderError:
        return
    for session in sessions:
        find_empty_turns(session)
        for turn in session.turns:
            raw_record_text(turn)


@pytest.mark.parametrize("line", [b"not json", b"[]", b'{"type": "text"}'])
def test_bad_lines_are_counted(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(SAMPLE.read_bytes() + line + b"\n")
    (session,) = load_sessions(path)
    assert len(session.turns) == 4


def test_a_live_step_is_reported_empty_only_once_it_finished(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    target = tmp_path / "live.jsonl"
    target.write_bytes(b"".join(lines[:-1]))  # the last step has started, not finished
    follower = SessionFollower(target)
    assert follower.poll().new_empty == []
    with open(target, "ab") as handle:
        handle.write(lines[-1])
    assert [e.reason for e in follower.poll().new_empty] == ["markers-only"]
