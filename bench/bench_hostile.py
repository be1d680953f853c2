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
import math
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


def _suffixed(value: Any, keys: frozenset[str], suffix: str) -> Any:
    """`value` with every string under one of `keys` (at any depth) ending in `suffix`."""
    if isinstance(value, dict):
        return {key: (item + suffix if key in keys and isinstance(item, str) and item
                      else _suffixed(item, keys, suffix)) for key, item in value.items()}
    if isinstance(value, list):
        return [_suffixed(item, keys, suffix) for item in value]
    return value


def _repeat_lines(head: list[bytes], body: list[bytes], size: int, handle: Any,
                  ids: frozenset[str] = frozenset()) -> None:
    """`head`, then `body` again and again up to `size` bytes; in each copy after the first
    the JSON values under the keys `ids` get a suffix of their own (`-r2`), so a reader that
    merges records by id sees new records, not the same ones rewritten."""
    written = sum(map(len, head))
    handle.writelines(head)
    copy_number = 0
    while written < size:
        copy_number += 1
        for line in body:
            if ids and copy_number > 1:
                line = json.dumps(_suffixed(json.loads(line), ids, f"-r{copy_number}"),
                                  ensure_ascii=False).encode() + b"\n"
            handle.write(line)
            written += len(line)


def _lines(path: Path) -> list[bytes]:
    return [line if line.endswith(b"\n") else line + b"\n"
            for line in path.read_bytes().splitlines(keepends=True) if line.strip()]


CLAUDE_IDS = frozenset({"uuid", "parentUuid", "leafUuid", "logicalParentUuid", "id",
                        "tool_use_id", "toolUseID", "sourceToolAssistantUUID", "promptId",
                        "requestId", "parentToolUseID"})
"""Claude Code's record, message and tool ids (the session id stays)."""


def claude_code(size: int, out: Path) -> None:
    lines = _lines(_first("claude-code", "*ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"))
    with open(out, "wb") as handle:
        _repeat_lines([], lines, size, handle, CLAUDE_IDS)


def codex(size: int, out: Path) -> None:
    lines = _lines(_first("codex", "*.jsonl"))
    with open(out, "wb") as handle:
        _repeat_lines(lines[:1], lines[1:], size, handle, frozenset({"call_id", "id",
                                                                      "turn_id"}))


def _repeat_list(document: dict[str, Any], key: str, size: int, out: Path,
                 fix: Callable[[Any, int], Any] | None = None,
                 ids: frozenset[str] = frozenset()) -> None:
    """The document with its `key` list repeated until the file is about `size` bytes (the
    values under the keys `ids` suffixed in each copy after the first, as `_repeat_lines`)."""
    items = document[key]
    unit = sum(len(json.dumps(item)) for item in items) or 1
    copies = max(1, size // unit)
    repeated = []
    for number in range(copies):
        for item in items:
            if ids and number:
                item = _suffixed(item, ids, f"-r{number + 1}")
            repeated.append(fix(copy.deepcopy(item), number) if fix else item)
    document = dict(document, **{key: repeated})
    out.write_text(json.dumps(document, indent=1), encoding="utf-8")


def gemini_json(size: int, out: Path) -> None:
    document = json.loads(_first("gemini-cli", "*.json").read_bytes())
    _repeat_list(document, "messages", size, out, ids=frozenset({"id"}))


def gemini_jsonl(size: int, out: Path) -> None:
    document = json.loads(_first("gemini-cli", "*.json").read_bytes())
    meta = {key: value for key, value in document.items() if key != "messages"}
    with open(out, "wb") as handle:
        _repeat_lines([json.dumps(meta).encode() + b"\n"],
                      [json.dumps(m).encode() + b"\n" for m in document["messages"]], size,
                      handle, frozenset({"id"}))


def gemini_jsonl_tiny(size: int, out: Path) -> None:
    """Messages of about 120 bytes (a uuid id, a time, a word): the id map and the columns,
    not the text, are what a reader holds for them."""
    import uuid

    with open(out, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"sessionId": "tiny", "projectHash": "p" * 16}) + "\n")
        written, number = 0, 0
        while written < size:
            line = json.dumps({"id": str(uuid.UUID(int=number * 2654435761 % (1 << 128))),
                               "timestamp": "2026-01-01T00:00:00.000Z",
                               "type": "user" if number % 2 == 0 else "gemini",
                               "content": f"m{number}"}, separators=(",", ":")) + "\n"
            handle.write(line)
            written += len(line)
            number += 1


