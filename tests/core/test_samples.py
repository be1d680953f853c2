"""The bundled sample sessions load cleanly and hold exactly the empty turns planted in them."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import detect_reader, load_sessions
from replay.resources import DEFAULT_SAMPLE, default_sample
from tests.conftest import REPO, SAMPLES

GENERATOR = REPO / "tools" / "make_samples.py"


@dataclass(frozen=True)
class Sample:
    """What a sample file is meant to be."""

    name: str
    format: str
    turns: int
    empty: tuple[tuple[int, str, str, str], ...]
    """(index, id, role, reason) of every empty turn."""


SAMPLE_FILES = (
    Sample("torch-revert.opencode.json", "opencode", 46, (
        (33, "msg_db059d733001ifijjwIfWSmK3U", "user", "empty-wrapper"),
    )),
    Sample("hidden-state.opencode.json", "opencode", 24, (
        (1, "msg_c510a5031001GNMekNgCVfZaBD", "user", "no-content"),
        (10, "msg_c511230a3001G7vVhw5Mi5clSE", "user", "empty-wrapper"),
    )),
    Sample("deploy-pivot.opencode.json", "opencode", 24, (
        (13, "msg_de98a684000172fPohsPymOnyH", "assistant", "markers-only"),
        (14, "msg_de98ade3c001krSb8CZXtFJfHz", "user", "empty-wrapper"),
    )),
    Sample("refactor.claude-code.jsonl", "claude-code", 35, (
        (19, "0ab8ffad-1c40-47c3-ad04-7e64adf7aa65", "user", "empty-wrapper"),
        (25, "msg_01jrwmavW2mGvrmSNdv2Wpu8", "assistant", "reasoning-only"),
    )),
    Sample("flaky-test.codex.jsonl", "codex", 17, (
        (11, "line-64", "assistant", "aborted"),
    )),
    Sample("support-bot.chat.json", "chat-json", 16, (
        (10, "m15", "assistant", "blank-text"),
    )),
    Sample("paginate-fix.mini-swe-agent.traj.json", "mini-swe-agent", 11, (
        (5, "m8", "assistant", "blank-text"),
    )),
    Sample("cache-expiry.swe-agent.traj", "swe-agent", 8, (
        (6, "step-4", "assistant", "blank-text"),
    )),
    Sample("dry-run-flag.opencode-run.jsonl", "opencode-run", 4, (
        (3, "msg_1398974b2001o8K2tRw49kKgNA", "assistant", "markers-only"),
    )),
)

OPENCODE = [sample.name for sample in SAMPLE_FILES if sample.format == "opencode"]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _export(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


def test_every_file_in_the_folder_is_a_known_sample() -> None:
    on_disk = {path.name for path in SAMPLES.iterdir()}
    assert on_disk == {sample.name for sample in SAMPLE_FILES} | {"README.md"}


def test_default_sample_is_the_torch_revert_excerpt() -> None:
    assert DEFAULT_SAMPLE == "torch-revert.opencode.json"
    assert default_sample() == SAMPLES / DEFAULT_SAMPLE
    assert default_sample().is_file()


@pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda sample: sample.name)
def test_sample_loads_without_skips_in_its_format(sample: Sample) -> None:
    path = SAMPLES / sample.name
    assert detect_reader(path).name == sample.format
    sessions = load_sessions(path)
    assert len(sessions) == 1
    session = sessions[0]
    assert session.format == sample.format
    assert session.skipped == 0, session.warnings
    assert session.warnings == []
    assert len(session.turns) == sample.turns


@pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda sample: sample.name)
def test_empty_turns_are_exactly_the_planted_ones(sample: Sample) -> None:
    session = load_sessions(SAMPLES / sample.name)[0]
    found = tuple((empty.index, empty.id, empty.role, empty.reason)
                  for empty in find_empty_turns(session))
    assert found == sample.empty


@pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda sample: sample.name)
def test_sample_stays_small(sample: Sample) -> None:
    assert (SAMPLES / sample.name).stat().st_size < 400_000


def test_generator_rewrites_identical_files(tmp_path: Path) -> None:
    written = _generator().write_all(tmp_path)
    assert sorted(path.name for path in written) == sorted(s.name for s in SAMPLE_FILES)
    for path in written:
        assert path.read_bytes() == (SAMPLES / path.name).read_bytes(), (
            f"{path.name} differs from the generator's output: run tools/make_samples.py")


@pytest.mark.parametrize("name", OPENCODE)
def test_opencode_ids_sort_by_time(name: str) -> None:
    messages = _export(name)["messages"]
    ids = [message["info"]["id"] for message in messages]
    created = [message["info"]["time"]["created"] for message in messages]
    assert ids == sorted(ids)
    assert created == sorted(created)
    for message in messages:
        part_ids = [part["id"] for part in message["parts"]]
        assert part_ids == sorted(part_ids)
        assert all(part["messageID"] == message["info"]["id"] for part in message["parts"])


def test_torch_revert_pivot_sequence() -> None:
    messages = _export("torch-revert.opencode.json")["messages"]
    empty, summary, go = messages[33], messages[34], messages[35]
    wrapper = "<conversation_data>\n\n</conversation_data>"
    assert [part["text"] for part in empty["parts"]] == [wrapper]
    plan_done = messages[32]["info"]["time"]["completed"]
    assert round((empty["info"]["time"]["created"] - plan_done) / 1000) == 38
    summary_text = next(part["text"] for part in summary["parts"] if part["type"] == "text")
    assert summary_text.startswith("## Goal")
    for heading in ("## Constraints", "## Progress", "## Next Steps", "## Relevant Files"):
        assert heading in summary_text
    assert len(summary_text.split()) > 800
    assert [part["text"] for part in go["parts"]] == ["continue"]


def test_deploy_pivot_repeats_the_order_after_the_silences() -> None:
    messages = _export("deploy-pivot.opencode.json")["messages"]
    cut, silent, handoff, repeat = messages[13:17]
    assert [part["type"] for part in cut["parts"]] == ["step-start"]
    assert "completed" not in cut["info"]["time"]
    assert silent["info"]["role"] == "user"
    assert handoff["info"]["role"] == "assistant"
    repeated = repeat["parts"][0]["text"]
    assert "z-lab" in repeated and "16" in repeated


def test_chat_sample_has_a_null_content_tool_call_and_one_blank_reply() -> None:
    messages = _export("support-bot.chat.json")["messages"]
    assert len(messages) == 22
    blank = [index for index, message in enumerate(messages)
             if message["role"] == "assistant" and message["content"] == ""]
    assert blank == [15]
    assert "tool_calls" not in messages[15]
    with_calls = [message for message in messages if message.get("tool_calls")]
    assert all(message["content"] is None for message in with_calls)
    assert len(with_calls) == 5


def test_the_samples_readme_names_each_empty_turn_by_its_app_number() -> None:
    """`#N` in sample_sessions/README.md is the turn as the app shows it (index + 1)."""
    import re

    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    named: dict[str, set[tuple[int, str]]] = {}
    for line in text.splitlines():
        found = re.match(r"- `([^`]+)`", line)
        if found:
            named[found.group(1)] = {(int(number), reason) for number, reason in
                                     re.findall(r"#(\d+)[^#`]*?`([a-z-]+)`", line)}
    expected = {sample.name: {(index + 1, reason) for index, _, _, reason in sample.empty}
                for sample in SAMPLE_FILES}
    assert named == expected
