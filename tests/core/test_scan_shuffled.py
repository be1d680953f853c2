"""The windowed scan of a Claude Code file whose lines are out of order reports what a scan of
the whole session reports: a reply whose lines come farther apart than the scan's look-ahead
is judged with every part (it used to be called empty, `reasoning-only`, though a later line
gave it tool calls). Found by the r5 fuzz (shuffle); #27."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, scan_file, scan_session
from replay.core.readers import detect_reader, load_sessions
from replay.core.suggest import default_suggester
from tests.conftest import REALDATA

FILES = sorted((REALDATA / "claude-code").glob("*.jsonl")) if REALDATA.is_dir() else []


def _windowed(path: Path) -> bytes:
    return orjson.dumps(scan_file(detect_reader(path), path).to_json())


def _whole(path: Path) -> bytes:
    [session] = load_sessions(path)
    return orjson.dumps(scan_session(session, suggester=default_suggester()).to_json())


def _line(kind: str, uuid: str, content: object, message_id: str | None = None,
          second: int = 0) -> bytes:
    message: dict[str, object] = {"role": kind, "content": content}
    if message_id is not None:
        message["id"] = message_id
    return orjson.dumps({"type": kind, "uuid": uuid, "sessionId": "s",
                         "timestamp": f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}Z",
                         "message": message}) + b"\n"


def test_a_reply_whose_tool_call_comes_far_after_its_reasoning_is_not_empty(
        tmp_path: Path) -> None:
    # A reply of reasoning alone, its tool call `LOOK_AHEAD` and more turns later.
    far = LOOK_AHEAD + 30
    lines = [_line("user", "u0", "start", second=0),
             _line("assistant", "a0", [{"type": "thinking", "thinking": "plan [/] list[int]"}],
                   "msg-late", 1)]
    for n in range(far):
        lines.append(_line("user", f"u{n + 1}", f"next [link=x] {n}", second=2 + 2 * n))
        lines.append(_line("assistant", f"a{n + 1}", [{"type": "text", "text": f"ok {n}"}],
                           f"msg-{n}", 3 + 2 * n))
    lines.append(_line("assistant", "a-late", [
        {"type": "tool_use", "id": "call-1", "name": "Bash", "input": {"command": "ls"}}],
        "msg-late", 4 + 2 * far))
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"".join(lines))
    windowed, whole = _windowed(path), _whole(path)
    assert windowed == whole
    # The late reply has a tool call: not a reasoning-only empty turn.
    assert [e["index"] for e in orjson.loads(windowed)["empty_turns"]] == []


def test_lines_in_order_are_scanned_in_the_window_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real files keep a reply's lines together: none is read a second time, holding all.
    if not FILES:
        pytest.skip("no realdata")
    holds: list[bool] = []
    one = scan_module._scan_one_file

    def counted(*args: object) -> object:
        holds.append(bool(args[-1]))
        return one(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "_scan_one_file", counted)
    for path in FILES:
        scan_file(detect_reader(path), path)
    assert holds == [False] * len(FILES)


@pytest.mark.skipif(not FILES, reason="no realdata")
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(min_value=0, max_value=max(len(FILES) - 1, 0)),
       seed=st.integers(min_value=0, max_value=2**32 - 1),
       spread=st.sampled_from([2, 8, 64, 100_000]))
def test_shuffled_lines_of_a_real_session_scan_as_the_whole_read(
        tmp_path_factory: pytest.TempPathFactory, which: int, seed: int, spread: int) -> None:
    # `spread`: how far a line may move (a local shuffle of windows of that many lines, up to
    # a shuffle of the whole file).
    source = FILES[which]
    lines = source.read_bytes().splitlines(keepends=True)
    rng = random.Random(seed)
    for start in range(0, len(lines), spread):
        window = lines[start:start + spread]
        rng.shuffle(window)
        lines[start:start + spread] = window
    path = tmp_path_factory.mktemp("shuffled") / source.name
    path.write_bytes(b"".join(lines))
    assert _windowed(path) == _whole(path)
