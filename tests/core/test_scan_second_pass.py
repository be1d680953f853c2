"""A file whose lines come out of order is scanned a second time knowing which turns later
lines change (the first pass's record of them): each turn waits only until its last line is
read, so the second pass keeps a window of turns as the first does, not the whole session
(it held every turn: 3.7x a 60 MB shuffled file). Its report is still the whole read's.
#27 (seams-r7)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, scan_file, scan_session
from replay.core.readers import detect_reader, load_sessions
from replay.core.suggest import default_suggester


def _line(kind: str, uuid: str, content: object, message_id: str | None, second: int) -> bytes:
    message: dict[str, object] = {"role": kind, "content": content}
    if message_id is not None:
        message["id"] = message_id
    return orjson.dumps({"type": kind, "uuid": uuid, "sessionId": "s",
                         "timestamp": f"2026-01-01T{second // 3600:02d}:"
                                      f"{second // 60 % 60:02d}:{second % 60:02d}Z",
                         "message": message}) + b"\n"


def _session(replies: int) -> list[bytes]:
    # Each reply in two lines of one message id: its reasoning, then its text; every
    # seventh prompt empty.
    lines = []
    for n in range(replies):
        lines.append(_line("user", f"u{n}", "" if n % 7 == 0 else f"step {n} [/]", None, 3 * n))
        lines.append(_line("assistant", f"a{n}", [{"type": "thinking", "thinking": f"t {n}"}],
                           f"msg-{n}", 3 * n + 1))
        lines.append(_line("assistant", f"b{n}", [{"type": "text", "text": f"done {n}"}],
                           f"msg-{n}", 3 * n + 2))
    return lines


def _shuffled(lines: list[bytes], spread: int, seed: int) -> list[bytes]:
    lines, rng = list(lines), random.Random(seed)
    for start in range(0, len(lines), spread):
        window = lines[start:start + spread]
        rng.shuffle(window)
        lines[start:start + spread] = window
    return lines


def _whole(path: Path) -> dict[str, object]:
    [session] = load_sessions(path)
    return scan_session(session, suggester=default_suggester()).to_json()


@pytest.mark.parametrize("spread", [8, 64])
def test_the_second_pass_over_lines_out_of_order_keeps_a_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spread: int) -> None:
    path = tmp_path / "shuffled.jsonl"
    path.write_bytes(b"".join(_shuffled(_session(3_000), spread, 5)))
    kept: list[int] = []
    passes: list[object] = []
    advance, one = scan_module._WindowScan.advance, scan_module._scan_one_file

    def counted(self: scan_module._WindowScan, final: bool = False) -> None:
        kept.append(len(self.window._turns))
        advance(self, final)

    def each_pass(*args: object) -> object:
        passes.append(args[-1])
        kept.clear()  # the last pass's window is measured
        return one(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module._WindowScan, "advance", counted)
    monkeypatch.setattr(scan_module, "_scan_one_file", each_pass)
    report = scan_file(detect_reader(path), path).to_json()
    assert report == _whole(path)
    assert len(passes) == 2  # out of order: read again ...
    assert report["turns"] == 6_000
    # ... keeping the turns a window keeps, and those a late line may still change
    # (a line moves at most `spread` lines: a few turns), never the whole session.
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD + 64 + spread)
