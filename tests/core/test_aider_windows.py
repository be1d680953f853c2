"""An Aider history is read a window at a time, never mapped: the same sessions as a whole
read at every window size, and a file cut while it is read is one warning, not SIGBUS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay.core.readers import aider
from replay.core.readers.file_window import WindowFile
from tests.core.test_traj_memory import _aider_files, _turn

REPO = Path(__file__).resolve().parents[2]


def _files(tmp_path: Path) -> list[Path]:
    crs = tmp_path / "cr.chat.history.md"  # old Mac line ends: a header after a lone CR
    crs.write_bytes(b"#### hi\r> Tokens: 1 sent\r> Applied edit to x\rreply\r\r"
                    b"# aider chat started at 2024-05-01 10:00:00\r#### again\rok\r\n"
                    b"# aider chat started at 2024-05-01 10:00:01\r\n\r\n#### <blank>\r")
    bom = tmp_path / "bom.chat.history.md"
    bom.write_bytes(aider.BOM + b"# aider chat started at 2024-05-01 10:00:00\n#### a\nb\n")
    return [*_aider_files(tmp_path), crs, bom]


def _sessions(sessions: list[object]) -> list[tuple[object, ...]]:
    return [(s.session_id, s.title, s.meta, s.warnings, s.skipped,  # type: ignore[attr-defined]
             [_turn(t) for t in s.turns])  # type: ignore[attr-defined]
            for s in sessions]


@pytest.mark.parametrize("window", [1, 2, 3, 7, 64, 4096])
def test_a_history_read_by_windows_is_the_history_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    monkeypatch.setattr(aider, "WINDOW_BYTES", window)
    for path in _files(tmp_path):
        if window < 64 and path.stat().st_size > 200_000:
            continue  # the eval-cache histories: windows of a few bytes take too long
        whole = aider.parse_history(path.read_bytes(), str(path))
        with WindowFile(path) as file:
            windowed = list(aider.iter_history(file, str(path)))
        assert _sessions(windowed) == _sessions(whole), path.name
        chats: list[aider._Chat] = []
        streamed = [item for item in aider._stream(path, chats) if item is not None]
        assert _sessions(streamed) == _sessions(whole), path.name
        assert len(chats) == len(whole)


def test_the_reader_maps_no_file() -> None:
    # A mapped file cut short while it is read is SIGBUS: the process dies, no message.
    source = (REPO / "replay" / "core" / "readers" / "aider.py").read_text(encoding="utf-8")
    assert "mmap" not in source


CUT_WHILE_READ = """
import os, sys
from pathlib import Path
from replay.core.readers import ReaderError, aider
path = Path(sys.argv[1])
seen = 0
try:
    for item in aider._stream(path):
        if item is None:
            continue
        seen += 1
        if seen == 2:
            os.truncate(path, 4096)
except ReaderError as error:
    print(seen, error)
"""


def test_a_history_cut_while_it_is_read_says_so_and_does_not_die(tmp_path: Path) -> None:
    # Said as every format read by windows says it (`file_window.FileChanged`).
    from tests.core.test_aider import HISTORY

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 4_000, encoding="utf-8")  # past the first window
    size = path.stat().st_size
    done = subprocess.run([sys.executable, "-c", CUT_WHILE_READ, str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    seen, _, line = done.stdout.strip().partition(" ")
    assert 2 <= int(seen) < 4_000 * 3
    assert line == (f"{path}: file changed while it was read: {size:,} bytes expected, "
                    "4,096 found")


def test_a_scan_of_a_history_cut_while_it_is_read_ends_with_one_line(tmp_path: Path) -> None:
    from tests.core.test_aider import HISTORY

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 20_000, encoding="utf-8")
    scan = subprocess.Popen([sys.executable, "-m", "replay", "scan", "--no-cache", str(path)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time

    time.sleep(1.5)
    os.truncate(path, 1000)  # at once: a rewrite is seen empty for a moment ("0 found")
    out, err = scan.communicate(timeout=300)
    # 135 was SIGBUS; now exit 2 and one line, as for every format read by windows (or
    # 0/1 when the scan was done before the cut).
    assert scan.returncode in (0, 1, 2), (scan.returncode, err[-2000:])
    assert "Traceback" not in err
    if scan.returncode == 2:
        assert err.strip() == f"replay: {path}: file changed while it was read: " \
            f"{20_000 * len(HISTORY.encode()):,} bytes expected, 1,000 found", err