def opencode_export(size: int, out: Path) -> None:
    document = json.loads(_first("opencode", "*.json").read_bytes())

    def fix(message: dict[str, Any], number: int) -> dict[str, Any]:
        message["info"]["id"] = f"{message['info'].get('id')}_{number}"
        return message
    _repeat_list(document, "messages", size, out, fix,
                 ids=frozenset({"messageID", "callID", "parentID", "id"}))


def opencode_run(size: int, out: Path) -> None:
    lines = _lines(SAMPLES / "dry-run-flag.opencode-run.jsonl")
    with open(out, "wb") as handle:
        _repeat_lines([], lines, size, handle, frozenset({"id", "messageID", "callID"}))


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


def aider_chat(size: int, out: Path) -> None:
    """One Aider chat of tens of thousands of exchanges: the test history's own exchanges
    (interrupts, blank prompts, commands, errors) again and again under one header."""
    sys.path.insert(0, str(REPO))
    from tests.core.test_aider import HISTORY

    body = "".join(line for line in HISTORY.splitlines(keepends=True)
                   if not line.startswith("# aider chat started at"))
    with open(out, "w", encoding="utf-8") as handle:
        written = handle.write("# aider chat started at 2024-05-01 10:20:30\n\n")
        number = 0
        while written < size:
            number += 1
            written += handle.write(body.replace("off-by-one", f"off-by-one #{number}"))


