"""Claude Code sessions written line by line for the share and redaction tests."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

SESSION_ID = "5f0c3d7e-2a41-4b9c-9e1a-0c6d2f8b7a11"
START = datetime(2026, 3, 1, 10, 0, 0, tzinfo=timezone.utc)

ATTACK = ("<script>document.title='pwned by script';document.body.dataset.ran='script'"
          "</script><img src=x onerror=\"document.title='pwned by img';"
          "document.body.dataset.ran='img'\"> <a href=\"javascript:document.body.dataset."
          "ran='link'\">click me</a> \x1b]0;evil title\x07\x1b[31mred\x1b[0m [/] [link=x] "
          "list[int] **bold** <!-- comment --> ```")
"""Markup, script, a javascript: link and terminal escapes, as a transcript may hold them."""


class ClaudeCode:
    """Appends Claude Code records with times that advance by `step` seconds each."""

    def __init__(self, cwd: str = "/home/ana/proj") -> None:
        self.lines: list[dict[str, Any]] = []
        self.clock = START
        self.cwd = cwd
        self._n = 0

    def _base(self, kind: str, seconds: float) -> dict[str, Any]:
        self.clock += timedelta(seconds=seconds)
        self._n += 1
        return {"type": kind, "uuid": f"u-{self._n:04d}", "sessionId": SESSION_ID,
                "timestamp": self.clock.isoformat().replace("+00:00", "Z"), "cwd": self.cwd,
                "isSidechain": False, "version": "2.1.0"}

    def user(self, text: str, after: float = 5) -> ClaudeCode:
        record = self._base("user", after)
        record["message"] = {"role": "user", "content": text}
        self.lines.append(record)
        return self

    def assistant(self, text: str, after: float = 3, tool: tuple[str, dict[str, Any], str]
                  | None = None, thinking: str = "") -> ClaudeCode:
        self._n += 1
        message_id = f"msg_{self._n:04d}"
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "x"})
        if text:
            blocks.append({"type": "text", "text": text})
        tool_id = f"toolu_{self._n:04d}"
        if tool is not None:
            blocks.append({"type": "tool_use", "id": tool_id, "name": tool[0],
                           "input": tool[1]})
        record = self._base("assistant", after)
        record["message"] = {"id": message_id, "role": "assistant", "model": "claude-test",
                             "type": "message", "content": blocks,
                             "stop_reason": "tool_use" if tool else "end_turn"}
        self.lines.append(record)
        if tool is not None:
            result = self._base("user", 1)
            result["message"] = {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id,
                 "content": tool[2]}]}
            self.lines.append(result)
        return self

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines),
                        encoding="utf-8")
        return path


def silent_session(path: Path) -> Path:
    """Twelve turns, three of them empty (#3, #7, #10), an attack in text and tool output."""
    session = ClaudeCode()
    session.user("Please fix the flaky test in tests/test_io.py")
    session.assistant("Looking at the test first.", tool=("Bash", {"command": "pytest -q"},
                                                          ATTACK))
    session.user("<local-command-stdout></local-command-stdout>", after=40)
    session.assistant(ATTACK, thinking="The test races on a temp file.")
    session.user("go on")
    session.assistant("Fixed: the temp file is now per test.")
    session.user("", after=600)
    session.assistant("Anything else?")
    session.user("run the whole suite")
    session.user("<local-command-stdout></local-command-stdout>", after=2)
    session.assistant("All 214 tests pass.", after=20)
    session.user("thanks")
    return session.write(path)
