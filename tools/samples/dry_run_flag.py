"""Story 9, dry-run-flag (opencode `run --format json` event stream): a headless run adds a
`--dry-run` flag to a cleanup script; its last step finishes with nothing shown."""

from __future__ import annotations

from samples.common import BASE62, Chance, Json, epoch_ms
from samples.opencode import OpencodeIds

DR_DIR = "/home/noor/harbor-tools"
DR_SCRIPT_OLD = '''#!/usr/bin/env bash
# Remove build caches older than 14 days.
set -euo pipefail
find "${CACHE_DIR:-$HOME/.cache/harbor}" -type f -mtime +14 -print -delete
'''
DR_SCRIPT_NEW = '''#!/usr/bin/env bash
# Remove build caches older than 14 days (--dry-run: only list them).
set -euo pipefail
action=(-delete)
if [[ "${1:-}" == "--dry-run" ]]; then action=(); fi
find "${CACHE_DIR:-$HOME/.cache/harbor}" -type f -mtime +14 -print "${action[@]}"
'''


class RunStream:
    """Writes the events of one `opencode run --format json` as the CLI prints them."""

    def __init__(self, chance: Chance, start: str) -> None:
        self.chance = chance
        self.ids = OpencodeIds(chance)
        self.now = epoch_ms(start)
        self.session = self.ids.make("ses", self.now, descending=True)
        self.message = ""
        self.events: list[Json] = []

    def _event(self, kind: str, part: Json, after: float) -> None:
        self.now += int(after * 1000)
        part = {"id": self.ids.make("prt", self.now), "sessionID": self.session,
                "messageID": self.message, **part}
        self.events.append({"type": kind, "timestamp": self.now, "sessionID": self.session,
                            "part": part})

    def step(self, after: float) -> None:
        """A new assistant message begins with a step."""
        self.now += int(after * 1000)
        self.message = self.ids.make("msg", self.now)
        self._event("step_start", {"type": "step-start", "snapshot": self.chance.hex()}, 0.01)

    def text(self, text: str, seconds: float) -> None:
        """A text part, written once it is complete."""
        start = self.now
        self._event("text", {"type": "text", "text": text,
                             "time": {"start": start, "end": start + int(seconds * 1000)}},
                    seconds)

    def tool(self, tool: str, arguments: Json, output: str, title: str, seconds: float,
             *, failed: bool = False) -> None:
        """A tool part, written once the call completed or failed."""
        start = self.now
        state: Json = {"status": "error" if failed else "completed", "input": arguments,
                       "time": {"start": start, "end": start + int(seconds * 1000)}}
        if failed:
            state["error"] = output
        else:
            state.update({"output": output, "title": title, "metadata": {}})
        self._event("tool_use", {"type": "tool", "callID": "toolu_" + self.chance.chars(
            BASE62, 24), "tool": tool, "state": state}, seconds)

    def finish(self, reason: str, tokens: tuple[int, int], after: float) -> None:
        """The step ends: `tool-calls` when the model called tools, `stop` when it is done."""
        self._event("step_finish", {
            "type": "step-finish", "reason": reason, "snapshot": self.chance.hex(),
            "cost": round(self.chance.between(0.002, 0.02), 5),
            "tokens": {"input": tokens[0], "output": tokens[1], "reasoning": 0,
                       "cache": {"read": self.chance.integer(8000, 16000), "write": 0}},
        }, after)


def dry_run_flag() -> list[Json]:
    """Every event of the run, one per line."""
    run = RunStream(Chance(9009), "2026-10-14T08:31:05.000Z")
    script = f"{DR_DIR}/scripts/clean-cache.sh"
    run.step(1.2)
    run.text("I'll read the cleanup script before changing it.", 1.4)
    run.tool("read", {"filePath": script}, "\n".join(
        f"{n:05d}| {line}" for n, line in enumerate(DR_SCRIPT_OLD.splitlines(), 1)),
        "scripts/clean-cache.sh", 0.05)
    run.finish("tool-calls", (11840, 96), 0.3)
    run.step(0.8)
    run.tool("edit", {"filePath": script, "oldString": DR_SCRIPT_OLD, "newString": DR_SCRIPT_NEW},
             "", "scripts/clean-cache.sh", 0.07)
    run.tool("bash", {"command": "bash scripts/clean-cache.sh --dry-run --verbose",
                      "description": "Try the dry run"},
             "find: unknown predicate `--verbose'", "Try the dry run", 0.4, failed=True)
    run.finish("tool-calls", (12410, 388), 0.3)
    run.step(0.9)
    run.tool("bash", {"command": "CACHE_DIR=/tmp/harbor-empty bash scripts/clean-cache.sh "
                                 "--dry-run && echo exit=$?",
                      "description": "Dry run on an empty cache"},
             "exit=0\n", "Dry run on an empty cache", 0.3)
    run.finish("tool-calls", (12902, 120), 0.2)
    run.step(1.1)
    run.finish("stop", (13120, 0), 2.4)
    return run.events
