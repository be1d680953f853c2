"""Agent trajectories (mini-swe-agent, SWE-agent `.traj`): read as a run of model steps on
one task, never as a chat in which command output is a person speaking."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import ReaderError, detect_reader, load_sessions
from replay.core.readers.raw import raw_record_text
from replay.core.session.model import Kind
from tests.conftest import SAMPLES

MINI = SAMPLES / "paginate-fix.mini-swe-agent.traj.json"
SWE = SAMPLES / "cache-expiry.swe-agent.traj"


def _document(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize(("path", "name"), [(MINI, "mini-swe-agent"), (SWE, "swe-agent")])
def test_detected_by_content_whatever_the_file_name(tmp_path: Path, path: Path,
                                                    name: str) -> None:
    assert detect_reader(path).name == name
    renamed = tmp_path / "run.json"
    renamed.write_bytes(path.read_bytes())
    assert detect_reader(renamed).name == name


def test_a_large_mini_trajectory_is_detected_from_its_head_or_its_end(tmp_path: Path) -> None:
    document = _document(MINI)
    document["messages"][1]["content"] += "\n" + "log line\n" * 20_000
    del document["info"]["mini_version"]
    del document["info"]["config"]
    path = _write(tmp_path, "big.json", document)
    assert path.stat().st_size > 100_000
    assert detect_reader(path).name == "mini-swe-agent"


def test_mini_turns_the_task_is_the_only_user_turn_and_outputs_are_tool_output() -> None:
    (session,) = load_sessions(MINI)
    roles = [(t.id, t.role) for t in session.turns]
    assert roles == [("m0", "system"), ("m1", "user"), ("m2", "assistant"), ("m4", "assistant"),
                     ("m6", "assistant"), ("m8", "assistant"), ("m9", "system"),
                     ("m10", "assistant"), ("m12", "assistant"), ("m14", "assistant"),
                     ("info", "system")]
    assert [t.role for t in session.turns].count("user") == 1
    first_step = session.turns[2]
    (call,) = [p for p in first_step.parts if p.kind == Kind.TOOL_CALL]
    assert call.name == "bash" and call.input.startswith("grep -rn")
    assert call.output is not None and "paging.py:1:def page" in call.output
    submit = session.turns[9]
    (call,) = [p for p in submit.parts if p.kind == Kind.TOOL_CALL]
    assert call.input.startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert call.output == ""  # the empty output is the command's, not a silent person
    assert session.turns[6].is_meta  # the harness's format-error reply


def test_mini_empty_turns_and_their_evidence() -> None:
    (session,) = load_sessions(MINI)
    found = [(e.id, e.role, e.reason) for e in find_empty_turns(session)]
    assert found == [("m8", "assistant", "blank-text")]
    assert session.meta["exit_status"] == "Submitted"
    info = session.turns[-1]
    assert [p.kind for p in info.parts] == [Kind.TEXT, Kind.PATCH]
    assert info.parts[0].text == "exit status: Submitted"
    assert "start = (number - 1) * size" in info.parts[1].text


def test_mini_as_generic_chat_would_have_shown_command_output_as_user_turns() -> None:
    (chat,) = load_sessions(MINI, format="chat-json")
    assert [t.role for t in chat.turns].count("user") > 5  # what this reader avoids


def test_swe_agent_steps_task_and_empty_last_step_with_run_end_evidence() -> None:
    (session,) = load_sessions(SWE)
    assert [(t.id, t.role) for t in session.turns] == [
        ("history-0", "system"), ("history-2", "user"), ("step-0", "assistant"),
        ("step-1", "assistant"), ("step-2", "assistant"), ("step-3", "assistant"),
        ("step-4", "assistant"), ("info", "system")]
    assert "TTLCache.get returns values" in session.turns[1].parts[0].text  # not the demo
    assert session.title is not None and session.title.startswith("TTLCache.get returns")
    step = session.turns[4]
    (call,) = [p for p in step.parts if p.kind == Kind.TOOL_CALL]
    assert call.name == "edit" and "File updated" in (call.output or "")
    assert call.duration is not None
    (empty,) = find_empty_turns(session)
    assert (empty.id, empty.reason) == ("step-4", "blank-text")
    assert empty.evidence == ["run ended: exit_cost", "no submission"]


def test_run_end_evidence_only_for_an_empty_turn_with_no_step_after_it() -> None:
    (session,) = load_sessions(MINI)
    (empty,) = find_empty_turns(session)
    assert not any(e.startswith("run ended") for e in empty.evidence)


@pytest.mark.parametrize(("path", "index", "key"), [(MINI, 5, '"content": ""'),
                                                     (SWE, 6, '"action": ""')])
def test_raw_record_of_a_turn_is_its_json(path: Path, index: int, key: str) -> None:
    (session,) = load_sessions(path)
    text = raw_record_text(session.turns[index])
    assert key in text and str(path) in text.splitlines()[0]


@pytest.mark.parametrize("path", [MINI, SWE])
def test_text_around_the_document_is_skipped_with_a_warning(tmp_path: Path, path: Path) -> None:
    target = tmp_path / path.name
    target.write_bytes(b"$ mini -t task -o run.json\nsaved.\n" + path.read_bytes() + b"$ \n")
    (session,) = load_sessions(target)
    (plain,) = load_sessions(path)
    assert [t.id for t in session.turns] == [t.id for t in plain.turns]
    assert len(session.warnings) == 2


def test_wrong_shapes_are_one_line_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.json", {"trajectory_format": "mini-swe-agent-1", "messages": 3})
    with pytest.raises(ReaderError) as caught:
        load_sessions(path, format="mini-swe-agent")
    assert "\n" not in str(caught.value)
    path = _write(tmp_path, "y.traj", {"trajectory": {}, "info": {}})
    with pytest.raises(ReaderError):
        load_sessions(path, format="swe-agent")


_WRONG = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                        st.integers(), max_size=2))


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_nodes(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_nodes(child, (*path, index)))
    return found


def _mutate(document: Any, where: tuple[Any, ...], new: Any) -> Any:
    if not where:
        return new
    result = copy.deepcopy(document)
    holder = result
    for step in where[:-1]:
        holder = holder[step]
    holder[where[-1]] = new
    return result


@pytest.mark.parametrize(("path", "name"), [(MINI, "mini-swe-agent"), (SWE, "swe-agent")])
@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_trajectories_never_raise(tmp_path: Path, path: Path, name: str,
                                          data: st.DataObject) -> None:
    document = _document(path)
    for _ in range(data.draw(st.integers(1, 3))):
        nodes = _nodes(document)
        where = data.draw(st.sampled_from(nodes))
        document = _mutate(document, where, data.draw(_WRONG))
    target = _write(tmp_path, "mutated.json", document)
    for read in (lambda: load_sessions(target, format=name), lambda: load_sessions(target)):
        try:
            sessions = read()
        except ReaderError as error:
            assert "\n" not in str(error)
            continue
        for session in sessions:
            find_empty_turns(session)
            for turn in session.turns:
                raw_record_text(turn)


@pytest.mark.parametrize("role", [["system"], {"a": 1}, [None]])
def test_swe_agent_history_role_of_a_wrong_type_is_skipped_not_the_whole_file(
        tmp_path: Path, role: object) -> None:
    """An unhashable `role` in the history (a list, an object) was `unhashable type` and
    made the whole trajectory unreadable: the scan said "could not be read", and the app's
    indexed read (`read_entry`) was a TypeError traceback. Found by tools/fuzz_mutants.py."""
    from replay.core.corpus.tasks import plan
    from replay.core.readers import read_entry

    document = _document(SWE)
    document["history"][0]["role"] = role
    path = _write(tmp_path, "run.traj", document)
    whole = load_sessions(path)[0]
    assert len(whole.turns) == len(load_sessions(SWE)[0].turns) - 1  # only the system prompt
    entry = next(task.entry for task in plan(tmp_path) if task.entry is not None)
    indexed = read_entry(detect_reader(path), entry, indexed=True)
    assert [turn.id for turn in indexed.turns] == [turn.id for turn in whole.turns]
