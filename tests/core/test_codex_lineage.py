"""Codex forks and subagent threads: a fork's copied history is counted once (with its
parent), and a subagent thread hangs under the call that spawned it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import find_empty_turns
from replay.core.live.follow import SessionFollower
from replay.core.readers import ReaderError, load_sessions
from replay.core.readers.codex import CodexBuilder
from replay.core.session.model import Kind
from tests.core.test_codex import write_rollout

PARENT = "019a0000-0000-7000-8000-000000000001"
FORK = "019a0000-0000-7000-8000-000000000002"
CHILD = "019a0000-0000-7000-8000-000000000003"


def at(minute: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:{minute:02d}:00.000Z", "type": kind,
            "payload": payload}


def meta(minute: int, own: str, **extra: Any) -> dict[str, Any]:
    return at(minute, "session_meta", {"id": own, "timestamp": f"2026-03-01T10:{minute:02d}"
                                       ":00.000Z", "cwd": "/w", "originator": "codex_cli_rs",
                                       **extra})


def prompt(minute: int, text: str) -> list[dict[str, Any]]:
    return [at(minute, "response_item", {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": text}]}),
            at(minute, "event_msg", {"type": "user_message", "message": text, "images": []})]


def reply(minute: int, text: str) -> dict[str, Any]:
    return at(minute, "response_item", {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": text}]})


def history() -> list[dict[str, Any]]:
    """The parent's conversation: a prompt, an empty reply, a prompt and a reply."""
    return [*prompt(1, "why is CI red?"), reply(2, ""), *prompt(3, "go on"),
            reply(4, "A heap tie-break.")]


def fork_records() -> list[dict[str, Any]]:
    return [meta(30, FORK, forked_from_id=PARENT), meta(1, PARENT), *history(),
            *prompt(31, "now try a fake clock instead"), reply(32, "Done: FakeClock injected.")]


def test_a_fork_shows_only_what_is_new_and_names_its_parent(tmp_path: Path) -> None:
    write_rollout(tmp_path, [meta(1, PARENT), *history()], "rollout-a.jsonl")
    fork = write_rollout(tmp_path, fork_records(), "rollout-b.jsonl")
    (session,) = load_sessions(fork)
    assert session.session_id == FORK
    assert session.meta["forked_from"] == PARENT
    assert session.meta["inherited_records"] == "7"  # the parent's meta line and history
    assert [t.role for t in session.turns] == ["system", "user", "assistant"]
    notice = session.turns[0]
    assert notice.is_meta and PARENT in notice.parts[0].text and "7 earlier records" in \
        notice.parts[0].text
    assert session.turns[1].parts[0].text == "now try a fake clock instead"
    # The parent's empty reply is counted once, in the parent, not again in the fork.
    assert find_empty_turns(session) == []
    (parent,) = load_sessions(tmp_path / "rollout-a.jsonl")
    assert len(find_empty_turns(parent)) == 1


def test_a_fork_followed_line_by_line_reads_as_the_whole(tmp_path: Path) -> None:
    records = fork_records()
    target = write_rollout(tmp_path, records[:1], "rollout-b.jsonl")
    follower = SessionFollower(target)
    follower.poll()
    for record in records[1:]:
        with open(target, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        follower.poll()
    followed = follower.poll(final=True).session
    (whole,) = load_sessions(target)
    assert followed is not None
    assert [(t.role, [p.text for p in t.parts]) for t in followed.turns] == [
        (t.role, [p.text for p in t.parts]) for t in whole.turns]


def spawn_parent() -> list[dict[str, Any]]:
    return [meta(1, PARENT), *prompt(1, "split the work"),
            at(2, "response_item", {"type": "function_call", "name": "spawn_agent",
                                    "arguments": json.dumps({"message": "check the docs"}),
                                    "call_id": "call_spawn"}),
            at(2, "response_item", {"type": "function_call_output", "call_id": "call_spawn",
                                    "output": json.dumps({"agent_id": CHILD})}),
            reply(9, "The docs agent is done.")]


def child_records() -> list[dict[str, Any]]:
    source = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1,
                                             "agent_role": "default"}}}
    return [meta(3, CHILD, source=source), *prompt(3, "check the docs"),
            reply(5, "")]


def test_a_subagent_thread_hangs_under_the_call_that_spawned_it(tmp_path: Path) -> None:
    parent_path = write_rollout(tmp_path, spawn_parent(), "rollout-2026-03-01T10-01-a.jsonl")
    write_rollout(tmp_path, child_records(), "rollout-2026-03-01T10-03-b.jsonl")
    (parent,) = load_sessions(parent_path)
    (child,) = parent.sidechains
    assert (child.session_id, child.parent_call) == (CHILD, "call_spawn")
    assert child.meta["parent_thread"] == PARENT and child.meta["agent_role"] == "default"
    spawning = next(t for t in parent.turns if any(p.call_id == "call_spawn" for p in t.parts))
    assert any(p.kind == Kind.TOOL_CALL for p in spawning.parts)
    assert [e.role for e in find_empty_turns(child)] == ["assistant"]


def test_a_parent_without_spawn_calls_looks_at_no_other_file(tmp_path: Path) -> None:
    parent_path = write_rollout(tmp_path, [meta(1, PARENT), *history()], "rollout-a.jsonl")
    write_rollout(tmp_path, child_records(), "rollout-b.jsonl")
    (parent,) = load_sessions(parent_path)
    assert parent.sidechains == []


_INTS = st.integers(-(2**63), 2**63 - 1)
_WRONG = st.one_of(st.none(), st.booleans(), _INTS, st.text(max_size=8),
                   st.lists(_INTS, max_size=2), st.builds(dict),
                   st.sampled_from([PARENT, "2026-03-01T10:30:00Z", "2026-03-01T09:00:00Z"]))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_lineage_never_raises(tmp_path: Path, data: st.DataObject) -> None:
    records = data.draw(st.sampled_from([fork_records, child_records, spawn_parent]))()
    for _ in range(data.draw(st.integers(1, 4))):
        record = records[data.draw(st.integers(0, len(records) - 1))]
        payload = record.get("payload")
        holder = payload if isinstance(payload, dict) and data.draw(st.booleans()) else record
        key = data.draw(st.sampled_from(sorted(holder) + ["forked_from_id", "source"]))
        holder[key] = data.draw(_WRONG)
    path = write_rollout(tmp_path, records, "rollout-x.jsonl")
    builder = CodexBuilder(str(path))
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        builder.feed(raw, 0, number)
    builder.finish()
    try:
        sessions = load_sessions(path, format="codex")
    except ReaderError:
        return
    for session in sessions:
        find_empty_turns(session)
