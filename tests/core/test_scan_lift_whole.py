"""A text left in its file (`lifted`) is judged on all of it, not on the head its placeholder
holds: the empty turns and suggestions of a scan are those the same text held in memory
gives (`session.whole_text`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from .test_scan_lift import chat_json, claude_code, codex, scanned_both_ways

BLANK = "\n" * 300_000
"""Blank lines past the lowered lifting threshold (and the placeholder's head)."""
PROSE = "word " * 60_000


def _both(path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, object]], str]:
    """(the report of `path` with its texts decoded, the report with them left in the file),
    checking that a text was left in the file."""
    decoded, left = scanned_both_ways(path, capsys, monkeypatch)
    return [json.loads(line) for line in decoded.splitlines()], left


def _empty(report: list[dict[str, object]]) -> list[dict[str, object]]:
    return [turn for session in report for turn in session["empty_turns"]]  # type: ignore[attr-defined]


def test_a_blank_empty_wrapper_left_in_its_file_is_an_empty_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = claude_code(tmp_path, [
        ("user", "fix the tests"), ("assistant", "done"),
        ("user", f"<conversation_data>{BLANK}</conversation_data>"), ("assistant", "ok")])
    decoded, left = _both(path, capsys, monkeypatch)
    assert [json.loads(line) for line in left.splitlines()] == decoded
    empty = _empty(decoded)
    assert [turn["index"] for turn in empty] == [2]
    assert "empty <conversation_data> wrapper" in empty[0]["evidence"]  # type: ignore[operator]


def test_an_interrupt_after_blank_lines_left_in_its_file_is_found(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = claude_code(tmp_path, [
        ("user", "fix the tests"), ("assistant", ""),
        ("user", BLANK + "[Request interrupted by user]"), ("user", "go on then"),
        ("assistant", "ok")])
    decoded, left = _both(path, capsys, monkeypatch)
    assert [json.loads(line) for line in left.splitlines()] == decoded
    assert "interrupted" in json.dumps(_empty(decoded))


@pytest.mark.parametrize("maker", [claude_code, codex, chat_json])
def test_a_huge_harness_reminder_left_in_its_file_is_the_harness_speaking(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, maker: Callable[..., Path]) -> None:
    path = maker(tmp_path, [
        ("user", "fix the tests"), ("assistant", ""),
        ("user", f"<system-reminder>{PROSE}</system-reminder>"), ("user", "hello?"),
        ("assistant", "ok")])
    decoded, left = _both(path, capsys, monkeypatch)
    assert [json.loads(line) for line in left.splitlines()] == decoded
    assert len(_empty(decoded)) == 1


def test_a_command_past_a_shortened_head_is_not_read_when_left_in_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A pasted text quoting a command deep inside is not the command run: the suggestion
    # reads the head a shortened turn keeps, with the text in memory or in its file.
    path = claude_code(tmp_path, [
        ("user", "fix the tests"), ("assistant", ""),
        ("user", "x" * 450 + "<command-name>/clear</command-name>" + PROSE),
        ("assistant", ""), ("user", "continue"), ("assistant", "ok")])
    decoded, left = _both(path, capsys, monkeypatch)
    assert [json.loads(line) for line in left.splitlines()] == decoded
    suggestions = [turn["suggestion"] for turn in _empty(decoded)]
    assert "context-reset" not in suggestions


def _codex_twice(folder: Path, prompt: str) -> Path:
    """A prompt as its `user_message` event, then as its role user item (the order in which
    a prompt shortened in memory is still found the same)."""
    stamp = "2026-01-01T00:00:00Z"
    records = [
        {"timestamp": stamp, "type": "session_meta", "payload": {"id": "big", "cwd": "/tmp"}},
        {"timestamp": stamp, "type": "event_msg",
         "payload": {"type": "user_message", "message": prompt}},
        {"timestamp": stamp, "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": prompt}]}},
        {"timestamp": stamp, "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "done"}]}},
    ]
    path = folder / "rollout-2026-01-01T00-00-00-big.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_codex_prompt_written_twice_and_left_in_its_file_is_one_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _codex_twice(tmp_path, "  " + PROSE + "\n")
    decoded, left = _both(path, capsys, monkeypatch)
    assert decoded[0]["turns"] == 2
    assert [json.loads(line) for line in left.splitlines()] == decoded
