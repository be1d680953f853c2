"""Files whose one huge text must be judged on all of it (`session.whole_text`, round 10).

    python bench/bench_whole_text.py FOLDER [MB]

writes into FOLDER (MB: size of the huge text, 75 by default):

* `wrapper.jsonl`: Claude Code, a user turn of `<conversation_data>` around MB of blank lines
  (an empty turn);
* `interrupt.jsonl`: Claude Code, an empty reply, then MB of blank lines ending in
  `[Request interrupted by user]` (the interrupt is the evidence);
* `reminder.json`: chat JSON, an empty reply then a `<system-reminder>` of MB of prose (the
  harness speaking) then `hello?`;
* `codex.jsonl`: a Codex prompt of MB of prose written twice (event, then item: one turn).

Measure each with `/usr/bin/time -f "%M KB %e s" python -m replay scan --json --no-cache FILE`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _claude(path: Path, turns: list[tuple[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for number, (role, text) in enumerate(turns):
            content: object = text if role == "user" else [{"type": "text", "text": text}]
            record = {"type": role, "sessionId": "5b0c1a52-0000-4000-8000-000000000010",
                      "uuid": f"u-{number}", "parentUuid": f"u-{number - 1}" if number else None,
                      "timestamp": f"2026-01-01T00:00:{number:02d}Z",
                      "message": {"role": role, "content": content,
                                  **({"id": f"m-{number}"} if role == "assistant" else {})}}
            out.write(json.dumps(record) + "\n")


def make(folder: Path, megabytes: int) -> list[Path]:
    """The four files, their huge text `megabytes` long."""
    folder.mkdir(parents=True, exist_ok=True)
    size = megabytes * 1_000_000
    blank = "\n" * size
    prose = "word " * (size // 5)
    _claude(folder / "wrapper.jsonl", [
        ("user", "fix the tests"), ("assistant", "done"),
        ("user", f"<conversation_data>{blank}</conversation_data>"), ("assistant", "ok")])
    _claude(folder / "interrupt.jsonl", [
        ("user", "fix the tests"), ("assistant", ""),
        ("user", blank + "[Request interrupted by user]"), ("user", "go on then"),
        ("assistant", "ok")])
    (folder / "reminder.json").write_text(json.dumps([
        {"role": "user", "content": "fix the tests"}, {"role": "assistant", "content": ""},
        {"role": "user", "content": f"<system-reminder>{prose}</system-reminder>"},
        {"role": "user", "content": "hello?"}, {"role": "assistant", "content": "ok"}]))
    stamp = "2026-01-01T00:00:00Z"
    with (folder / "rollout-2026-01-01T00-00-00-codex.jsonl").open("w") as out:
        for record in (
                {"timestamp": stamp, "type": "session_meta",
                 "payload": {"id": "codex", "cwd": "/tmp"}},
                {"timestamp": stamp, "type": "event_msg",
                 "payload": {"type": "user_message", "message": prose}},
                {"timestamp": stamp, "type": "response_item",
                 "payload": {"type": "message", "role": "user",
                             "content": [{"type": "input_text", "text": prose}]}},
                {"timestamp": stamp, "type": "response_item",
                 "payload": {"type": "message", "role": "assistant",
                             "content": [{"type": "output_text", "text": "done"}]}}):
            out.write(json.dumps(record) + "\n")
    return sorted(folder.iterdir())


if __name__ == "__main__":
    for made in make(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 75):
        print(made)
