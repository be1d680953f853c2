"""The machine-wide session list: first screen and full counts on a generated home.

`python bench/bench_sessions.py [--sessions 2000] [--counts] [--rounds 3]`

Generates (once, kept in bench/out/, git-ignored) a home holding `--sessions` sessions spread
evenly over the four agents, each made from the real files of ../shared/realdata by repeating
their records under fresh ids (about 1 MB a session: 2,000 sessions are about 2 GB):
Claude Code project folders, Codex rollouts by date, one opencode.db, Gemini CLI chats. Then,
in the same run, it measures headless (Textual's test driver, 160x45):

1. **first screen** of `replay` with no PATH (discovery included) until the list's rows
   are on screen; baseline: today's one-folder picker on a folder holding the same files
   (hard links) and the same database, until its rows are on screen.
2. **usable while counting**: with counts still coming in, `/` and a filter typed: the time
   until the filtered rows show (and how many counts were in by then).
3. with `--counts`: **full counts** of the machine-wide list, until every row has its
   turns: with `--no-cache` (every session read, as before the cache), then a first run on
   an empty scan cache (every session read, each summary kept) and a second run on the
   unchanged home (counts read from the cache), with how many counts were in at its first
   screen. The cache is a temporary folder of this run (`REPLAY_CACHE_DIR`); the alternated
   first-screen rounds run with `--no-cache`, so they measure the same work every time.
5. with `--after-scan`: `replay scan` and the session lists through one cache, each pair on
   a fresh cache: `replay scan --json` of the agents' folders (`--jobs 2`), then
   `replay sessions --json`; the scan, then the app's full counts; and
   `replay sessions --json`, then the scan; `replay scan` twice, `replay report` twice and
   the app's full counts twice; each second run beside the same command on no cache
   (`--no-cache`: what a user without the other run first waits), as CPU ratios.
4. with `--shared`: the two session lists through one cache, each on a fresh cache:
   `replay sessions --json` (a subprocess, `--jobs 2`) then the app's full counts; and the
   app's full counts then `replay sessions --json`. The second of each pair is the wait of a
   user who ran the other one first (wall and, for the command, CPU of the process).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
REALDATA = REPO.parent / "shared" / "realdata"
OUT = REPO / "bench" / "out"

CLAUDE = ["claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-"
          "JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
          "claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-"
          "claude-code-log-sample__fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"]
CODEX = "codex/localpush__src-tauri__tests__fixtures__codex__2026-02-23__raw__sessions__" \
    "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
GEMINI = "gemini-cli/codemie-code__tests__integration__metrics__fixtures__gemini__" \
    "session-2025-12-01T21-45-5b959dae.json"
OPENCODE = "opencode/dark-factory__docs__chats__opencode__session__silent-panda__" \
    "ses_39b3d0892ffeaCoiaHPszzRI8d.json"


def generate(home: Path, count: int) -> None:
    """The home, made once per size."""
    per = count // 4
    claude_lines = b"".join((REALDATA / name).read_bytes() for name in CLAUDE)
    old_ids = [b"7acd37a8-2745-4b58-a8a9-46164b22ad9e", b"fe869ecb-c176-478f-9734-7e4b8ef12cff"]
    for number in range(per):
        new = str(uuid.uuid4())
        data = claude_lines
        for old in old_ids:
            data = data.replace(old, new.encode())
        folder = home / ".claude" / "projects" / f"-home-me-project-{number % 25}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{new}.jsonl").write_bytes(data)
    codex = (REALDATA / CODEX).read_bytes()
    for number in range(per):
        new = str(uuid.uuid4())
        day = home / ".codex" / "sessions" / "2026" / "11" / f"{1 + number % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        data = codex.replace(b"019c8a59-e9dd-71f0-9ae3-4079fe9726a9", new.encode())
        (day / f"rollout-2026-11-{1 + number % 28:02d}T12-00-00-{new}.jsonl").write_bytes(data)
    gemini = orjson.loads((REALDATA / GEMINI).read_bytes())
    for number in range(per):
        new = str(uuid.uuid4())
        messages = [{**message, "id": f"{message.get('id')}-{copy}"}
                    for copy in range(11) for message in gemini["messages"]]
        document = {**gemini, "sessionId": new, "messages": messages}
        chats = home / ".gemini" / "tmp" / f"project-{number % 25}" / "chats"
        chats.mkdir(parents=True, exist_ok=True)
        (chats / f"session-2025-12-01T21-45-{new[:8]}.json").write_bytes(orjson.dumps(document))
    _opencode(home / ".local" / "share" / "opencode" / "opencode.db", per)


def _opencode(path: Path, count: int) -> None:
    from tests.core.test_opencode import SCHEMA, without

    path.parent.mkdir(parents=True, exist_ok=True)
    document = orjson.loads((REALDATA / OPENCODE).read_bytes())
    info = document["info"]
    connection = sqlite3.connect(path)
    connection.executescript(SCHEMA)
    for number in range(count):
        session = f"{info['id']}{number:05d}"
        connection.execute("INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
                           (session, info["projectID"], info["slug"], info["directory"],
                            f"{info['title']} #{number}", info["version"],
                            info["time"]["created"] + number, info["time"]["updated"] + number))
        for message in document["messages"]:
            mi = message["info"]
            message_id = f"{mi['id']}{number:05d}"
            created = mi["time"]["created"]
            connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                               (message_id, session, created, created,
                                without(mi, "id", "sessionID").decode()))
            for part in message["parts"]:
                connection.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                                   (f"{part['id']}{number:05d}", message_id, session, created,
                                    created, without(part, "id", "sessionID",
                                                     "messageID").decode()))
    connection.commit()
    connection.close()


def one_folder(home: Path, folder: Path, count: int) -> None:
    """Today's fastest picker: one Claude Code project folder of `count` session files
    (hard links to the home's Claude Code sessions, each under a name of its own)."""
    if folder.exists():
        return
    folder.mkdir(parents=True)
    sessions = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    for number in range(count):
        os.link(sessions[number % len(sessions)], folder / f"{uuid.uuid4()}.jsonl")


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


async def measure(app_factory, filter_text: str, counts: bool) -> dict[str, float]:  # noqa: ANN001
    from replay.ui.screens.picker import SessionPicker
    from replay.ui.widgets.session_table import SessionTable

    started = time.perf_counter()
    app = app_factory()
    figures: dict[str, float] = {}
    async with app.run_test(size=(160, 45)):
        def picker() -> SessionPicker | None:
            screen = app.screen
            return screen if isinstance(screen, SessionPicker) else None

        def rows() -> int:
            shown = picker()
            if shown is None or not shown.is_mounted:
                return 0
            tables = shown.query(SessionTable)
            return tables.first().row_count if tables else 0

        # Polled with plain sleeps: the driver's own pause waits for the app to be idle,
        # which it is not while counts keep arriving.
        while not rows():
            await asyncio.sleep(0.005)
        await asyncio.sleep(1 / 60)  # the next frame paints them
        figures["first screen s"] = time.perf_counter() - started
        shown = picker()
        table = shown.query_one(SessionTable)
        figures["rows"] = table.row_count
        before = table.row_count
        figures["counted at first screen"] = before - shown._waiting
        from textual.widgets import Input

        typed = time.perf_counter()
        shown.action_filter()
        shown.query_one("#picker-filter", Input).value = filter_text
        while table.row_count == before and time.perf_counter() - typed < 30:
            await asyncio.sleep(0.005)
        figures["filter while counting s"] = time.perf_counter() - typed
        figures["counts in when filtered"] = len(shown.rows) - shown._waiting
        shown.query_one("#picker-filter", Input).value = ""
        if counts:
            while shown._waiting:
                await asyncio.sleep(0.1)
            figures["full counts s"] = time.perf_counter() - started
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--counts", action="store_true", help="also wait for every count")
    parser.add_argument("--rounds", type=int, default=3,
                        help="measured runs of each (after one warm-up run each)")
    parser.add_argument("--shared", action="store_true",
                        help="only: replay sessions then the app's counts, and the other way "
                             "round, each pair on a fresh cache")
    parser.add_argument("--after-scan", action="store_true",
                        help="only: replay scan then the session lists, and replay sessions "
                             "then replay scan, each pair on a fresh cache")
    args = parser.parse_args()
    compileall.compile_dir(REPO / "replay", quiet=1)  # imports from bytecode, as installed
    home = OUT / f"home-{args.sessions}"
    if not home.exists():
        began = time.perf_counter()
        generate(home, args.sessions)
        print(f"generated {home} in {time.perf_counter() - began:.0f} s")
    folder = OUT / f"folder-{args.sessions}"
    one_folder(home, folder, args.sessions)
    print(f"home: {args.sessions:,} sessions, {size_of(home) / 1e9:.2f} GB; load: "
          f"{os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    os.environ["HOME"] = str(home)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME", "GEMINI_CLI_HOME"):
        os.environ.pop(name, None)
    from replay.config import Settings
    from replay.resources import default_sample
    from replay.ui.app import make_app

    settings = Settings(animations=False)

    os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")

    def machine(cache: bool = False):  # noqa: ANN202
        # As `replay` with no PATH builds it: discovery runs in the app's worker.
        return make_app(default_sample(), settings=settings, discover=True, cache=cache)

    def baseline():  # noqa: ANN202
        return make_app(folder, settings=settings, cache=False)

    if args.shared:
        return shared(machine)
    if args.after_scan:
        return after_scan(machine)

    import statistics

    runs: dict[str, list[dict[str, float]]] = {"one-folder picker (today)": [],
                                               "machine-wide list": []}
    factories = {"one-folder picker (today)": baseline, "machine-wide list": machine}
    # Alternated, the first of each thrown away: the first app of a process pays for
    # imports and stylesheet parsing that every later one finds done.
    for round_number in range(args.rounds + 1):
        for name, factory in factories.items():
            figures = asyncio.run(measure(factory, "-3", False))
            if round_number:
                runs[name].append(figures)
    for name, figures in runs.items():
        first = [f["first screen s"] for f in figures]
        typed = [f["filter while counting s"] for f in figures]
        line = (f"{name}: first screen median {statistics.median(first):.2f} s "
                f"(min {min(first):.2f}, {len(first)} runs), rows {int(figures[0]['rows'])}, "
                f"filter while counting median {statistics.median(typed):.2f} s "
                f"(counts in then: {int(figures[0]['counts in when filtered'])})")
        if "full counts s" in figures[0]:
            line += f", full counts {figures[0]['full counts s']:.0f} s"
        print(line)
    ratio = statistics.median(f["first screen s"] for f in runs["machine-wide list"]) / \
        statistics.median(f["first screen s"] for f in runs["one-folder picker (today)"])
    print(f"first screen ratio (machine-wide / one folder, medians): {ratio:.2f}x "
          "(target <= 1.5x)")
    if args.counts:
        for name, cache in (("--no-cache", False), ("first run, empty cache", True),
                            ("second run, unchanged home", True)):
            figures = asyncio.run(measure(lambda cache=cache: machine(cache), "-3", True))
            print(f"full counts, {name}: {figures['full counts s']:.2f} s "
                  f"(counts in at the first screen: {int(figures['counted at first screen'])}"
                  f" of {int(figures['rows'])}; first screen {figures['first screen s']:.2f} s)")
        print(f"load at the end: {os.getloadavg()[0]:.2f}")
    return 0


def sessions_command(*extra: str, command: str = "sessions") -> tuple[float, float, int]:
    """`replay sessions --json --jobs 2` in a subprocess: wall s, CPU s of it and its
    workers, rows printed. (`command`: another replay command, `extra` its arguments;
    `report` prints its tables, not JSON.)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    json = [] if command == "report" else ["--json"]
    done = subprocess.run([sys.executable, "-m", "replay", command, *json, "--jobs", "2",
                           *extra], capture_output=True, check=command == "sessions",
                          cwd=REPO)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(done.stdout.splitlines())


def shared(machine) -> int:  # noqa: ANN001
    """`replay sessions` then the app, and the app then `replay sessions`, on fresh caches."""
    def app_counts() -> dict[str, float]:
        began = time.process_time()
        figures = asyncio.run(measure(lambda: machine(True), "-3", True))
        figures["cpu s"] = time.process_time() - began
        return figures

    for order in ("sessions, then the app", "the app, then sessions"):
        os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
        load = os.getloadavg()[0]
        if order.startswith("sessions"):
            wall, cpu, rows = sessions_command()
            figures = app_counts()
            print(f"{order} (load {load:.1f}): replay sessions {wall:.2f} s wall, {cpu:.2f} s "
                  f"CPU, {rows} rows; then the app's full counts {figures['full counts s']:.2f}"
                  f" s ({figures['cpu s']:.2f} s CPU; counts in at its first screen: "
                  f"{int(figures['counted at first screen'])} of {int(figures['rows'])})")
        else:
            figures = app_counts()
            wall, cpu, rows = sessions_command()
            print(f"{order} (load {load:.1f}): the app's full counts "
                  f"{figures['full counts s']:.2f} s ({figures['cpu s']:.2f} s CPU); then "
                  f"replay sessions {wall:.2f} s wall, {cpu:.2f} s CPU, {rows} rows")
    print(f"load at the end: {os.getloadavg()[0]:.2f}")
    return 0

def after_scan(machine) -> int:  # noqa: ANN001
    """`replay scan` of the agents' folders then the session lists, and `replay sessions`
    then the scan, each pair on a fresh cache, beside the same second run with no cache."""
    from replay.core.discovery import places

    roots = [str(place.path) for place in places() if place.path.exists()]

    def app_counts(cache: bool) -> tuple[float, float]:
        began = time.process_time()
        figures = asyncio.run(measure(lambda: machine(cache), "-3", True))
        return figures["full counts s"], time.process_time() - began

    load = os.getloadavg()[0]
    cold_sessions = sessions_command("--no-cache")
    cold_scan = sessions_command("--no-cache", *roots, command="scan")
    cold_app = app_counts(False)
    print(f"no cache (load {load:.1f}): replay sessions {cold_sessions[0]:.2f} s wall, "
          f"{cold_sessions[1]:.2f} s CPU; replay scan {cold_scan[0]:.2f} s, {cold_scan[1]:.2f} "
          f"s CPU, {cold_scan[2]} reports; the app's full counts {cold_app[0]:.2f} s "
          f"({cold_app[1]:.2f} s CPU)")
    os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
    load = os.getloadavg()[0]
    scan = sessions_command(*roots, command="scan")
    listed = sessions_command()
    print(f"replay scan, then replay sessions (load {load:.1f}): scan {scan[0]:.2f} s "
          f"({scan[1]:.2f} s CPU); then replay sessions {listed[0]:.2f} s, {listed[1]:.2f} s "
          f"CPU = {listed[1] / cold_sessions[1]:.3f}x of no cache")
    os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
    load = os.getloadavg()[0]
    scan = sessions_command(*roots, command="scan")
    shown = app_counts(True)
    print(f"replay scan, then the app (load {load:.1f}): scan {scan[0]:.2f} s "
          f"({scan[1]:.2f} s CPU); then the app's full counts {shown[0]:.2f} s, "
          f"{shown[1]:.2f} s CPU = {shown[1] / cold_app[1]:.3f}x of no cache")
    os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
    load = os.getloadavg()[0]
    listed = sessions_command()
    scan = sessions_command(*roots, command="scan")
    print(f"replay sessions, then replay scan (load {load:.1f}): sessions {listed[0]:.2f} s "
          f"({listed[1]:.2f} s CPU); then scan {scan[0]:.2f} s, {scan[1]:.2f} s CPU = "
          f"{scan[1] / cold_scan[1]:.3f}x of no cache, {scan[2]} reports")
    # The same consumer twice on one cache: the second run on the unchanged home.
    cold_report = sessions_command("--no-cache", *roots, command="report")
    for command, cold in (("scan", cold_scan), ("report", cold_report)):
        os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
        load = os.getloadavg()[0]
        first = sessions_command(*roots, command=command)
        second = sessions_command(*roots, command=command)
        print(f"replay {command}, then replay {command} (load {load:.1f}): first "
              f"{first[1]:.2f} s CPU, second {second[0]:.2f} s, {second[1]:.2f} s CPU = "
              f"{second[1] / cold[1]:.3f}x of no cache ({cold[1]:.2f} s CPU)")
    os.environ["REPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-sessions-cache-")
    load = os.getloadavg()[0]
    shown = app_counts(True)
    again = app_counts(True)
    print(f"the app, then the app (load {load:.1f}): full counts {shown[0]:.2f} s "
          f"({shown[1]:.2f} s CPU), then {again[0]:.2f} s, {again[1]:.2f} s CPU = "
          f"{again[1] / cold_app[1]:.3f}x of no cache")
    print(f"load at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
