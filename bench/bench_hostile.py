"""Huge files of every format: scan and app peak RSS over the file size, and what doubling
the size does to time and RSS (issue 27: linear, scan <= 1.5x the file, app <= 2x).

Usage: python bench/bench_hostile.py [--mb 25] [--formats a,b] [--skip-app] [--keep]

Each format's file is made by repeating real records (../shared/realdata, else the bundled
samples) to about `--mb` MB and to twice that, under /tmp/bench-hostile/. Each command runs
in a subprocess; its peak RSS is the child's `ru_maxrss` (`os.wait4`):

- scan: `replay scan --json FILE > /dev/null`;
- app (unless --skip-app): `replay FILE` headless until the session is on screen and its
  turns are counted (the first screen a reviewer sees), then it exits.

Prints, per format and size: MB, scan seconds and RSS/file, app seconds to the first screen
and RSS/file; then the ratios of the doubled run over the first (time and RSS; linear is 2.0,
the target <= 2.3). Run with `ulimit -v` or on an idle machine: figures are noisy under load.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REALDATA = REPO.parent / "shared" / "realdata"
SAMPLES = REPO / "sample_sessions"
OUT = Path("/tmp/bench-hostile")
SCAN_TARGET, APP_TARGET, DOUBLING_TARGET = 1.5, 2.0, 2.3


def _first(folder: str, pattern: str) -> Path:
    found = sorted((REALDATA / folder).glob(pattern), key=lambda p: -p.stat().st_size)
    return found[0]


def _repeat_lines(head: list[bytes], body: list[bytes], size: int, handle: Any) -> None:
    written = sum(map(len, head))
    handle.writelines(head)
    while written < size:
        for line in body:
            handle.write(line)
            written += len(line)


def _lines(path: Path) -> list[bytes]:
    return [line if line.endswith(b"\n") else line + b"\n"
            for line in path.read_bytes().splitlines(keepends=True) if line.strip()]


def claude_code(size: int, out: Path) -> None:
    lines = _lines(_first("claude-code", "*ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"))
    with open(out, "wb") as handle:
        _repeat_lines([], lines, size, handle)


def codex(size: int, out: Path) -> None:
    lines = _lines(_first("codex", "*.jsonl"))
    with open(out, "wb") as handle:
        _repeat_lines(lines[:1], lines[1:], size, handle)


def _repeat_list(document: dict[str, Any], key: str, size: int, out: Path,
                 fix: Callable[[Any, int], Any] | None = None) -> None:
    """The document with its `key` list repeated until the file is about `size` bytes."""
    items = document[key]
    unit = sum(len(json.dumps(item)) for item in items) or 1
    copies = max(1, size // unit)
    repeated = []
    for number in range(copies):
        for item in items:
            repeated.append(fix(copy.deepcopy(item), number) if fix else item)
    document = dict(document, **{key: repeated})
    out.write_text(json.dumps(document, indent=1), encoding="utf-8")


def gemini_json(size: int, out: Path) -> None:
    document = json.loads(_first("gemini-cli", "*.json").read_bytes())
    _repeat_list(document, "messages", size, out)


def gemini_jsonl(size: int, out: Path) -> None:
    document = json.loads(_first("gemini-cli", "*.json").read_bytes())
    meta = {key: value for key, value in document.items() if key != "messages"}
    with open(out, "wb") as handle:
        _repeat_lines([json.dumps(meta).encode() + b"\n"],
                      [json.dumps(m).encode() + b"\n" for m in document["messages"]], size,
                      handle)


def opencode_export(size: int, out: Path) -> None:
    document = json.loads(_first("opencode", "*.json").read_bytes())

    def fix(message: dict[str, Any], number: int) -> dict[str, Any]:
        message["info"]["id"] = f"{message['info'].get('id')}_{number}"
        return message
    _repeat_list(document, "messages", size, out, fix)


def opencode_run(size: int, out: Path) -> None:
    lines = _lines(SAMPLES / "dry-run-flag.opencode-run.jsonl")
    with open(out, "wb") as handle:
        _repeat_lines([], lines, size, handle)


def _chat_messages() -> list[dict[str, Any]]:
    return json.loads((SAMPLES / "support-bot.chat.json").read_bytes())["messages"]


def chat_json(size: int, out: Path) -> None:
    _repeat_list({"id": "bench", "messages": _chat_messages()}, "messages", size, out)


def chat_jsonl(size: int, out: Path) -> None:
    with open(out, "wb") as handle:
        _repeat_lines([], [json.dumps(m).encode() + b"\n" for m in _chat_messages()], size,
                      handle)


def sharegpt(size: int, out: Path) -> None:
    turns = [{"from": "human" if m["role"] == "user" else "gpt",
              "value": m.get("content") if isinstance(m.get("content"), str) else ""}
             for m in _chat_messages() if m["role"] in ("user", "assistant")]
    _repeat_list({"id": "bench", "conversations": turns}, "conversations", size, out)


def swe_agent(size: int, out: Path) -> None:
    document = json.loads((SAMPLES / "cache-expiry.swe-agent.traj").read_bytes())
    half = size // 2
    _repeat_list(document, "trajectory", half, out)
    document = json.loads(out.read_bytes())
    _repeat_list(document, "history", half, out)


def mini_swe_agent(size: int, out: Path) -> None:
    document = json.loads((SAMPLES / "paginate-fix.mini-swe-agent.traj.json").read_bytes())
    messages = document["messages"]
    _repeat_list(dict(document, messages=messages[:1] + messages[1:] * 1), "messages", size,
                 out)


def aider(size: int, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from tests.core.test_aider import HISTORY

    body = HISTORY.encode()
    with open(out, "wb") as handle:
        written = 0
        while written < size:
            handle.write(body)
            written += len(body)


def opencode_db(size: int, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from tests.core.test_opencode import SCHEMA

    exports = [json.loads(path.read_bytes()) for path in sorted((REALDATA / "opencode").glob(
        "*.json"))]
    connection = sqlite3.connect(out)
    connection.executescript(SCHEMA)
    written, number = 0, 0
    while written < size:
        for export in exports:
            number += 1
            session = f"ses_{number:08d}"
            info = export["info"]
            connection.execute(
                "INSERT INTO session (id, project_id, parent_id, slug, directory, title, "
                "version, time_created, time_updated) VALUES (?,?,?,?,?,?,?,?,?)",
                (session, "p", None, "s", "/", info.get("title", ""), "1",
                 number, number))
            for index, message in enumerate(export["messages"]):
                message_id = f"msg_{number:08d}_{index:05d}"
                data = json.dumps({k: v for k, v in message["info"].items()
                                   if k not in ("id", "sessionID")})
                connection.execute("INSERT INTO message (id, session_id, time_created, "
                                   "time_updated, data) VALUES (?,?,?,?,?)",
                                   (message_id, session, index, index, data))
                written += len(data)
                for part_index, part in enumerate(message.get("parts") or []):
                    part_data = json.dumps({k: v for k, v in part.items()
                                            if k not in ("id", "sessionID", "messageID")})
                    connection.execute(
                        "INSERT INTO part (id, message_id, session_id, time_created, "
                        "time_updated, data) VALUES (?,?,?,?,?,?)",
                        (f"prt_{message_id}_{part_index}", message_id, session, index, index,
                         part_data))
                    written += len(part_data)
    connection.commit()
    connection.close()


FORMATS: dict[str, tuple[str, Callable[[int, Path], None]]] = {
    "claude-code": (".jsonl", claude_code),
    "codex": ("rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl", codex),
    "gemini-json": (".json", gemini_json),
    "gemini-jsonl": (".jsonl", gemini_jsonl),
    "opencode-export": (".json", opencode_export),
    "opencode-run": (".jsonl", opencode_run),
    "opencode-db": (".db", opencode_db),
    "chat-json": (".json", chat_json),
    "chat-jsonl": (".jsonl", chat_jsonl),
    "sharegpt": (".json", sharegpt),
    "swe-agent": (".traj", swe_agent),
    "mini-swe-agent": (".traj.json", mini_swe_agent),
    "aider": (".chat.history.md", aider),
}


def measure_child(command: list[str], limit: int) -> tuple[float, int, int, str]:
    """Like `measure`, with the child's own peak (not the largest child's so far)."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as captured:
        process = subprocess.Popen(command, stdout=captured, stderr=subprocess.DEVNULL,
                                   cwd=REPO, preexec_fn=cap, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        captured.seek(0)
        out = captured.read()
    return elapsed, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), out


