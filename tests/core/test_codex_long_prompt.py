"""A Codex prompt is written twice (its `response_item` and its `user_message` event): the
two copies are one user turn whatever their order and length. A prompt longer than the
head a turn keeps (`PREVIEW_CHARS`) is compared on its whole text, as a short one is, not
on the head of one copy against the whole of the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay import cli
from replay.core.readers import codex, huge_strings
from replay.core.session import lifted
from replay.core.session.model import Kind
from replay.core.session.text_rules import PREVIEW_CHARS

from .test_codex import assistant, user_event, user_item, write_rollout

SHORT = "rename the module and fix its imports"
LONG = ("rename the module and fix every import of it across the tree; " * 20).strip()
HUGE = "word " * 12_000  # 60 KB: left in its file under the lowered thresholds
ORDERS = {
    "item first": lambda text: [user_item(text), user_event(text)],  # what Codex writes
    "event first": lambda text: [user_event(text), user_item(text)],
}


def _lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huge_strings, "HUGE_LINE_BYTES", 16 << 10)
    monkeypatch.setattr(huge_strings, "WHOLE_BYTES", 32 << 10)
    monkeypatch.setattr(huge_strings, "LIFT_BYTES", 4 << 10)
    monkeypatch.setattr(huge_strings, "_ENABLED", [True])


def _rollout(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    return write_rollout(tmp_path, [
        *records, assistant("Renamed."), user_item("thanks"), user_event("thanks"),
        assistant("ok")])


def _turns(path: Path) -> list[tuple[str, bool]]:
    session = codex.read(path)[0]
    return [(turn.role, turn.is_meta) for turn in session.turns]


def _scan_turns(path: Path, capsys: pytest.CaptureFixture[str]) -> int:
    assert cli.main(["scan", "--json", "--no-cache", str(path)]) == 0
    return sum(json.loads(line)["turns"] for line in capsys.readouterr().out.splitlines())


EXPECTED = [("user", False), ("assistant", False), ("user", False), ("assistant", False)]


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("prompt", [SHORT, LONG], ids=["short", "long"])
def test_a_prompt_written_twice_is_one_user_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, order: str, prompt: str) -> None:
    monkeypatch.setattr(huge_strings, "_ENABLED", [False])  # held in memory
    assert (len(prompt) > PREVIEW_CHARS) == (prompt is LONG)
    path = _rollout(tmp_path, ORDERS[order](prompt))
    assert _turns(path) == EXPECTED
    assert _scan_turns(path, capsys) == len(EXPECTED)
    session = codex.read(path)[0]
    first = session.turns[0]
    assert first.source is not None and len(first.source.spans) == 2
    whole = [part.text for part in session.full_parts(first) if part.kind == Kind.TEXT]
    assert whole == [prompt]


@pytest.mark.parametrize("order", list(ORDERS))
def test_a_prompt_left_in_its_file_written_twice_is_one_user_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    path = _rollout(tmp_path, ORDERS[order](HUGE))
    before = len(lifted._TEXTS)
    _lowered(monkeypatch)
    assert _turns(path) == EXPECTED
    assert len(lifted._TEXTS) > before, "no text was left in its file"
    assert _scan_turns(path, capsys) == len(EXPECTED)
    session = codex.read(path)[0]
    whole = [part.text for part in session.full_parts(session.turns[0])
             if part.kind == Kind.TEXT]
    assert whole == [HUGE]


@pytest.mark.parametrize("order", list(ORDERS))
def test_a_long_prompt_is_judged_as_a_short_one(tmp_path: Path, order: str) -> None:
    """Two copies that differ only past the head are two texts, as two short ones would be
    (the head of one copy found in the other is no proof)."""
    shapes = []
    for head in ("", LONG):
        folder = tmp_path / str(len(head))
        folder.mkdir()
        first = ORDERS[order](head + " A")[0]
        second = ORDERS[order](head + " B")[1]
        shapes.append(_turns(_rollout(folder, [first, second])))
    assert shapes[0] == shapes[1]
    assert shapes[0] != EXPECTED


def test_whole_prompts_held_are_few(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prompts that never get their event (a rollout of items only) are not all kept
    whole: the latest `HELD_PROMPTS`, within `HELD_CHARS`, the latest one always."""
    builder = codex.CodexBuilder(str(tmp_path / "rollout.jsonl"))
    held = []
    for number in range(40):
        record = json.dumps(user_item(f"{number} {LONG}")).encode()
        builder.feed(record, 0, number + 1)
        held.append(len(builder._prompts))
    assert max(held) == codex.HELD_PROMPTS
    monkeypatch.setattr(codex, "HELD_CHARS", 3 * len(LONG))
    builder.feed(json.dumps(user_item(HUGE)).encode(), 0, 41)
    assert list(builder._prompts.values()) == [HUGE]
    builder.feed(json.dumps(user_event(HUGE)).encode(), 0, 42)
    assert not builder._prompts
    builder.finish()
    last = builder.session.turns[-1]
    assert last.role == "user" and last.source is not None and len(last.source.spans) == 2
