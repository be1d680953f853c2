"""Transcripts given through a pipe (`replay scan <(zcat x.gz)`, `-` for standard input) are
copied to a file first, since detection, reading and the raw view each read them again."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.readers import load_sessions
from replay.core.readers.spool import is_pipe, spooled
from replay.resources import default_sample
from tests.ui.sessions import write_chat

ROOT = Path(__file__).resolve().parents[2]


def fifo_with(tmp_path: Path, data: bytes) -> Path:
    """A named pipe that a thread fills with `data` once it is opened."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as handle:
            handle.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


def test_a_named_pipe_is_read_as_the_file_it_carries(tmp_path: Path) -> None:
    sample = default_sample()
    pipe = fifo_with(tmp_path, sample.read_bytes())
    assert is_pipe(pipe) and not is_pipe(sample)
    copy = spooled(pipe)
    assert copy.read_bytes() == sample.read_bytes()
    from_pipe, from_file = load_sessions(copy)[0], load_sessions(sample)[0]
    assert [t.id for t in from_pipe.turns] == [t.id for t in from_file.turns]
    # The same content lands at the same path: annotations keyed by path find it again.
    assert spooled(fifo_with(tmp_path / "again", sample.read_bytes())) == copy


def test_scan_of_a_pipe_and_its_errors_name_what_was_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chat = write_chat(tmp_path / "chat.json")
    fifo = fifo_with(tmp_path, chat.read_bytes())
    assert main(["scan", "--json", str(fifo)]) == 0
    report = orjson.loads(capsys.readouterr().out.splitlines()[0])
    assert report["path"] == str(fifo)  # what was given, not the copy removed at exit
    assert [e["index"] for e in report["empty_turns"]] == [9, 20]
    assert [e["number"] for e in report["empty_turns"]] == [10, 21]
    junk = fifo_with(tmp_path / "junk", b"\x00\x01 not a transcript")
    assert main(["scan", str(junk)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"replay: {junk}: file not recognised") and "\n" not in error


def test_standard_input_for_the_commands_and_refusals_for_following(tmp_path: Path) -> None:
    chat = write_chat(tmp_path / "chat.json")

    def replay(*args: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "replay", *args], input=data,
                              capture_output=True, cwd=ROOT, timeout=60, check=False)

    done = replay("scan", "--json", "-", data=chat.read_bytes())
    assert done.returncode == 0
    report = orjson.loads(done.stdout.splitlines()[0])
    # Named as given: the copy it was read into is removed at exit.
    assert report["turns"] == 30 and report["path"] == "-"
    refused = replay("scan", "-", data=b"garbage")
    assert refused.returncode == 2
    assert refused.stderr.decode().startswith("replay: standard input: file not recognised")
    for args in (("watch", "-"), ("-",), ("--follow", "-")):
        done = replay(*args, data=chat.read_bytes())
        lines = done.stderr.decode().strip().splitlines()
        assert (done.returncode, len(lines)) == (2, 1), args
        assert lines[0].startswith("replay: standard input:"), args