def child_app(path: Path) -> None:
    """The app on the file, headless, until the first screen shows the session; prints
    `first-screen SECONDS`."""
    sys.path.insert(0, str(REPO))
    scratch = tempfile.mkdtemp(prefix="bench-hostile-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, TEXTUAL_ANIMATIONS="none")
    from textual.pilot import WaitForScreenTimeout

    from replay.cli import main
    from replay.ui.app import ReplayApp

    begun = time.perf_counter()

    async def pilot_run(pilot: Any) -> None:
        app = pilot.app
        # A file of many sessions (an Aider history of many chats) opens on the list of them.
        while (app.replay_screen is None or app.replay_screen.indexing) and not (
                type(app.screen).__name__ == "SessionPicker" and app.screen.rows):
            await pilot.pause(0.05)
        try:
            await pilot.pause(0.1)
        except WaitForScreenTimeout:
            pass  # a list of 100,000 sessions is still being laid out: it is on screen
        print(f"first-screen {time.perf_counter() - begun:.2f}", flush=True)
        if app.replay_screen is not None:
            print(f"turns {len(app.replay_screen.session.turns)}", flush=True)
        else:
            print(f"sessions {len(app.screen.rows)}", flush=True)
        app.exit()

    run = ReplayApp.run

    def headless_run(self: ReplayApp, **_: object) -> None:
        run(self, headless=True, size=(160, 45), auto_pilot=pilot_run)

    ReplayApp.run = headless_run  # type: ignore[method-assign]
    main([str(path)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=25.0)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--skip-app", action="store_true")
    parser.add_argument("--keep", action="store_true", help="reuse files already made")
    parser.add_argument("--limit-gb", type=float, default=6.0, help="address-space cap")
    parser.add_argument("--out", type=Path, default=OUT,
                        help=f"where the files are made (default {OUT})")
    parser.add_argument("--child-app", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_app is not None:
        child_app(args.child_app)
        return 0
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    limit = int(args.limit_gb * 2**30)
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} (1, 5 min), "
          f"{os.cpu_count()} cores; sizes {args.mb:g} MB and {2 * args.mb:g} MB")
    print(f"{'format':<16} {'MB':>6} {'scan s':>7} {'RSS/file':>8} {'app s':>7} {'RSS/file':>8}")
    passed = True
    for name in args.formats.split(","):
        suffix, make = FORMATS[name]
        rows = []
        for factor in (1, 2):
            folder = out / f"{name}-{factor}"
            folder.mkdir(exist_ok=True)
            path = folder / (suffix if not suffix.startswith(".") else f"bench{suffix}")
            if not (args.keep and path.exists()):
                path.unlink(missing_ok=True)
                make(int(args.mb * factor * 1e6), path)
            size = path.stat().st_size
            scan = measure_child([sys.executable, "-m", "replay", "scan", "--json", str(path)],
                                 limit)
            app = (None if args.skip_app else measure_child(
                [sys.executable, __file__, "--child-app", str(path)], limit))
            rows.append((size, scan, app))
            app_text = ("" if app is None else
                        f"{app[0]:7.1f} {app[1] / size:7.2f}x" + ("" if app[2] == 0 else
                                                                 f" exit {app[2]}"))
            print(f"{name:<16} {size / 1e6:6.1f} {scan[0]:7.1f} {scan[1] / size:7.2f}x "
                  f"{app_text}" + ("" if scan[2] == 0 else f"  scan exit {scan[2]}"),
                  flush=True)
            passed &= scan[2] == 0 and scan[1] / size <= SCAN_TARGET
            if app is not None:
                passed &= app[2] == 0 and app[1] / size <= APP_TARGET
        (size1, scan1, app1), (size2, scan2, app2) = rows
        grow = size2 / size1
        ratios = (f"scan time x{scan2[0] / scan1[0]:.2f} RSS x{scan2[1] / scan1[1]:.2f}")
        passed &= scan2[0] / scan1[0] <= DOUBLING_TARGET * grow / 2
        if app1 is not None and app2 is not None:
            ratios += f"; app time x{app2[0] / app1[0]:.2f} RSS x{app2[1] / app1[1]:.2f}"
        print(f"{'':<16} doubled ({grow:.2f}x the bytes): {ratios}", flush=True)
        if not args.keep:
            for factor in (1, 2):
                shutil.rmtree(out / f"{name}-{factor}", ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
