"""Issue 27: a scan of a chat JSON-lines file leaves a huge message in its file
(`huge_strings`), as the Claude Code and Codex scans do, and reports what the message
decoded whole gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.readers.chat_jsonl import READER
from replay.core.session import lifted

from .test_scan_lift import lowered, scanned_both_ways

TEXT = "word " * 12 + "\n"


def _chat(path: Path, text: str) -> Path:
    messages = [{"role": "user", "content": "please write it all out"},
                {"role": "assistant", "content": text}, {"role": "user", "content": "thanks"}]
    path.write_text("".join(json.dumps(message) + "\n" for message in messages))
    return path


def test_the_scan_feed_leaves_a_huge_message_in_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lowered(monkeypatch)
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
    decoded, left = scanned_both_ways(path, capsys, monkeypatch)
    assert left == decoded
