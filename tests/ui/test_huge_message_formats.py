"""Issue 27: a 50 MB message opens and unfolds within 2 s in every format, not only chat JSON
(`test_huge_message.py`), and the session reaches its first screen in bounded time."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from replay.ui.screens.raw import RawScreen
from replay.ui.widgets.turn_view import TurnLines
from tests.ui.conftest import build_app, ready, wait_until

LINE = "word " * 12 + "\n"
BIG = LINE * (50_000_000 // len(LINE))
PROMPT = "please write it all out"


def _lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def claude_code(path: Path, text: str = BIG) -> Path:
    session = "5b0c1a52-0000-4000-8000-000000000001"

    def record(number: int, role: str, content: object) -> dict[str, object]:
        return {"type": role, "sessionId": session, "uuid": f"u-{number}",
                "parentUuid": f"u-{number - 1}" if number else None,
                "timestamp": f"2026-01-01T00:00:0{number}Z",
                "message": {"role": role, "content": content,
                            **({"id": f"m-{number}"} if role == "assistant" else {})}}
    return _lines(path / "big.jsonl", [
        record(0, "user", PROMPT), record(1, "assistant", [{"type": "text", "text": text}]),
        record(2, "user", "thanks"), record(3, "assistant", [{"type": "text", "text": "ok"}])])


def codex(path: Path, text: str = BIG) -> Path:
    def item(role: str, kind: str, text: str) -> dict[str, object]:
        return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item",
                "payload": {"type": "message", "role": role,
                            "content": [{"type": kind, "text": text}]}}
    return _lines(path / "rollout-2026-01-01T00-00-00-big.jsonl", [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
         "payload": {"id": "big", "cwd": "/tmp"}},
        item("user", "input_text", PROMPT), item("assistant", "output_text", text),
        item("user", "input_text", "thanks"), item("assistant", "output_text", "ok")])


def codex_output(path: Path, text: str = BIG) -> Path:
    """A 50 MB tool output (a `cat` of a big file), the usual way a rollout gets a huge line."""
    def line(kind: str, payload: dict[str, object]) -> dict[str, object]:
        return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}
    return _lines(path / "rollout-2026-01-01T00-00-00-out.jsonl", [
        line("session_meta", {"id": "big", "cwd": "/tmp"}),
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": PROMPT}]}),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                               "arguments": json.dumps({"command": ["cat", "big.txt"]})}),
        line("response_item", {"type": "function_call_output", "call_id": "c1",
                               "output": text}),
        line("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "done"}]})])


def claude_code_result(path: Path, text: str = BIG) -> Path:
    """A 50 MB tool result."""
    out = claude_code(path, "")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    records[1]["message"]["content"] = [{"type": "tool_use", "id": "t1", "name": "Bash",
                                         "input": {"command": "cat big.txt"}}]
    records[2]["message"]["content"] = [{"type": "tool_result", "tool_use_id": "t1",
                                         "content": text}]
    return _lines(out, records)


def _gemini_messages(text: str) -> list[dict[str, object]]:
    return [{"id": "m1", "type": "user", "content": PROMPT},
            {"id": "m2", "type": "gemini", "content": text},
            {"id": "m3", "type": "user", "content": "thanks"},
            {"id": "m4", "type": "gemini", "content": "ok"}]


def gemini_json(path: Path, text: str = BIG) -> Path:
    out = path / "session-big.json"
    out.write_text(json.dumps({"sessionId": "big", "projectHash": "p",
                               "messages": _gemini_messages(text)}, indent=2))
    return out


def gemini_jsonl(path: Path, text: str = BIG) -> Path:
    return _lines(path / "session-big.jsonl",
                  [{"sessionId": "big", "projectHash": "p"}, *_gemini_messages(text)])


def opencode_export(path: Path, text: str = BIG) -> Path:
    def message(number: int, role: str, text: str) -> dict[str, object]:
        return {"info": {"id": f"msg_{number}", "sessionID": "ses_big", "role": role,
                         "time": {"created": 1_700_000_000_000 + number}},
                "parts": [{"id": f"prt_{number}", "sessionID": "ses_big",
                           "messageID": f"msg_{number}", "type": "text", "text": text}]}
    out = path / "big.opencode.json"
    out.write_text(json.dumps({"info": {"id": "ses_big", "title": "big"}, "messages": [
        message(1, "user", PROMPT), message(2, "assistant", text),
        message(3, "user", "thanks"), message(4, "assistant", "ok")]}, indent=1))
    return out


def opencode_run(path: Path, text: str = BIG) -> Path:
    def part(number: int, value: str) -> dict[str, object]:
        return {"type": "text", "timestamp": 1_700_000_000_000 + number, "sessionID": "ses_big",
                "part": {"id": f"prt_{number}", "sessionID": "ses_big",
                         "messageID": f"msg_{number}", "type": "text", "text": value}}
    return _lines(path / "big.opencode-run.jsonl", [part(1, text), part(2, "ok")])


def opencode_run_started(path: Path, text: str = BIG) -> Path:
    """As `opencode run` writes it: a step starts before the text."""
    out = opencode_run(path, text)
    start = {"type": "step_start", "timestamp": 1_700_000_000_000, "sessionID": "ses_big",
             "part": {"id": "prt_0", "sessionID": "ses_big", "messageID": "msg_1",
                      "type": "step-start"}}
    out.write_text(json.dumps(start) + "\n" + out.read_text())
    return out


def swe_agent(path: Path, text: str = BIG) -> Path:
    out = path / "big.traj"
    out.write_text(json.dumps({
        "environment": "swe_main",
        "history": [{"role": "system", "content": "You are a helpful agent."},
                    {"role": "user", "content": PROMPT}],
        "trajectory": [{"action": "cat big.txt", "observation": text, "response": "cat it",
                        "thought": "look at it", "state": "{}"},
                       {"action": "submit", "observation": "done", "response": "submit",
                        "thought": "done", "state": "{}"}],
        "info": {"exit_status": "submitted"}}, indent=1))
    return out


def _chat(text: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": text},
            {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]


def chat_json(path: Path, text: str = BIG) -> Path:
    out = path / "big.chat.json"
    out.write_text(json.dumps({"id": "big", "messages": _chat(text)}))
    return out


def chat_jsonl(path: Path, text: str = BIG) -> Path:
    return _lines(path / "big.chat.jsonl", _chat(text))


def sharegpt(path: Path, text: str = BIG) -> Path:
    out = path / "big.sharegpt.json"
    out.write_text(json.dumps([{"id": "big", "conversations": [
        {"from": "human" if message["role"] == "user" else "gpt", "value": message["content"]}
        for message in _chat(text)]}]))
    return out


def aider(path: Path, text: str = BIG) -> Path:
    """One chat whose reply is the text (Aider writes a reply as it is, without a prefix)."""
    out = path / ".aider.chat.history.md"
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("# aider chat started at 2024-05-01 10:20:30\n\n> Aider v0.50.1\n\n"
                     f"#### {PROMPT}\n\n")
        handle.write(text)
        handle.write("\n\n> Tokens: 1k sent, 2 received.\n\n#### thanks\n\nok\n")
    return out


FORMATS: dict[str, Callable[[Path], Path]] = {
    "claude-code": claude_code, "claude-code-result": claude_code_result, "codex": codex,
    "codex-output": codex_output, "gemini-json": gemini_json,
    "gemini-jsonl": gemini_jsonl, "opencode-export": opencode_export,
    "opencode-run": opencode_run_started, "opencode-run-first-line": opencode_run,
    "swe-agent": swe_agent, "chat-json": chat_json, "chat-jsonl": chat_jsonl,
    "sharegpt": sharegpt, "aider": aider,
}


def _biggest(app: object) -> int:
    turns = app.replay_screen.session.turns  # type: ignore[attr-defined]
    sizes = [max([len(part.text) + len(part.output or "") for part in turn.parts] or [0])
             for turn in turns]
    return max(range(len(sizes)), key=sizes.__getitem__)


@pytest.mark.parametrize("name", list(FORMATS))
async def test_a_fifty_megabyte_message_opens_and_unfolds_in_every_format(
        tmp_path: Path, name: str) -> None:
    path = FORMATS[name](tmp_path)
    # 2 s on an idle machine; a loaded one stretches every step alike.
    limit = 2.0 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    app = build_app(path)
    started = time.perf_counter()
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        loaded = time.perf_counter() - started
        screen = app.replay_screen
        assert screen is not None
        big = _biggest(app)
        started = time.perf_counter()
        screen.go(big)
        await pilot.pause()
        opened = time.perf_counter() - started
        current = screen.query_one("#current", TurnLines)
        shown = current.plain_text
        # Folded: a long text to its first rows, a tool call to its one line.
        assert "o shows it all" in shown or "▶" in shown, shown[:2000]
        assert current.line_count < 1_000
        started = time.perf_counter()
        await pilot.press("o")
        await pilot.pause()
        unfolded = time.perf_counter() - started
        shown = current.plain_text
        if "▼" in shown:
            # A tool call unfolded: its output's first rows and what is left, which `v` shows.
            assert "more lines folded (v shows the raw record)" in shown, shown[-3000:]
            started = time.perf_counter()
            await pilot.press("v")
            await wait_until(pilot, lambda: isinstance(app.screen, RawScreen))
            await pilot.pause()
            raw = time.perf_counter() - started
            assert raw < limit, (raw, limit)
            await pilot.press("escape")
        else:
            assert current.line_count > 100_000, shown[-3000:]  # the whole message
        assert opened < limit and unfolded < limit, (opened, unfolded, limit)
        # Reading the file is not the step's business, but it must not take a minute either.
        assert loaded < 10 * limit, (loaded, limit)
