"""`replay share` shows a turn as the app does: a `/command` the harness wrapped in tags reads
`/test-command --verbose`, its output `⎿ ...`, never the raw `<command-name>` tags (issue 23
item 6 was fixed in the app, the CSV and the case studies; the shared page still showed the
tags), and a reasoning block is described in the app's words."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import main
from tests.conftest import realdata

EDGE = "claude-code/claude-code-log__test_data__edge_cases.jsonl"


@pytest.mark.parametrize("kind", ["html", "md", "cast"])
def test_a_shared_command_turn_reads_as_the_harness_shows_it(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"edge.{kind}"
    assert main(["share", str(realdata(EDGE)), "--as", kind, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    if kind == "cast":
        text = "".join(json.loads(line)[2] for line in text.splitlines()[1:])
    assert "/test-command --verbose --output /tmp/test.log" in text
    assert "⎿ Command output here:" in text
    for raw in ("command-name", "local-command-stdout"):
        assert raw not in text, f"raw <{raw}> tag in the shared {kind}"


def _signed_thinking(path: Path) -> Path:
    """A Claude Code session whose assistant turn holds only a signed, empty thinking block."""
    records = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "plan the change"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1",
         "timestamp": "2026-01-01T10:00:05Z",
         "message": {"role": "assistant", "model": "claude", "content": [
             {"type": "thinking", "thinking": "", "signature": "A" * 144}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s1",
         "timestamp": "2026-01-01T10:01:00Z",
         "message": {"role": "user", "content": "go on"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["html", "md"])
def test_a_shared_reasoning_block_uses_the_apps_words(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = _signed_thinking(tmp_path / "signed.jsonl")
    out = tmp_path / f"signed.{kind}"
    assert main(["share", str(source), "--as", kind, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "reasoning: encrypted (" in text
    assert "bytes hidden" not in text
