"""Issue 27: a scan of a chat JSON-lines file leaves a huge message in its file
(`huge_strings`), as the Claude Code and Codex scans do, and reports what the message
decoded whole gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay import cli
from replay.core.readers import huge_strings
from replay.core.readers.chat_jsonl import READER
from replay.core.session import lifted

TEXT = "word " * 12 + "\n"


def _chat(path: Path, text: str) -> Path:
    messages = [{"role": "user", "content": "please write it all out"},
                {"role": "assistant", "content": text}, {"role": "user", "content": "thanks"}]
    path.write_text("".join(json.dumps(message) + "\n" for message in messages))
    return path


def _lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huge_strings, "_ENABLED", [True])
    monkeypatch.setattr(huge_strings, "HUGE_LINE_BYTES", 16 << 10)
    monkeypatch.setattr(huge_strings, "WHOLE_BYTES", 32 << 10)
    monkeypatch.setattr(huge_strings, "LIFT_BYTES", 4 << 10)


def test_the_scan_feed_leaves_a_huge_message_in_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _lowered(monkeypatch)
    text = TEXT * 5000 + "the last line\n"
    path = _chat(tmp_path / "big.chat.jsonl", text)
    assert READER.record_feed is not None
    feed = READER.record_feed(path)
    assert feed is not None
    for record, offset, lineno in feed.records:
        feed.builder.feed(record, offset, lineno)
    feed.builder.finish()
    part = feed.builder.session.turns[1].parts[0]
    assert lifted.holds(part.text) and len(part.text) < 10_000
    rope = lifted.source(part.text)
    assert rope is not None and rope.read() == text


def test_a_scan_reports_the_lifted_message_as_it_does_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _chat(tmp_path / "big.chat.jsonl", TEXT * 7000 + "why did you stop? continue\n")
    monkeypatch.setattr(huge_strings, "_ENABLED", [False])
    monkeypatch.setattr(huge_strings, "enable", lambda on=True: None)  # (scan turns it on)
    assert cli.main(["scan", "--json", "--no-cache", str(path)]) == 0
    decoded = capsys.readouterr().out
    _lowered(monkeypatch)
    before = len(lifted._TEXTS)
    assert cli.main(["scan", "--json", "--no-cache", str(path)]) == 0
    assert capsys.readouterr().out == decoded
    assert len(lifted._TEXTS) > before
