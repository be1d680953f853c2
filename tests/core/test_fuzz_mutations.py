"""The fuzz's value mutations (`tools/fuzz_mutants.py`) share one reading of the file
(`parse`, `Parsed`): the records of a JSONL file or one document, written back as they were
read, with what JSON cannot hold put where a marker was."""

from __future__ import annotations

import importlib.util
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _fuzz() -> Any:
    spec = importlib.util.spec_from_file_location("fuzz_mutants", REPO / "tools" /
                                                  "fuzz_mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LINES = b'{"type":"user","text":"hello there","n":1}\n\n{"type":"assistant","parts":[{}]}\n'


def test_a_file_is_read_as_its_lines_or_one_document_and_written_back() -> None:
    fuzz = _fuzz()
    lines = fuzz.parse(LINES)
    assert lines.lines and len(lines.values) == 2
    assert lines.dump() == b"".join(json.dumps(json.loads(line)).encode() + b"\n"
                                    for line in LINES.splitlines() if line)
    document = fuzz.parse(b'{"a": ["x", {"b": "y"}]}')
    assert not document.lines and document.dump() == b'{"a": ["x", {"b": "y"}]}'
    assert [key for _, key in document.strings()] == [0, "b"]
    assert len(document.dicts()) == 2 and len(lines.dicts(empty=False)) == 2
    assert fuzz.parse(b"not json\n") is None


def test_marked_strings_take_bytes_json_cannot_hold() -> None:
    fuzz = _fuzz()
    marked = fuzz._marked(random.Random(3), LINES, "MARK", [1], lambda text: text + "MARK")
    out = marked.dump("MARK", b"\xff")
    assert out.count(b"\xff") == 1 and b"MARK" not in out
    assert fuzz._marked(random.Random(3), b'{"n": 1}', "MARK", [1], str) is None


def test_the_string_mutations_change_a_string_of_a_record() -> None:
    fuzz = _fuzz()
    for seed in range(5):
        assert b"\\ud" in fuzz.lone_surrogate(random.Random(seed), LINES)
        out = fuzz.nul_in_string(random.Random(seed), LINES)
        assert b"\\u0000" in out or b"\x00" in out
    assert fuzz.invalid_utf8_in_string(random.Random(1), b'{"n": 1}') is None


def test_a_watch_deaf_to_its_ctrl_c_is_told_where_it_is(
        tmp_path: Path, monkeypatch: Any) -> None:
    # (Two `watch` trials of the r7 fuzz ran to the 600 s limit: the trial now says where the
    # command was and presses Ctrl-C again, instead of a bare "hang".)
    import signal


    fuzz = _fuzz()
    monkeypatch.setattr(fuzz, "WATCH_SECONDS", 0.05)
    monkeypatch.setattr(fuzz, "DEAF_SECONDS", 0.3)
    heard: list[int] = []

    def deaf_watch(_argv: list[str]) -> int:
        signal.signal(signal.SIGINT, lambda *_: heard.append(1))
        while len(heard) < 2:
            signal.pause()
        return 0

    _cli_fails(fuzz, tmp_path, monkeypatch, deaf_watch, ("watch", "--from-start"),
               r"watch: still running 0.3 s after Ctrl-C, at test_fuzz_mutations.py:\d+ "
               r"deaf_watch")


def _cli_fails(fuzz: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               main: Callable[[list[str]], int], command: tuple[str, ...],
               match: str | None = None) -> Any:
    """The harness's (`fuzz`) CLI trial of `command` on a good file, `tmp_path / s.jsonl`,
    `replay.cli.main` being `main`: the Mismatch it raises (its text matching `match`)."""
    import replay.cli

    monkeypatch.setattr(replay.cli, "main", main)
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINES)
    with pytest.raises(fuzz.Mismatch, match=match) as caught:
        fuzz._in_child(lambda: fuzz._cli(path, command))
    return caught.value


def _silent_scan(gives: str) -> Any:
    """A `scan_task` that reads the file's first window through `WindowFile` (where the cut
    trial cuts the file), says nothing of a change, and reports what `gives` names: the
    file as it was (`uncut`: read whole before the window hook returns), as it is now
    (`cut`), what its head says (`either`: the same for both), or its size when opened
    beside its size now (`neither`: no file held that)."""
    import os

    from replay.core.corpus.tasks import TaskResult
    from replay.core.readers import file_window

    def scan(task: Any) -> Any:
        with file_window.WindowFile(task.source) as window:
            if gives == "uncut":
                whole = len(window.read(0, window.size))
                return TaskResult(reports=[{"size": whole}])
            window.read(0, 512)
            if gives == "either":  # what the file's head says: the same cut or not
                return TaskResult(reports=[{"head": "read"}])
            now = os.stat(task.source).st_size
            report = {"size": now} if gives == "cut" else {"opened": window.size, "now": now}
            return TaskResult(reports=[report])
    return scan


