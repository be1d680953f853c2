"""A stand-in for an agent tool writing a live session the way that tool writes it.

Run as `python tool_writer.py FORMAT SCENARIO TARGET [--pause SECONDS | --gated]`, FORMAT
one of `claude-code`, `opencode-storage`, `codex`; TARGET a `.jsonl` file (a storage
folder for opencode). A scenario is a list of steps; after each step the writer prints
`step N` on stdout, then pauses (`--pause`) or waits for a line on stdin (`--gated`), so a
test can look at what a watcher shows between two writes.

Scenarios, as each tool writes them:

* `thinking-then-text`: a prompt and the reply's reasoning; later the reply's text; then
  an empty user message at the end, and no reply to it.
* `completed-later`: a prompt and a reply holding only reasoning; later the record that
  completes that reply (Claude Code: the next user line; opencode: `time.completed`;
  Codex: `task_complete`) with nothing visible in it.
* `no-reply`: a prompt whose reply does not come for a while, then does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

SESSION_ID = "7d7e2c4a-1b1f-4a53-8f0e-5f1b2d9c3e10"
"""The Claude Code session id (the opencode one is `ses_live`, Codex's `codex-live`)."""

Step = Callable[[], None]


def _append(target: Path, *records: dict[str, Any]) -> None:
    with open(target, "ab", buffering=0) as handle:
        handle.write(b"".join(orjson.dumps(record) + b"\n" for record in records))


def _write_json(path: Path, value: dict[str, Any]) -> None:
    """Written as opencode does: a whole file, replaced at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name("." + path.name + ".tmp")
    temporary.write_bytes(orjson.dumps(value))
    os.replace(temporary, path)


# -- Claude Code ----------------------------------------------------------------------------

def _cc(kind: str, n: int, message: dict[str, Any]) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": SESSION_ID,
            "version": "2.1.42", "cwd": "/work", "uuid": f"{kind[0]}-{n}",
            "timestamp": f"2026-03-01T10:00:{n:02d}.000Z", "message": message}


def cc_user(n: int, content: str) -> dict[str, Any]:
    return _cc("user", n, {"role": "user", "content": content})


def cc_assistant(n: int, message_id: str, block: dict[str, Any],
                 stop: str | None = None) -> dict[str, Any]:
    return _cc("assistant", n, {"id": message_id, "role": "assistant", "model": "claude-test",
                                "content": [block], "stop_reason": stop})


THINKING = {"type": "thinking", "thinking": "Let me look at the failing test first.",
            "signature": "sig"}


def claude_code(scenario: str, target: Path) -> list[Step]:
    """Claude Code appends one line per content block of a response, as each is done."""
    if scenario == "thinking-then-text":
        return [
            lambda: _append(target, cc_user(0, "please fix the test"),
                            cc_assistant(1, "msg_1", THINKING)),
            lambda: _append(target, cc_assistant(2, "msg_1", {"type": "text", "text": "Fixed."},
                                                 stop="end_turn")),
            lambda: _append(target, cc_user(3, "")),
        ]
    if scenario == "completed-later":
        return [
            lambda: _append(target, cc_user(0, "go on"), cc_assistant(1, "msg_1", THINKING)),
            lambda: _append(target, cc_user(2, "hello?")),
        ]
    if scenario == "no-reply":
        return [
            lambda: _append(target, cc_user(0, "start"),
                            cc_assistant(1, "msg_1", {"type": "text", "text": "Ready."},
                                         stop="end_turn"),
                            cc_user(2, "run the migration")),
            lambda: _append(target, cc_assistant(3, "msg_2", {"type": "text", "text": "Done."},
                                                 stop="end_turn")),
        ]
    raise SystemExit(f"unknown scenario {scenario!r}")


# -- opencode storage -----------------------------------------------------------------------

OC_SESSION = "ses_live"
OC_START = 1_760_000_000_000


def opencode_storage(scenario: str, root: Path) -> list[Step]:
    """opencode writes a message's info file, then each part as its own file, then the info
    again with `time.completed` once the reply has ended."""

    def info(n: int, role: str, completed: bool = False) -> None:
        stamp: dict[str, int] = {"created": OC_START + n * 1000}
        if completed:
            stamp["completed"] = stamp["created"] + 500
        _write_json(root / "message" / OC_SESSION / f"msg_{n:04d}.json",
                    {"id": f"msg_{n:04d}", "sessionID": OC_SESSION, "role": role,
                     "time": stamp})

    def part(n: int, k: int, kind: str, text: str = "") -> None:
        _write_json(root / "part" / f"msg_{n:04d}" / f"prt_{n:04d}_{k}.json",
                    {"id": f"prt_{n:04d}_{k}", "messageID": f"msg_{n:04d}", "type": kind,
                     "text": text})

    def start() -> None:
        _write_json(root / "session" / "prj_live" / f"{OC_SESSION}.json",
                    {"id": OC_SESSION, "title": "live", "time": {"created": OC_START}})

    def prompt(n: int, text: str) -> None:
        info(n, "user")
        part(n, 0, "text", text)

    if scenario == "thinking-then-text":
        def first() -> None:
            start()
            prompt(0, "please fix the test")
            info(1, "assistant")
            part(1, 0, "step-start")
            part(1, 1, "reasoning", "Let me look at the failing test first.")

        def second() -> None:
            part(1, 2, "text", "Fixed.")
            info(1, "assistant", completed=True)

        return [first, second, lambda: prompt(2, "")]
    if scenario == "completed-later":
        def opened() -> None:
            start()
            prompt(0, "go on")
            info(1, "assistant")
            part(1, 0, "step-start")
            part(1, 1, "reasoning", "Thinking about it.")

        return [opened, lambda: info(1, "assistant", completed=True)]
    if scenario == "no-reply":
        def asked() -> None:
            start()
            prompt(0, "run the migration")

        def replied() -> None:
            info(1, "assistant")
            part(1, 0, "text", "Done.")
            info(1, "assistant", completed=True)

        return [asked, replied]
    raise SystemExit(f"unknown scenario {scenario!r}")


# -- Codex ----------------------------------------------------------------------------------

def _cx(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
    return {"timestamp": f"2026-01-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def cx_prompt(text: str, second: int) -> list[dict[str, Any]]:
    """Codex writes each prompt twice: a response item and a `user_message` event."""
    return [_cx("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": text}]}, second),
            _cx("event_msg", {"type": "user_message", "message": text, "images": []}, second)]


def cx_reasoning(second: int) -> dict[str, Any]:
    return _cx("response_item", {"type": "reasoning", "summary": [
        {"type": "summary_text", "text": "Looking at the test"}], "content": None,
        "encrypted_content": "gAAAA"}, second)


def cx_reply(text: str, second: int) -> dict[str, Any]:
    return _cx("response_item", {"type": "message", "role": "assistant",
                                 "content": [{"type": "output_text", "text": text}]}, second)


def cx_done(second: int) -> dict[str, Any]:
    return _cx("event_msg", {"type": "task_complete", "last_agent_message": None}, second)


def codex(scenario: str, target: Path) -> list[Step]:
    """Codex appends one rollout line per item and event, as each happens."""
    meta = _cx("session_meta", {"id": "codex-live", "cwd": "/work", "cli_version": "0.46.0",
                                "originator": "codex_cli_rs"}, 0)
    if scenario == "thinking-then-text":
        return [
            lambda: _append(target, meta, *cx_prompt("please fix the test", 1), cx_reasoning(2)),
            lambda: _append(target, cx_reply("Fixed.", 3), cx_done(3)),
            lambda: _append(target, *cx_prompt("and now the docs", 4)),
        ]
    if scenario == "completed-later":
        return [
            lambda: _append(target, meta, *cx_prompt("go on", 1), cx_reasoning(2)),
            lambda: _append(target, cx_done(3)),
        ]
    if scenario == "no-reply":
        return [
            lambda: _append(target, meta, *cx_prompt("run the migration", 1)),
            lambda: _append(target, cx_reasoning(2), cx_reply("Done.", 3), cx_done(3)),
        ]
    raise SystemExit(f"unknown scenario {scenario!r}")


WRITERS: dict[str, Callable[[str, Path], list[Step]]] = {
    "claude-code": claude_code, "opencode-storage": opencode_storage, "codex": codex}


def main() -> int:
    """Parse arguments and write the scenario step by step."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("format", choices=sorted(WRITERS))
    parser.add_argument("scenario")
    parser.add_argument("target")
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--gated", action="store_true")
    args = parser.parse_args()
    steps = WRITERS[args.format](args.scenario, Path(args.target))
    for number, step in enumerate(steps, 1):
        if number > 1:
            if args.gated:
                if not sys.stdin.readline():
                    return 0
            else:
                time.sleep(args.pause)
        step()
        print(f"step {number}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
