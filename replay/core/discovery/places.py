"""Where each agent keeps its sessions on this machine, with each tool's own override.

Checked against the tools' sources (see the README, "Where sessions are found"):

- Claude Code: `$CLAUDE_CONFIG_DIR/projects/`, else `~/.claude/projects/`.
- Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/` and `$CODEX_HOME/archived_sessions/`, else
  under `~/.codex/` (`session_index.jsonl` there names threads).
- opencode: `$XDG_DATA_HOME/opencode/` (else `~/.local/share/opencode/`): `opencode.db`
  (or a channel's `opencode-<channel>.db`) and the older `storage/` folder.
- Gemini CLI: `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/`, else `~/.gemini/tmp/...`
  (`<project>` is a slug of the project folder, or in older versions its SHA-256).

A place that does not exist is simply absent: nothing here creates or requires a folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CLAUDE = "claude-code"
CODEX = "codex"
OPENCODE = "opencode"
GEMINI = "gemini-cli"
AGENTS: tuple[str, ...] = (CLAUDE, CODEX, OPENCODE, GEMINI)
"""Agent names, as `replay sessions --agent` takes them and `--json` writes them."""

AGENT_TITLES: dict[str, str] = {CLAUDE: "Claude Code", CODEX: "Codex", OPENCODE: "opencode",
                                GEMINI: "Gemini CLI"}


@dataclass(frozen=True, slots=True)
class Place:
    """One folder (or file) an agent writes sessions to."""

    agent: str
    """Which agent (`AGENTS`)."""
    kind: str
    """What is there: `projects`, `sessions`, `archived`, `data` (opencode) or `tmp` (Gemini)."""
    path: Path
    """The folder."""
    variable: str | None
    """The environment variable that put it there, None for the default location."""

    def describe(self) -> str:
        """`~/.claude/projects` or `$CODEX_HOME/sessions (/x/sessions)`, for messages."""
        shown = _tilde(self.path)
        return f"{shown} (from ${self.variable})" if self.variable else shown


def _tilde(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path(os.path.expanduser("~"))


def _override(env: Mapping[str, str], name: str) -> Path | None:
    # Each of these tools ignores the variable when it is set but empty.
    value = env.get(name, "")
    return Path(value).expanduser() if value else None


def places(env: Mapping[str, str] | None = None) -> list[Place]:
    """Every place looked at, in agent order, whether or not it exists."""
    env = os.environ if env is None else env
    home = _home(env)
    found: list[Place] = []

    claude = _override(env, "CLAUDE_CONFIG_DIR")
    found.append(Place(CLAUDE, "projects", (claude or home / ".claude") / "projects",
                       "CLAUDE_CONFIG_DIR" if claude else None))
    if claude is None:
        # Some 1.0.x versions wrote to the XDG config folder instead (later undone).
        config = _override(env, "XDG_CONFIG_HOME") or home / ".config"
        if (config / "claude" / "projects").is_dir():
            found.append(Place(CLAUDE, "projects", config / "claude" / "projects", None))

    codex = _override(env, "CODEX_HOME")
    codex_home = codex or home / ".codex"
    variable = "CODEX_HOME" if codex else None
    found.append(Place(CODEX, "sessions", codex_home / "sessions", variable))
    found.append(Place(CODEX, "archived", codex_home / "archived_sessions", variable))

    data = _override(env, "XDG_DATA_HOME")
    found.append(Place(OPENCODE, "data", (data or home / ".local" / "share") / "opencode",
                       "XDG_DATA_HOME" if data else None))

    gemini = _override(env, "GEMINI_CLI_HOME")
    found.append(Place(GEMINI, "tmp", (gemini or home) / ".gemini" / "tmp",
                       "GEMINI_CLI_HOME" if gemini else None))
    return found


def discovery_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders to watch for new sessions (those that exist now): a session created later
    appears under one of them. For `watch --local`."""
    return [place.path for place in places(env) if place.path.is_dir()]


def looked_in(env: Mapping[str, str] | None = None) -> str:
    """One line naming every place looked at, for "no sessions found" messages."""
    return ", ".join(place.describe() for place in places(env))
