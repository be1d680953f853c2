"""A streamed scan keeps a window of turns and reports exactly what a scan of the whole
session reports: empty turns, evidence and suggestions."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, TurnWindow, scan_file, scan_session
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers import detect_reader, load_sessions
from replay.core.suggest import default_suggester
from tests.conftest import REALDATA

REPO = Path(__file__).resolve().parents[2]


def _full(report: Any) -> list[Any]:
    return [report.to_json(), [(e.suggestion_confidence, e.suggestion_reasons,
                                e.suggestion_rule) for e in report.empty_turns]]


def _same_as_whole(path: Path, tool_only: bool = False, missing: bool = False) -> Any:
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=tool_only, missing_replies=missing)
    reader = detect_reader(path)
    assert reader.windowed
    whole = scan_session(load_sessions(path)[0], rules, default_suggester())
    streamed = scan_file(reader, path, rules)
    assert _full(streamed) == _full(whole)
    return streamed


def _files() -> list[Path]:
    files = sorted((REPO / "sample_sessions").glob("*.jsonl"))
    for folder in ("claude-code", "codex"):
        files += sorted((REALDATA / folder).glob("*.jsonl"))
    return [path for path in files if detect_reader(path).windowed]


@pytest.mark.parametrize("path", _files(), ids=lambda path: path.name[-40:])
def test_real_sessions_scan_the_same_streamed(path: Path) -> None:
    _same_as_whole(path)
    _same_as_whole(path, tool_only=True, missing=True)


def test_real_records_repeated_scan_the_same_streamed(tmp_path: Path) -> None:
    # bench/guard.py's real-shaped file, small: the real sessions' records again and again
    # with fresh ids, one session long enough for the window to let turns go many times.
    import importlib.util

    spec = importlib.util.spec_from_file_location("realshaped", REPO / "bench" / "realshaped.py")
    assert spec is not None and spec.loader is not None
    realshaped = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realshaped)
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    path = tmp_path / "realshaped.jsonl"
    realshaped.write(path, 12_000_000, REALDATA / "claude-code")
    report = _same_as_whole(path)
    assert len(report.session.turns) > 2 * (LOOK_BACK + LOOK_AHEAD)
    assert len(report.empty_turns) >= 8 and report.session.skipped == 0
    _same_as_whole(path, tool_only=True, missing=True)


def _long_session(path: Path, turns: int, seed: int) -> None:
    """Tiny Claude Code records with empty turns in every kind of neighbourhood: repeated
    prompts, bare go-ons, long silences, plans and questions, thinking-only replies."""
    rng = random.Random(seed)
    prompts = ["please fix the failing reader test in the suite",
               "run the whole suite again and report back", "continue", "hello?",
               "<local-command-stdout></local-command-stdout>", "", "ok",
               "<command-name>/clear</command-name>"]
    answers = ["I'll update the reader next, then run the tests.", "Shall I go on?",
               "Done.", "## Goal\n## Progress\n## Next steps\n" + "summary " * 200, ""]
    clock = 1_760_000_000.0
    lines = []
    for number in range(turns):
        clock += rng.choice((1.0, 2.0, 5.0, 3600.0)) if rng.random() < 0.1 else 2.0
        stamp = "2026-03-01T00:00:00.000Z" if rng.random() < 0.02 else None
        record: dict[str, Any] = {"sessionId": "s-1", "uuid": f"u{number}", "parentUuid": None,
                                  "timestamp": stamp or _iso(clock)}
        if rng.random() < 0.5:
            record.update(type="user", message={"role": "user", "content": rng.choice(prompts)})
        else:
            text = rng.choice(answers)
            content = ([{"type": "thinking", "thinking": "", "signature": "x"}] if not text
                       else [{"type": "text", "text": text}])
            record.update(type="assistant", message={
                "role": "assistant", "id": f"m{number}", "content": content})
            if rng.random() < 0.02:
                del record["timestamp"]
        lines.append(orjson.dumps(record))
    path.write_bytes(b"\n".join(lines) + b"\n")


def _iso(seconds: float) -> str:
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_long_session_scans_the_same_streamed(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "long.jsonl"
    _long_session(path, 3 * (LOOK_BACK + LOOK_AHEAD), seed)
    report = _same_as_whole(path)
    assert _same_as_whole(path, missing=True).to_json()["empty_turns"] != report.to_json()[
        "empty_turns"]
    assert len(report.empty_turns) > 100
    assert {empty.suggestion for empty in report.empty_turns} >= {
        "artifact", "thinking", "context-reset"} - {None}


def test_the_window_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "long.jsonl"
    _long_session(path, 10 * (LOOK_BACK + LOOK_AHEAD), seed=4)
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    report = scan_file(detect_reader(path), path)
    assert report.to_json()["turns"] == 10 * (LOOK_BACK + LOOK_AHEAD)
    assert max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 1


def test_a_turn_let_go_is_an_error_not_a_wrong_answer() -> None:
    from replay.core.session.model import Turn

    window = TurnWindow()
    for number in range(10):
        window.append(Turn(str(number), "user", index=number))
    window.forget_before(6)
    assert len(window) == 10 and window[6].id == "6" and window[-1].id == "9"
    assert [turn.id for turn in window[7:20]] == ["7", "8", "9"]
    with pytest.raises(IndexError):
        window[5]
    with pytest.raises(IndexError):
        window[2:8]


def test_a_scan_reads_no_subagent_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The report leaves subagent sessions out, so their files are not read for it.
    from replay.core.readers import claude_code

    session_id = "0b7d2c1e-6a4f-4c3b-8e2d-9f1a5b6c7d80"
    main_file = tmp_path / f"{session_id}.jsonl"
    main_file.write_bytes((REPO / "sample_sessions" / "refactor.claude-code.jsonl").read_bytes())
    nested = tmp_path / session_id / "subagents"
    nested.mkdir(parents=True)
    (nested / "agent-a1.jsonl").write_bytes(orjson.dumps({
        "type": "user", "uuid": "s1", "sessionId": session_id, "isSidechain": True,
        "timestamp": "2026-03-01T10:00:00.000Z", "message": {"role": "user", "content": "hi"}
    }) + b"\n")
    read: list[str] = []
    real = claude_code._read_file

    def counted(path: Path, *args: Any) -> Any:
        read.append(path.name)
        return real(path, *args)

    monkeypatch.setattr(claude_code, "_read_file", counted)
    assert len(load_sessions(main_file)[0].sidechains) == 1 and "agent-a1.jsonl" in read
    read.clear()
    streamed = scan_file(detect_reader(main_file), main_file)
    assert read == [] and streamed.session.sidechains == []
    whole = scan_session(load_sessions(main_file)[0], DEFAULT_RULES, default_suggester())
    assert _full(streamed) == _full(whole)


def test_a_replys_end_time_is_settled_before_its_neighbours_are_judged(tmp_path: Path) -> None:
    # A reply of two lines, then an empty prompt whose `gap_before` is measured from the
    # reply's end (its second line), then many one-line turns: the empty prompt is judged
    # long before the file ends, and must see the reply's end time by then (the scan's feed
    # settles it only when asked: `ClaudeCodeBuilder.settle_times`).
    def line(kind: str, uuid: str, second: int, message: dict[str, Any]) -> bytes:
        return orjson.dumps({"type": kind, "uuid": uuid, "sessionId": "s-1",
                             "timestamp": f"2026-03-01T10:{second // 60:02d}:{second % 60:02d}Z",
                             "message": message})

    def reply(message_id: str, text: str) -> dict[str, Any]:
        return {"role": "assistant", "id": message_id,
                "content": [{"type": "text", "text": text}]}

    lines = [line("user", "u0", 0, {"role": "user", "content": "start the work please"}),
             line("assistant", "a1", 1, reply("msg_1", "first half")),
             line("assistant", "a2", 40, reply("msg_1", "second half")),
             line("user", "u1", 100, {"role": "user", "content": "<local-command-stdout>"
                                                                "</local-command-stdout>"})]
    for number in range(2, 300):
        lines.append(line("user", f"u{number}", 100 + number, {"role": "user",
                                                               "content": f"prompt {number}"}))
        lines.append(line("assistant", f"a{number}x", 100 + number,
                          reply(f"msg_{number}", f"answer {number}")))
    path = tmp_path / "late-end.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = _same_as_whole(path)
    empty = [turn for turn in report.empty_turns if turn.id == "u1"]
    assert empty and empty[0].gap_before == 60.0
