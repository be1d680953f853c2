"""A whole-document file cut shorter while replay reads it: one clear line, never a crash.

The documents (chat JSON, ShareGPT, trajectories, opencode exports) used to be mapped, and a
mapped file that another process truncates kills the reader with SIGBUS ("Bus error",
exit 135, no message). Each case runs in a child process, so that the old way fails the test
instead of killing pytest. The child truncates the file at a fixed point of the read (a
monkeypatched hook, not a race): while the document's structure is scanned (its first
element checked), or once the first record has been fed to the builder, or the first
element parsed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

CUT = 1000
"""What the file is cut down to."""

CHILD = textwrap.dedent('''
    import os, sys
    import orjson
    from replay.core.readers import json_stream

    when, victim, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
    done = []

    def truncate():
        if not done:
            done.append(True)
            os.truncate(victim, cut)

    if when == "scan":  # the structure scan has checked its first element
        real_loads = orjson.loads
        def loads(data, *rest):
            value = real_loads(data, *rest)
            if isinstance(data, memoryview):
                truncate()
            return value
        orjson.loads = loads
    elif when in ("feed", "iter"):  # the first record is fed / the first element parsed
        name = "records" if when == "feed" else "__iter__"
        real = getattr(json_stream.Elements, name)
        def hooked(self, *args):
            for item in real(self, *args):
                yield item
                if len(self) > 100:  # the big document's array, not a small file's
                    truncate()
        setattr(json_stream.Elements, name, hooked)

    action = sys.argv[4]
    if action == "folder":  # the app on a folder read whole (`load_sessions`)
        from replay.core.readers import load_sessions
        for session in load_sessions(sys.argv[5]):
            print("session", os.path.basename(session.path))
            for warning in session.warnings:
                print("warning", warning)
        sys.exit(0)
    if action == "held":  # the app holds the loaded index; the file is cut afterwards
        from replay.core.readers import load_sessions
        from replay.core.session.model import Kind
        session = load_sessions(sys.argv[5], indexed=True)[0]
        turns = session.turns
        turns[len(turns) // 2]  # one turn read back: the index holds the file open
        os.truncate(victim, cut)
        said = set()
        for index in [*range(len(turns)), *reversed(range(len(turns)))]:
            for part in turns[index].parts:
                if part.kind == Kind.ERROR and part.name == "unreadable":
                    said.add(part.text)
        print("turns", len(turns), type(turns).__name__)
        for text in said:
            print("unreadable", text)
        found = turns.lines_with("message")
        print("search", "none" if found is None else len(found))
        sys.exit(0)
    if action == "cli":
        from replay.cli import main
        sys.exit(main(sys.argv[5:]))
    elif action == "app":
        import asyncio
        from replay.ui.app import make_app
        from tests.ui.conftest import TEST_SETTINGS
        app = make_app(sys.argv[5], settings=TEST_SETTINGS)
        async def run():
            async with app.run_test(size=(100, 30)) as pilot:
                for _ in range(1500):
                    if app.return_code is not None:
                        break
                    await pilot.pause(0.02)
        asyncio.run(run())  # the app's exit message is printed on stderr
        print("return", app.return_code)
    elif action == "entry":  # the app's count of a listed file (`read_entry`, indexed)
        from pathlib import Path
        from replay.core.readers import ReaderError, SessionEntry, detect_reader, read_entry
        path = Path(sys.argv[5])
        reader = detect_reader(path)
        try:
            read_entry(reader, SessionEntry(path.name, path, own_file=True), indexed=True)
        except ReaderError as error:
            print("error", error)
''')


def _run(when: str, victim: Path, *action: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TERM="dumb", COLUMNS="1000", PYTHONPATH=str(REPO))
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-c", CHILD, when, str(victim), str(CUT), *action],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)


def _alive(done: subprocess.CompletedProcess[str]) -> None:
    """The child ended by itself: no signal (SIGBUS is -7), no traceback."""
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr[-500:]}"
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]


def _changed(line: str, path: Path, size: int) -> None:
    """`line` is the one clear line: the path, what changed, the sizes expected and found."""
    assert str(path) in line, line
    assert f"file changed while it was read: {size:,} bytes expected, {CUT:,} found" in line, line


def _chat(path: Path, messages: int = 30_000) -> Path:
    """A chat JSON document of about 4 MB (several read windows), pretty-printed."""
    rows = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n} " + "x" * 100}
            for n in range(messages)]
    path.write_text(json.dumps({"messages": rows}, indent=1), encoding="utf-8")
    return path


def _sharegpt(path: Path) -> Path:
    turns = [{"from": "human" if n % 2 == 0 else "gpt", "value": f"turn {n} " + "y" * 100}
             for n in range(30_000)]
    path.write_text(json.dumps({"id": "s", "conversations": turns}, indent=1),
                    encoding="utf-8")
    return path


def _swe_agent(path: Path) -> Path:
    steps = [{"action": f"ls {n}", "observation": "z" * 200, "response": f"step {n}",
              "thought": "t"} for n in range(12_000)]
    value = {"trajectory": steps, "history": [{"role": "user", "content": "task"}],
             "info": {"exit_status": "submitted"}}
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def _mini_swe_agent(path: Path) -> Path:
    messages = [{"role": "system", "content": "you are an agent"},
                {"role": "user", "content": "fix it"}]
    for n in range(12_000):
        messages.append({"role": "assistant", "content": f"step {n}\n```bash\nls {n}\n```"})
        messages.append({"role": "user", "content": "<returncode>0</returncode>" + "o" * 150})
    value = {"info": {"exit_status": "Submitted", "submission": ""}, "messages": messages,
             "trajectory_format": "mini-swe-agent-1"}
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize("when", ["scan", "feed"])
@pytest.mark.parametrize("command", ["scan", "report"])
def test_scan_of_a_file_cut_while_read_says_so_in_one_line(
        tmp_path: Path, when: str, command: str) -> None:
    path = _chat(tmp_path / "big.chat.json")
    size = path.stat().st_size
    done = _run(when, path, "cli", command, str(path))
    _alive(done)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    _changed(lines[0], path, size)


@pytest.mark.parametrize("make", [_sharegpt, _swe_agent, _mini_swe_agent],
                         ids=["sharegpt", "swe-agent", "mini-swe-agent"])
@pytest.mark.parametrize("when", ["scan", "iter"])
def test_every_streamed_format_cut_while_read_is_one_line(
        tmp_path: Path, make: object, when: str) -> None:
    path = make(tmp_path / ("big.json" if make is _sharegpt else "big.traj.json"))  # type: ignore[operator]
    size = path.stat().st_size
    done = _run("feed" if when == "iter" and make is _sharegpt else when,
                path, "cli", "scan", "--json", str(path))
    _alive(done)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    _changed(lines[0], path, size)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_folder_scan_marks_the_cut_file_unreadable_and_scans_the_others(
        tmp_path: Path, jobs: str) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("a", "c"):
        (folder / f"{name}.chat.json").write_text(json.dumps({"messages": [
            {"role": "user", "content": f"hello {name}"}, {"role": "assistant", "content": ""}]}))
    victim = _chat(folder / "b.chat.json")
    size = victim.stat().st_size
    done = _run("feed", victim, "cli", "scan", "--json", "--jobs", jobs, str(folder))
    _alive(done)
    assert done.returncode == 1  # some files of the folder skipped, the rest read
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert [Path(report["path"]).name for report in reports] == ["a.chat.json", "c.chat.json"]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("replay: skipped ")
    _changed(lines[0], victim, size)


def test_the_app_loading_a_file_cut_while_read_says_so_and_exits_cleanly(
        tmp_path: Path) -> None:
    path = _chat(tmp_path / "big.chat.json")
    size = path.stat().st_size
    done = _run("feed", path, "app", str(path))
    _alive(done)
    assert "return 2" in done.stdout, done.stdout + done.stderr
    messages = done.stderr.strip().splitlines()
    assert len(messages) == 1, done.stderr
    assert messages[0].startswith("replay: ")
    _changed(messages[0], path, size)


@pytest.mark.parametrize("make", [_chat, _swe_agent], ids=["chat-json", "swe-agent"])
def test_the_app_counting_a_listed_file_cut_while_read_gets_one_error(
        tmp_path: Path, make: object) -> None:
    path = make(tmp_path / ("big.chat.json" if make is _chat else "big.traj"))  # type: ignore[operator]
    size = path.stat().st_size
    done = _run("feed" if make is _chat else "iter", path, "entry", str(path))
    _alive(done)
    errors = [line for line in done.stdout.splitlines() if line.startswith("error ")]
    assert len(errors) == 1, done.stdout + done.stderr
    _changed(errors[0], path, size)


def test_a_file_that_grows_while_read_is_read_as_it_was(tmp_path: Path) -> None:
    """An agent appending while the file is read: what was there when it was opened is
    read, as before (the appended bytes are for the next read)."""
    path = _chat(tmp_path / "big.chat.json")
    expected = _scan_json(path)
    grow = textwrap.dedent('''
        import sys
        from replay.core.readers import json_stream
        victim = sys.argv[1]
        real = json_stream.Elements.records
        def records(self):
            for number, item in enumerate(real(self)):
                yield item
                if number == 0:
                    with open(victim, "ab") as handle:
                        handle.write(b"\\n" * 5_000_000)
        json_stream.Elements.records = records
        from replay.cli import main
        sys.exit(main(["scan", "--json", "--no-cache", victim]))
    ''')
    done = subprocess.run([sys.executable, "-c", grow, str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    _alive(done)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected


def _scan_json(path: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "replay", "scan", "--json", "--no-cache",
                           str(path)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("make", [_chat, _swe_agent, _mini_swe_agent],
                         ids=["chat-json", "swe-agent", "mini-swe-agent"])
def test_a_held_index_read_back_after_the_file_was_cut_says_so_in_each_turn(
        tmp_path: Path, make: object) -> None:
    """The app's `TurnIndex` / `DocumentTurnIndex` reads turns back from their spans: past
    the cut, each says it could not be read back (and why); search still answers."""
    path = make(tmp_path / ("big.chat.json" if make is _chat else "big.traj.json"))  # type: ignore[operator]
    done = _run("none", path, "held", str(path))
    _alive(done)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("TurnIndex"), lines[0]
    said = [line for line in lines if line.startswith("unreadable ")]
    # The sizes then and now are said too (the index's stamp of the file).
    size = path.stat().st_size
    assert len(said) == 1 and re.fullmatch(
        rf"unreadable this turn could not be read back from {re.escape(str(path))}: the file "
        rf"is shorter than when it was read \([\d,]+ bytes then, {size:,} now\)",
        said[0]), lines
    assert lines[-1].startswith("search "), lines[-1]


def test_the_app_on_a_folder_loads_the_other_sessions_and_names_the_cut_file(
        tmp_path: Path) -> None:
    """A folder read whole (the app on a folder of chat files): the cut file is one
    `skipped` warning naming it (not the folder), the other sessions are read."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.chat.json").write_text(json.dumps({"messages": [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": ""}]}))
    victim = _chat(folder / "b.chat.json")
    size = victim.stat().st_size
    done = _run("iter", victim, "folder", str(folder))
    _alive(done)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("session ")] == ["session a.chat.json"]
    warnings = [line for line in lines if line.startswith("warning ")]
    assert len(warnings) == 1 and warnings[0].startswith("warning skipped "), lines
    _changed(warnings[0], victim, size)