def aider_message(size: int, out: Path) -> None:
    """One Aider chat whose one reply is the whole file (lines holding markup-like text and
    an escape)."""
    line = "The quick brown fox [/] [link=x] list[int] \x1b[2J jumps over the lazy dog.\n"
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("# aider chat started at 2024-05-01 10:20:30\n\n> Aider v0.50.1\n\n"
                     "#### write it all out\n\n")
        handle.write(line * max(1, size // len(line)))
        handle.write("\n> Tokens: 1k sent, 2 received.\n")


def opencode_db(size: int, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from tests.core.test_opencode import SCHEMA

    exports = [json.loads(path.read_bytes()) for path in sorted((REALDATA / "opencode").glob(
        "*.json"))]
    if not exports:  # else the loop below never ends
        raise SystemExit(f"no opencode exports in {REALDATA / 'opencode'}")
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
    "gemini-jsonl-tiny": (".jsonl", gemini_jsonl_tiny),
    "opencode-export": (".json", opencode_export),
    "opencode-run": (".jsonl", opencode_run),
    "opencode-db": (".db", opencode_db),
    "chat-json": (".json", chat_json),
    "chat-jsonl": (".jsonl", chat_jsonl),
    "sharegpt": (".json", sharegpt),
    "swe-agent": (".traj", swe_agent),
    "mini-swe-agent": (".traj.json", mini_swe_agent),
    "aider": (".chat.history.md", aider),
    "aider-chat": (".chat.history.md", aider_chat),
    "aider-message": (".chat.history.md", aider_message),
}


def measure_child(command: list[str], limit: int, output: bool = True
                  ) -> tuple[float, int, int, str, float]:
    """(wall seconds, peak RSS, exit code, output, CPU seconds) of a command in a child
    process capped at `limit` bytes of address space (its own peak, from `wait4`). Without
    `output` its standard output goes to /dev/null and "" is returned: read into this
    process (a scan's 50 MB of JSON), it grew it, and every later child forked from it
    started with that much resident memory, counted in its own peak."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # A fresh cache, data and config for each run: a scan of a file scanned before is a
    # cache hit (0.2 s), not a measurement.
    scratch = tempfile.mkdtemp(prefix="bench-hostile-")
    env = dict(os.environ, REPLAY_CACHE_DIR=os.path.join(scratch, "cache"),
               REPLAY_DATA_DIR=os.path.join(scratch, "data"),
               REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"))
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as captured, tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(command, stdout=captured if output else subprocess.DEVNULL,
                                   stderr=errors,
                                   cwd=REPO, preexec_fn=cap, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        captured.seek(0)
        out = captured.read()
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            print("  failed: " + " | ".join(errors.read().strip().splitlines()[-6:]),
                  file=sys.stderr, flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return (elapsed, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), out,
            usage.ru_utime + usage.ru_stime)


def _rss_now() -> int:
    """This process's resident set now, in bytes (`VmRSS`)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class _Sampler:
    """The resident set every 0.1 s in a thread: the peak of each phase of the app run."""

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _rss_now())

    def take(self) -> int:
        """The peak since the last `take` (and now), then start again."""
        peak, self.peak = max(self.peak, _rss_now()), 0
        return peak


APP_PHASES = ("first-screen", "step", "stops", "unfold", "search", "goto", "jumps")
"""What the app run does, in order, each timed with its peak resident set:

- shown (printed before the others, not a phase of its own): start to the session, or the
  list of sessions, first on screen (a long Aider chat is then still being read), with
  the peak so far;
- first-screen: start to the session on screen with every turn counted;
- step: `→` 100 times, `G` (the last turn), `←` 50 times, `g`;
- stops: `]` 10 times;
- unfold: to the turn with the most text, `o` (unfold) and `o` again;
- search: `/`, a word typed (the prompt counts matches as it is typed), Enter, `n` 5 times;
- goto: `:` and the middle turn's number;
- jumps: 150 moves to turns spread over the whole session (a reviewer going through it)."""


def child_app(path: Path, phases: bool = True) -> None:
    """The app on the file, headless: the first screen, then (with `phases`) each of
    `APP_PHASES`; prints `phase NAME SECONDS PEAK_RSS_BYTES` per phase and `turns N`."""
    sys.path.insert(0, str(REPO))
    scratch = tempfile.mkdtemp(prefix="bench-hostile-")
    os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                      REPLAY_DATA_DIR=scratch, TEXTUAL_ANIMATIONS="none")
    from headless import run_headless
    from textual.pilot import WaitForScreenTimeout

    from replay.ui.app import ReplayApp

    begun, cpu_begun = time.perf_counter(), time.process_time()
    sampler = _Sampler()

    async def pilot_run(pilot: Any) -> None:
        app = pilot.app
        # The session on screen (perhaps still being read), or a list of sessions.
        while (app.replay_screen is None or not app.replay_screen.is_mounted) and not (
                type(app.screen).__name__ == "SessionPicker" and app.screen.rows):
            await pilot.pause(0.02)
        print(f"phase shown {time.perf_counter() - begun:.3f} {sampler.peak}", flush=True)
        # A file of many sessions (an Aider history of many chats) opens on the list of them.
        while (app.replay_screen is None or app.replay_screen.indexing) and not (
                type(app.screen).__name__ == "SessionPicker" and app.screen.rows):
            await pilot.pause(0.05)
        try:
            await pilot.pause(0.1)
        except WaitForScreenTimeout:
            pass  # a list of 100,000 sessions is still being laid out: it is on screen
        clock = [begun, cpu_begun]

        def phase(name: str) -> None:
            # Wall seconds, peak RSS and CPU seconds of the whole process (every thread):
            # on a shared machine the wall is mostly waiting for a core, the CPU is not.
            now, cpu = time.perf_counter(), time.process_time()
            print(f"phase {name} {now - clock[0]:.3f} {sampler.take()} {cpu - clock[1]:.3f}",
                  flush=True)
            clock[0], clock[1] = now, cpu

        phase("first-screen")
        screen = app.replay_screen
        if screen is None:
            # A file of many sessions (an Aider history of many chats) opens on their list.
            picker = app.screen
            print(f"sessions {len(picker.rows)}", flush=True)
            if phases:
                await _list_phases(pilot, picker, phase)
            app.exit()
            return
        turns = screen.session.turns
        print(f"turns {len(turns)}", flush=True)
        if not phases or not turns:
            app.exit()
            return
        for key, times in (("right", 100), ("G", 1), ("left", 50), ("g", 1)):
            for _ in range(times):
                await pilot.press(key)
        await pilot.pause()
        phase("step")
        for _ in range(10):
            await pilot.press("right_square_bracket")
        await pilot.pause()
        phase("stops")
        sizes = (turns.text_sizes(0, len(turns)) if hasattr(turns, "text_sizes") else
                 [sum(p.text_length for p in t.parts if p.kind == "text") for t in turns])
        screen.go(max(range(len(sizes)), key=sizes.__getitem__))
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        phase("unfold")
        await pilot.press("slash")
        await pilot.press(*"error")
        await pilot.press("enter")
        for _ in range(5):
            await pilot.press("n")
        await pilot.pause()
        phase("search")
        await pilot.press("colon")
        await pilot.press(*str(len(turns) // 2 + 1))
        await pilot.press("enter")
        await pilot.pause()
        phase("goto")
        count = len(turns)
        for number in range(150):
            screen.go(number * 7919 % count)
            await pilot.pause()
        phase("jumps")
        app.exit()

    run_headless(ReplayApp, pilot_run, [str(path)])


LIST_FILTER = "10:20"
"""What the list's filter phase types (the time an Aider history's chats started at)."""


async def _list_phases(pilot: Any, picker: Any, phase: Any) -> None:
    """The session list's phases: every count in, scrolled, sorted, filtered, one opened."""
    app = pilot.app
    while picker._waiting:
        await pilot.pause(0.2)
    await pilot.pause()
    phase("counted")
    for key in ("end", "home", "pagedown", "pagedown", "down"):
        await pilot.press(key)
    await pilot.pause()
    phase("scroll")
    await pilot.press("s")
    await pilot.pause()
    phase("sort")
    await pilot.press("slash", *LIST_FILTER, "enter")
    await pilot.pause()
    phase("filter")
    table = picker.query_one("#picker-table")
    print(f"filtered {table.row_count}", flush=True)
    if not table.row_count:
        # No row holds the filter (an opencode.db's titles): cleared, so that enter opens
        # a session (it opened none, and the run waited for it for ever).
        await pilot.press("escape")
        await pilot.pause()
    await pilot.press("enter")  # the session under the cursor
    while app.replay_screen is None or app.replay_screen.indexing:
        await pilot.pause(0.05)
    await pilot.pause()
    phase("open")


def _phases(out: str) -> tuple[dict[str, tuple[float, int, float]], int | None]:
    """The child app's phases (seconds, peak RSS, CPU seconds: NaN when not said) by name,
    and its turn count."""
    phases: dict[str, tuple[float, int, float]] = {}
    turns = None
    for line in out.splitlines():
        words = line.split()
        if len(words) in (4, 5) and words[0] == "phase":
            phases[words[1]] = (float(words[2]), int(words[3]),
                                float(words[4]) if len(words) == 5 else math.nan)
        elif len(words) == 2 and words[0] == "turns":
            turns = int(words[1])
    return phases, turns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=25.0)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--skip-app", action="store_true")
    parser.add_argument("--skip-scan", action="store_true")
    parser.add_argument("--first-screen-only", action="store_true",
                        help="the app only to its first screen (no stepping, search, ...)")
    parser.add_argument("--keep", action="store_true", help="reuse files already made")
    parser.add_argument("--out", type=Path, default=OUT, help="where the files are made")
    parser.add_argument("--limit-gb", type=float, default=6.0, help="address-space cap")
    parser.add_argument("--child-app", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-phases", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-make", nargs=3, metavar=("FORMAT", "BYTES", "PATH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_make is not None:
        name, size, where = args.child_make
        FORMATS[name][1](int(size), Path(where))
        return 0
    if args.child_app is not None:
        child_app(args.child_app, args.child_phases)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    limit = int(args.limit_gb * 2**30)
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} (1, 5 min), "
          f"{os.cpu_count()} cores; sizes {args.mb:g} MB and {2 * args.mb:g} MB")
    print(f"{'format':<16} {'MB':>6} {'turns':>8} {'scan s':>7} {'cpu s':>6} {'RSS/file':>8} "
          f"{'app s':>7} {'RSS/file':>8} {'first s':>7} {'RSS/file':>8}  phases: s, RSS/file")
    passed = True
    for name in args.formats.split(","):
        suffix, make = FORMATS[name]
        rows = []
        for factor in (1, 2):
            folder = args.out / f"{name}-{factor}"
            folder.mkdir(exist_ok=True)
            path = folder / (suffix if not suffix.startswith(".") else f"bench{suffix}")
            if not (args.keep and path.exists()):
                path.unlink(missing_ok=True)
                # Made in a child: a child forked from this process starts with its resident
                # memory (and `ru_maxrss` keeps that through exec), so a parent grown by
                # making a 100 MB document inflated every later child's peak.
                subprocess.run([sys.executable, __file__, "--child-make", name,
                                str(int(args.mb * factor * 1e6)), str(path)], check=True)
            size = path.stat().st_size
            scan = (None if args.skip_scan else measure_child(
                [sys.executable, "-m", "replay", "scan", "--json", str(path)], limit,
                output=False))
            command = [sys.executable, __file__, "--child-app", str(path)]
            if not args.first_screen_only:
                command.append("--child-phases")
            app = None if args.skip_app else measure_child(command, limit)
            phases, turns = _phases(app[3]) if app is not None else ({}, None)
            rows.append((size, scan, app, phases))
            scan_text = (f"{'':>7} {'':>6} {'':>8}" if scan is None else
                         f"{scan[0]:7.1f} {scan[4]:6.1f} {scan[1] / size:7.2f}x")
            app_text = ""
            if app is not None:
                first = phases.get("first-screen", (math.nan, 0, math.nan))
                app_text = (f"{app[0]:7.1f} {app[1] / size:7.2f}x {first[0]:7.1f} "
                            f"{first[1] / size:7.2f}x  " + " ".join(
                                f"{phase} {seconds:.1f} {peak / size:.2f}x"
                                for phase, (seconds, peak, _) in phases.items()
                                if phase != "first-screen")
                            + ("" if app[2] == 0 else f" exit {app[2]}"))
            print(f"{name:<16} {size / 1e6:6.1f} {turns if turns is not None else '':>8} "
                  f"{scan_text} {app_text}" + ("" if scan is None or scan[2] == 0 else
                                               f"  scan exit {scan[2]}"), flush=True)
            if scan is not None:
                passed &= scan[2] == 0 and scan[1] / size <= SCAN_TARGET
            if app is not None:
                passed &= app[2] == 0 and app[1] / size <= APP_TARGET
        (size1, scan1, app1, phases1), (size2, scan2, app2, phases2) = rows
        grow = size2 / size1
        ratios = []
        if scan1 is not None and scan2 is not None:
            ratios.append(f"scan time x{scan2[0] / scan1[0]:.2f} (CPU x{scan2[4] / scan1[4]:.2f})"
                          f" RSS x{scan2[1] / scan1[1]:.2f}")
            passed &= scan2[4] / scan1[4] <= DOUBLING_TARGET * grow / 2  # CPU: load-proof
        if app1 is not None and app2 is not None:
            first1, first2 = phases1.get("first-screen"), phases2.get("first-screen")
            ratios.append(f"app time x{app2[0] / app1[0]:.2f} (CPU x{app2[4] / app1[4]:.2f})"
                          f" RSS x{app2[1] / app1[1]:.2f}")
            if first1 and first2:
                ratios.append(f"first screen x{first2[0] / first1[0]:.2f} "
                              f"(CPU x{first2[2] / first1[2]:.2f})")
        print(f"{'':<16} doubled ({grow:.2f}x the bytes): {'; '.join(ratios)}", flush=True)
        if not args.keep:
            for factor in (1, 2):
                shutil.rmtree(args.out / f"{name}-{factor}", ignore_errors=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