@pytest.mark.parametrize(("gives", "said"), [
    ("uncut", "the same as the uncut file's scan"),
    ("cut", "the same as the cut file's scan"),
    ("either", "the same as the uncut file's scan, which the cut file's is too"),
])
def test_a_silent_cut_scan_is_compared_with_scans_made_with_the_hook_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gives: str, said: str) -> None:
    # (Until round 10 the hook was left on for the comparison, so "the same as the uncut
    # file's scan" compared two cut scans: a scan of what was left passed as a whole one.)
    fuzz = _fuzz()
    monkeypatch.setattr(fuzz, "scan_task", _silent_scan(gives))
    monkeypatch.setattr(fuzz, "load_sessions", lambda path, indexed: [])
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINES * 40)
    fuzz._cut_trial(path, "scanned")
    assert path.read_bytes() == LINES * 40  # put back
    assert fuzz.CUT_STATS["trials"] == 1 and fuzz.CUT_STATS["cut"] == 1
    assert fuzz.CUT_STATS["said"] == 0
    assert len(fuzz.CUT_MISSED) == 1 and fuzz.CUT_MISSED[0].endswith(said), fuzz.CUT_MISSED


def test_a_silent_cut_scan_that_no_file_gives_is_a_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fuzz = _fuzz()
    monkeypatch.setattr(fuzz, "scan_task", _silent_scan("neither"))
    monkeypatch.setattr(fuzz, "load_sessions", lambda path, indexed: [])
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINES * 40)
    with pytest.raises(fuzz.Mismatch, match="said nothing and gave neither the uncut nor the cut"):
        fuzz._cut_trial(path, "scanned")
    assert path.read_bytes() == LINES * 40
    assert fuzz.CUT_STATS["cut"] == 1 and len(fuzz.CUT_MISSED) == 1


def test_a_scan_that_says_the_file_changed_is_not_compared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real scan of a JSON document cut after its first window: it says so.
    fuzz = _fuzz()
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user" if n % 2 == 0 else "assistant",
                                 "content": f"message {n} " * 20} for n in range(40)]),
                    encoding="utf-8")
    fuzz._cut_trial(path, "scanned")
    assert fuzz.CUT_STATS["cut"] == 1 and fuzz.CUT_STATS["said"] == 1, fuzz.CUT_MISSED
    assert fuzz.CUT_MISSED == []


def test_a_wrong_line_on_stderr_is_kept_with_the_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (Round 10's seed-1001 pass had two `report` trials fail with "a line on stderr that is
    # not one of ours", and the line was not kept: it did not recur alone.)
    import os


    fuzz = _fuzz()

    def chatty_report(argv: list[str]) -> int:
        # (fd 2 itself: pytest's capture stands in for sys.stderr)
        os.write(2, b"replay: one of ours\n")
        os.write(2, b"sys:1: ResourceWarning: unclosed file <_io.BufferedReader name=3>"
                 + b"x" * 900 + b"\n")
        return 1

    error = _cli_fails(fuzz, tmp_path, monkeypatch, chatty_report, ("report", "--no-cache"))
    assert error.kind == "report: a line on stderr that is not one of ours"
    assert f"replay report --no-cache {tmp_path / 's.jsonl'}" in error.evidence
    assert "stderr line: b'sys:1: ResourceWarning: unclosed file" in error.evidence
    assert "... (965 bytes)" in error.evidence and len(error.evidence) < 500
    assert "one of ours'" not in error.evidence  # the good line is not the evidence


def test_a_raw_control_byte_is_kept_with_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os


    fuzz = _fuzz()

    def leaky_scan(argv: list[str]) -> int:
        os.write(1, b"turn 3: fine\nturn 4: \x1b[2Jgone\n")
        return 0

    _cli_fails(fuzz, tmp_path, monkeypatch, leaky_scan, ("scan",),
               r"(?s)scan: a raw control byte.*stdout line: b'turn 4: \\x1b\[2Jgone'")


def test_a_failed_trial_gives_its_kind_and_evidence_and_the_mutant_can_be_kept(
        tmp_path: Path) -> None:
    fuzz = _fuzz()

    def wrong() -> None:
        raise fuzz.Mismatch("report: exit status 3", "replay report x", "stderr: b'boom'")

    assert fuzz._trial(wrong, 20.0, 600.0) == ("mismatch: report: exit status N",
                                               "replay report x\nstderr: b'boom'")
    assert fuzz._trial(lambda: None, 20.0, 600.0) is None

    def unreadable() -> None:
        raise fuzz.ReaderError("x: not valid JSON")

    assert fuzz._trial(unreadable, 20.0, 600.0) is None
    kept = fuzz.keep_mutant(tmp_path / "kept", 7, "nul_in_string", "gen-swe-agent.traj", b"\0")
    assert kept == tmp_path / "kept" / "0007-nul_in_string" / "gen-swe-agent.traj"
    assert kept.read_bytes() == b"\0"
    # A second failure of the same mutant keeps the first copy (the trials put it back).
    assert fuzz.keep_mutant(tmp_path / "kept", 7, "nul_in_string", "gen-swe-agent.traj",
                            b"other") == kept and kept.read_bytes() == b"\0"
