"""A hostile corpus through the real command line: odd file names, escape sequences in names
and content, special files. No traceback, one stderr line per problem, exit codes that say
what happened, nothing raw reaches a terminal, and files and pipes keep the text as it is."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

HOSTILE_TEXT = ("title \x1b]0;PWNED\x07 clip \x1b]52;c;aGk=\x07 red \x1b[31m c1 \x9b31m "
                "bidi \u202eevil\u202c mark \u200e zw \u200b\u2060 end")
"""Every kind of sequence a transcript could try on a terminal."""

CHAT = {"messages": [
    {"role": "user", "content": f"q {HOSTILE_TEXT}"},
    {"role": "assistant", "content": "Plan: pin the seed."},
    {"role": "user", "content": ""},
    {"role": "assistant", "content": f"ok {HOSTILE_TEXT}"},
]}

HOSTILE_NAMES = [b"x\xff.json", b"t\x1b]0;TITLE\x07.json", b"c\x1b[31mred.json",
                 b"c1\xc2\x9b31m.json", b"bidi\xe2\x80\xaegnp.json", b"zw\xe2\x80\x8bx.json"]
"""Not UTF-8, OSC 0 with BEL, CSI, 8-bit C1 (as UTF-8), a bidi override, a zero-width space."""

RAW = re.compile(
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8b-\x8f\xaa-\xae]"
    rb"|\xe2\x81[\xa0-\xa4\xa6-\xa9]|\xef\xbb\xbf"
)
"""Bytes that must never reach a terminal raw: C0 but tab, newline and CR; DEL; C1 as UTF-8;
bidi controls and zero-width characters; and stray bytes that are not UTF-8 (\xff)."""


def _raw_controls(data: bytes) -> list[bytes]:
    found = [match.group(0) for match in RAW.finditer(data)]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        found.append(b"<not UTF-8>")
    return found


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, TERM="dumb", COLUMNS="160", LINES="50", **extra)
    env.pop("FORCE_COLOR", None)
    return env


def replay(*args: str | bytes, env: dict[str, str] | None = None,
           stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[bytes]:
    """Run `python -m replay` with output to pipes."""
    return subprocess.run([sys.executable, "-m", "replay", *args], capture_output=True,
                          env=env or _env(), stdin=stdin, timeout=60, cwd=REPO)


def replay_on_terminal(*args: str | bytes, env: dict[str, str] | None = None
                       ) -> tuple[int, bytes, bytes]:
    """Run `python -m replay` with standard output on a pseudo-terminal: (status, out, err)."""
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "replay", *args], stdout=slave,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=env or _env(), cwd=REPO)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            out += chunk
        elif process.poll() is not None:
            break
    os.close(master)
    assert process.stderr is not None
    err = process.stderr.read()
    return process.wait(timeout=10), out, err


def _no_traceback(err: bytes) -> None:
    assert b"Traceback" not in err and b"Error:" not in err.replace(b"replay:", b""), err


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Hostile names, hostile content, and the special files a folder can hold."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    data = json.dumps(CHAT).encode()
    for name in HOSTILE_NAMES:
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write(data)
    (folder / "plain.json").write_bytes(data)
    (folder / "link.json").symlink_to(folder / "plain.json")
    (folder / "loop.json").symlink_to("loop.json")
    (folder / "null.json").symlink_to("/dev/null")
    os.mkfifo(folder / "fifo.json")
    (folder / "notes.json").write_text("not a transcript\n")
    locked = folder / "locked.json"
    locked.write_bytes(data)
    locked.chmod(0)
    return folder


SKIPPED_FILES = {"loop.json", "null.json", "fifo.json", "notes.json"}
"""Files of the corpus that are no session (locked.json too, unless run as root)."""


def _skipped(corpus: Path) -> set[str]:
    readable = os.access(corpus / "locked.json", os.R_OK)
    return SKIPPED_FILES | (set() if readable else {"locked.json"})


def _name(raw: bytes) -> str:
    return os.fsdecode(raw)


def test_scan_table_on_a_terminal_shows_everything_escaped(corpus: Path) -> None:
    status, out, err = replay_on_terminal("scan", str(corpus))
    _no_traceback(err)
    assert status == 1  # some files skipped, the rest read
    assert _raw_controls(out) == [] and _raw_controls(err) == []
    lines = err.decode().splitlines()
    assert sorted(line.split(corpus.name + "/")[1].split(":")[0] for line in lines) == sorted(
        _skipped(corpus))
    assert all(line.startswith("replay: skipped ") for line in lines)
    assert "symbolic link loop" in err.decode() and "no such file" not in err.decode()
    shown = out.decode()
    # The names, visibly escaped, each once as a path; each session is headed by its first
    # prompt (no title), escaped the same way.
    for visible in ("x\\xff.json", "t␛[ESC]]0;TITLE[BEL].json", "c␛[ESC][31mred.json",
                    "c1[CSI]31m.json", "bidi<U+202E>gnp.json", "zw<U+200B>x.json"):
        assert shown.count(visible) == 1, visible
    read = len(HOSTILE_NAMES) + 2 + (1 if "locked.json" not in _skipped(corpus) else 0)
    assert shown.count("q title ␛[ESC]]0;PWNED[BEL] clip ") == read  # + plain, link


def test_scan_json_is_lossless_and_terminal_safe(corpus: Path) -> None:
    result = replay("scan", "--json", str(corpus))
    _no_traceback(result.stderr)
    assert result.returncode == 1
    assert _raw_controls(result.stdout) == []
    assert len(result.stderr.splitlines()) == len(_skipped(corpus))
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    by_name: dict[bytes, dict[str, object]] = {}
    for report in reports:
        raw = base64.b64decode(report["path_base64"]) if "path_base64" in report \
            else report["path"].encode()
        by_name[os.path.basename(raw)] = report
        keys = ("index", "number", "id", "role", "reason")
        assert [tuple(empty[key] for key in keys) for empty in report["empty_turns"]] == [
            (2, 3, "m2", "user", "blank-text")]
    assert set(HOSTILE_NAMES) <= set(by_name)
    # Only the name that is not UTF-8 needs the base64 field; its text shows the byte.
    assert by_name[b"x\xff.json"]["path"].endswith("/x\\xff.json")
    assert [name for name, report in by_name.items() if "path_base64" in report] == [b"x\xff.json"]
    # Decoded JSON gives the name back exactly, control characters included.
    assert by_name[b"t\x1b]0;TITLE\x07.json"]["path"].endswith("/t\x1b]0;TITLE\x07.json")


def test_closed_pipes_exit_zero_quietly(corpus: Path) -> None:
    for args in (["scan", str(corpus)], ["scan", "--json", str(corpus)]):
        process = subprocess.Popen([sys.executable, "-m", "replay", *args], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=_env())
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # `| head -1`
        err = process.stderr.read()
        status = process.wait(timeout=60)
        assert b"Broken pipe" not in err and b"Traceback" not in err
        # Quiet either way: 0 when the closed pipe ended the run, 1 when it had already
        # finished (small output fits in the pipe) with files skipped.
        assert status in (0, 1)
    # Output far larger than a pipe holds: the closed pipe is always met.
    big = corpus.parent / "big"
    big.mkdir()
    messages = [{"role": role, "content": "" if role == "user" else "ok"}
                for _ in range(1500) for role in ("user", "assistant")]
    for number in range(3):
        (big / f"s{number}.json").write_text(json.dumps({"messages": messages}))
    for args in (["scan", str(big)], ["scan", "--json", str(big)], ["report", str(big)],
                 ["review", "--json", str(big)]):
        process = subprocess.Popen([sys.executable, "-m", "replay", *args], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()
        assert process.stderr.read() == b""
        assert process.wait(timeout=60) == 0


def test_a_symlink_loop_is_not_no_such_file(corpus: Path) -> None:
    result = replay("scan", str(corpus / "loop.json"))
    assert result.returncode == 2
    assert result.stderr.decode() == f"replay: {corpus}/loop.json: symbolic link loop\n"


def test_a_device_read_as_opencode_is_one_line(corpus: Path) -> None:
    result = replay("scan", "--format", "opencode", "/dev/urandom")
    assert result.returncode == 2
    assert result.stderr == b"replay: /dev/urandom: a character device, not a transcript file\n"


def test_watch_prints_number_and_a_lossless_path(corpus: Path) -> None:
    target = os.path.join(os.fsencode(corpus), b"x\xff.json")
    process = subprocess.Popen([sys.executable, "-m", "replay", "watch", "--from-start",
                                target], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_env(), cwd=REPO)
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline()
    process.send_signal(signal.SIGINT)
    status = process.wait(timeout=30)
    err = process.stderr.read()
    _no_traceback(err)
    assert (status, err) == (0, b"")
    assert _raw_controls(line) == []
    record = json.loads(line)
    assert (record["index"], record["number"], record["id"]) == (2, 3, "m2")
    assert base64.b64decode(record["path_base64"]) == target


def test_export_file_is_faithful_terminal_is_escaped(corpus: Path, tmp_path: Path) -> None:
    source = str(corpus / _name(b"x\xff.json"))
    output = tmp_path / "out.csv"
    result = replay("export", "--all-empty", source, "-o", str(output))
    _no_traceback(result.stderr)
    assert result.returncode == 0
    assert result.stderr == f"replay: wrote 1 row (csv) to {output}\n".encode()
    [row] = list(csv.DictReader(io.StringIO(output.read_text(encoding="utf-8-sig"))))
    assert row["source_path"].endswith("/x\\xff.json")
    assert row["after_excerpt"].startswith("#4 assistant: ok title \x1b]0;PWNED\x07 clip ")
    assert "\u202eevil" in row["after_excerpt"]
    # JSON lines through a pipe: the same text once decoded, nothing raw on the way.
    lines = replay("export", "--all-empty", "--as", "jsonl", source)
    assert _raw_controls(lines.stdout) == []
    assert json.loads(lines.stdout)["after_excerpt"] == row["after_excerpt"]
    # CSV on a terminal: every cell escaped.
    status, out, err = replay_on_terminal("export", "--all-empty", source)
    assert status == 0 and _raw_controls(out) == [] and _raw_controls(err) == []
    assert "␛[ESC]]0;PWNED[BEL]" in out.decode() and "<U+202E>evil" in out.decode()


def test_export_writes_through_links_fifos_and_devices(corpus: Path, tmp_path: Path) -> None:
    source = str(corpus / "plain.json")
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert replay("export", "--all-empty", source, "-o", str(link)).returncode == 0
    assert link.is_symlink() and real.read_text(encoding="utf-8-sig").startswith("session_id,")
    # Case studies are written the same way.
    notes = tmp_path / "notes.md"
    notes.write_text("old")
    (tmp_path / "notes-link.md").symlink_to(notes)
    result = replay("export", "--all-empty", "--format", "md", source, "-o",
                    str(tmp_path / "notes-link.md"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "notes-link.md").is_symlink() and notes.read_text() != "old"
    assert replay("export", "--all-empty", source, "-o", "/dev/null").returncode == 0
    assert Path("/dev/null").is_char_device()
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = replay("export", "--all-empty", source, "-o", str(fifo))
    reader.join(30)
    assert result.returncode == 0 and fifo.exists() and not fifo.is_file()
    assert received[0].startswith(b"\xef\xbb\xbfsession_id,")


def test_special_files_as_journal_labels_config_are_refused_before_reading(
        corpus: Path, tmp_path: Path) -> None:
    fifo = str(corpus / "fifo.json")
    source = str(corpus / "plain.json")
    for args in (["label", source, "--turn", "#3", "--label", "continue", "--annotations", fifo],
                 ["export", source, "--annotations", fifo],
                 ["label", source, "--turn", "#3", "--label", "continue", "--labels", fifo],
                 ["agree", fifo]):
        result = replay(*args)
        assert result.returncode == 2, args
        assert result.stderr.decode() == (
            f"replay: {fifo}: cannot use a FIFO (named pipe) as "
            f"{'a label file' if '--labels' in args else 'an annotation journal'}; "
            "expected a regular file\n"), args
    result = replay("label", source, "--turn", "#3", "--label", "continue", "--labels",
                    "/dev/zero")
    assert result.returncode == 2
    assert result.stderr == (b"replay: /dev/zero: cannot use a character device as a label "
                             b"file; expected a regular file\n")
    for config in ("/dev/zero", fifo):
        result = replay("label", source, "--turn", "#3", "--label", "continue",
                        "--annotations", str(tmp_path / "j.jsonl"),
                        env=_env(REPLAY_CONFIG_FILE=config))
        assert result.returncode == 0
        assert result.stderr.decode().startswith(f"replay: warning: {config}: cannot use a ")
        assert result.stderr.decode().endswith("; using defaults\n")
        assert result.stderr.count(b"\n") == 1
    result = replay("agree", str(corpus / "loop.json"))
    assert result.returncode == 2 and b"symbolic link loop" in result.stderr


def test_label_and_agree_with_hostile_names(corpus: Path, tmp_path: Path) -> None:
    source = os.path.join(os.fsencode(corpus), b"t\x1b]0;TITLE\x07.json")
    journal = tmp_path / "j\x1b]0;J\x07.jsonl"
    status, out, err = replay_on_terminal(
        "label", source, "--turn", "#3", "--label", "continue", "--reviewer",
        "ana\x1b]0;R\x07\u202e", "--annotations", str(journal))
    assert (status, err) == (0, b"")
    assert _raw_controls(out) == []
    assert "by ana␛[ESC]]0;R[BEL]<U+202E> in " in out.decode()
    assert out.decode().rstrip().endswith("j␛[ESC]]0;J[BEL].jsonl")
    result = replay("label", source, "--turn", "x\x1b]0;T\x07", "--label", "continue",
                    "--annotations", str(journal))
    assert result.returncode == 2 and _raw_controls(result.stderr) == []
    assert result.stderr.count(b"\n") == 1
    other = tmp_path / "bo.jsonl"
    assert replay("label", source, "--turn", "#3", "--label", "artifact", "--reviewer",
                  "bo\u200b", "--annotations", str(other)).returncode == 0
    status, out, err = replay_on_terminal("agree", str(journal), str(other))
    assert (status, err) == (0, b"")
    assert _raw_controls(out) == []
    assert re.search(r"\S+\s+#3\s+continue\s+artifact", out.decode())
    result = replay("agree", "--json", str(journal), str(other))
    assert _raw_controls(result.stdout) == []
    report = json.loads(result.stdout)
    assert report["reviewers"] == ["ana\x1b]0;R\x07\u202e", "bo\u200b"]
    assert report["disagreements"][0]["number"] == 3


def test_a_python_warning_during_a_command_is_one_escaped_line_of_ours(tmp_path: Path) -> None:
    """A library's warning (matplotlib's missing glyph for a NUL in a chart label was one)
    printed Python's two lines, file and source, raw: now `replay: warning: ...`, one line,
    its controls and line feeds escaped; the command's output is as ever."""
    session = REPO / "sample_sessions" / "deploy-pivot.opencode.json"
    code = (
        "import sys, warnings\n"
        "import replay.commands.scan as scan\n"
        "from replay import cli\n"
        "real = scan.run\n"
        "def run(args):\n"
        "    warnings.warn('Glyph 0 (\\x00) missing\\x1b[2J\\nreplay: forged', UserWarning)\n"
        "    return real(args)\n"
        "scan.run = run\n"
        f"sys.exit(cli.main(['scan', '--json', '--no-cache', {str(session)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])
    lines = done.stderr.decode().splitlines()
    assert lines == ["replay: warning: UserWarning: Glyph 0 ([NUL]) missing␛[ESC][2J[LF]"
                     "replay: forged"], lines
