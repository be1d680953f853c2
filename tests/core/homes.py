"""A home folder laid out as the agents lay it out, holding the real files of ../shared/realdata.

Used by the discovery tests (and anyone wanting a machine with sessions of every agent): the
files are copied into each tool's own layout under a temporary folder, never into the repo.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import orjson

from tests.conftest import realdata
from tests.core.test_opencode import build_database, split_into_storage

CLAUDE_MAIN = "claude-code/claude-code-log__test_data__real_projects__-experiments-worktrees__" \
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
CLAUDE_AGENT = CLAUDE_MAIN.removesuffix(".jsonl") + "__subagents__agent-a36efb2a1231c41e2.jsonl"
CLAUDE_IDEAS = "claude-code/claude-code-log__test_data__real_projects__-experiments-ideas__" \
    "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
CLAUDE_SOUND = "claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-" \
    "JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
CODEX_TUI = "codex/codemie-code__src__agents__plugins__codex____tests____fixtures__rollout-" \
    "2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_DESKTOP = "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__" \
    "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
CODEX_CUT = "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__" \
    "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
GEMINI_CHAT = "gemini-cli/codemie-code__tests__integration__metrics__fixtures__gemini__" \
    "session-2025-12-01T21-45-5b959dae.json"
OPENCODE_DB = ["silent-panda", "jolly-eagle"]
OPENCODE_STORAGE = ["nimble-pixel", "jolly-eagle"]


@dataclass(frozen=True, slots=True)
class Home:
    """Where the layout was made."""

    root: Path
    claude_projects: Path
    codex_home: Path
    data_home: Path
    gemini_tmp: Path

    def env(self) -> dict[str, str]:
        """HOME pointing at the root, no override variable set."""
        return {"HOME": str(self.root)}


def place(relative: str, target: Path) -> Path:
    """Copy one real file to `target` (making its folder)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(realdata(relative), target)
    return target


def build_home(root: Path) -> Home:
    """Every agent's layout under `root`, with the real files in it."""
    claude = root / ".claude" / "projects"
    main = place(CLAUDE_MAIN, claude / "-experiments-worktrees" /
                 "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    place(CLAUDE_AGENT, main.with_suffix("") / "subagents" / "agent-a36efb2a1231c41e2.jsonl")
    place(CLAUDE_IDEAS, claude / "-experiments-ideas" /
          "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
    place(CLAUDE_SOUND, claude / "-Users-dain-workspace-JSSoundRecorder" /
          "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")
    codex = root / ".codex"
    place(CODEX_TUI, codex / "sessions" / "2026" / "05" / "11" / CODEX_TUI.rsplit("__", 1)[1])
    place(CODEX_DESKTOP, codex / "sessions" / "2026" / "02" / "23" /
          CODEX_DESKTOP.rsplit("__", 1)[1])
    place(CODEX_CUT, codex / "archived_sessions" / CODEX_CUT.rsplit("__", 1)[1])
    (codex / "session_index.jsonl").write_bytes(orjson.dumps(
        {"id": "019e1625-789d-76c0-80ab-3724b5ddb799", "thread_name": "first name",
         "updated_at": "2026-05-11T11:30:00Z"}) + b"\n" + orjson.dumps(
        {"id": "019e1625-789d-76c0-80ab-3724b5ddb799", "thread_name": "plugin fixture review",
         "updated_at": "2026-05-11T12:00:00Z"}) + b"\n")
    data = root / ".local" / "share"
    (data / "opencode").mkdir(parents=True)
    build_database(data / "opencode" / "opencode.db", OPENCODE_DB)
    split_into_storage(data / "opencode", OPENCODE_STORAGE)
    gemini = root / ".gemini" / "tmp"
    chat = place(GEMINI_CHAT, gemini / "myproject" / "chats" / GEMINI_CHAT.rsplit("__", 1)[1])
    (chat.parent.parent / ".project_root").write_text("/home/me/myproject")
    return Home(root, claude, codex, data, gemini)
