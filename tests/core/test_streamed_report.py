"""A scan report's empty turns are held encoded and compressed (`corpus.encoded`): the
`scan --json` line written in pieces is byte for byte the line written whole, on every real
and sample file and on big files of many empty turns; the cache stores and gives back the
batches; a worker sends them as they are; and the report no longer grows as dicts."""

from __future__ import annotations

import gc
import io
import json
import pickle
import random
import shutil
import sqlite3
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.cli import main
from replay.core.corpus import encoded as encoded_module
from replay.core.corpus.cache import ScanCache, cache_path, decoded, encoded
from replay.core.corpus.encoded import EncodedList, json_line_pieces, write_json_line
from replay.core.corpus.report import CorpusReport
from replay.core.corpus.scan import scan_session
from replay.core.corpus.tasks import SessionTask, TaskResult, scan_task
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers import load_sessions
from replay.core.safe import json_line
from replay.core.suggest import default_suggester
from tests.conftest import REALDATA, SAMPLES
from tests.core.test_scan_cache import _aged

RULES: dict[str, dict[str, bool]] = {
    "default": {},
    "tool-only": {"tool_only_is_empty": True},
    "missing-replies": {"missing_replies": True},
    "both": {"tool_only_is_empty": True, "missing_replies": True},
}

AWKWARD_TEXT = ["plain", "é ü 漢字 🎉", "\x85 next line", "\u202e bidi", "zero\u200bwidth",
                "del\x7f", "[/] [link=x] list[int]", "\x1b]0;PWNED\x07", "quote \" back \\",
                "lone \udc80 surrogate", ""]
"""Texts `json_line` escapes, or has to make valid, or writes as they are."""


def _plain(value: Any) -> Any:
    """`value` with every `EncodedList` made a list (the report as it was held before)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, EncodedList)):
        return [_plain(item) for item in value]
    return value


def _joined(report: dict[str, Any]) -> bytes:
    return b"".join(json_line_pieces(report))


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of about 1 KB, so that small reports span many."""
    monkeypatch.setattr(encoded_module, "BATCH_BYTES", 1024)


def test_the_pieces_are_the_line_whole(small_batches: None) -> None:
    elements = [{"index": number, "id": text, "evidence": [text, str(number)], "gap": 0.5}
                for number in range(400) for text in AWKWARD_TEXT]
    encoded = EncodedList(elements)
    assert len(encoded.batches()) > 20
    for report in (
            {"path": "a\x85b", "format": "f", "empty_turns": encoded},
            {"empty_turns": encoded, "warnings": ["w\u202e"], "turns": 3},
            {"path": "x", "empty_turns": EncodedList(), "more": EncodedList([1, "\x85"])},
            {"path": "lone \udc80", "empty_turns": EncodedList([{"id": "\udc81"}])},
            {"path": "no list", "empty_turns": []}):
        assert _joined(report) == json_line(_plain(report))
        written: list[bytes] = []
        write_json_line(report, written.append)
        assert b"".join(written) == json_line(_plain(report))
    # Read back as new dicts equal to those appended (a lone surrogate made valid, as the
    # line writes it).
    assert list(encoded)[:len(AWKWARD_TEXT) - 2] == elements[:len(AWKWARD_TEXT) - 2]
    assert len(encoded) == len(elements) and encoded == [orjson.loads(json_line(e))
                                                         for e in elements]
    assert encoded[5] == encoded[-len(elements) + 5] == list(encoded)[5]
    assert encoded[10:13] == list(encoded)[10:13] and encoded[3:3] == []
    with pytest.raises(IndexError):
        encoded[len(elements)]
    # A worker's result travels as the compressed batches, not as dicts or JSON text.
    data = pickle.dumps(TaskResult(reports=[{"empty_turns": encoded}]))
    assert pickle.loads(data).reports[0]["empty_turns"] == encoded
    assert len(data) < len(json_line(elements)) / 3  # (batches of 1 KB: 4x smaller)


def _inputs() -> list[Path]:
    paths = [path for path in sorted(SAMPLES.iterdir()) if path.is_file()
             and path.suffix != ".md"]
    paths += [path for path in sorted(REALDATA.rglob("*")) if path.is_file()
              and path.suffix in (".jsonl", ".json") and not path.name.endswith(".meta.json")]
    return paths + [REALDATA / "claude-code"]


@pytest.mark.parametrize("rules", list(RULES))
def test_every_real_and_sample_file_gives_the_line_whole(small_batches: None,
                                                          rules: str) -> None:
    options = tuple(sorted(RULES[rules].items()))
    reports = 0
    for path in _inputs():
        result = scan_task(SessionTask(str(path), rules=options))
        assert result.error is None, result.error
        for report in result.reports:
            assert isinstance(report["empty_turns"], EncodedList)
            assert _joined(report) == json_line(_plain(report)), path
            reports += 1
    assert reports > 20


def _sharegpt(path: Path, rounds: int) -> Path:
    """A ShareGPT conversation whose every reply is blank (a data set of failed replies)."""
    turns: list[dict[str, str]] = []
    for number in range(rounds):
        turns.append({"from": "human", "value": AWKWARD_TEXT[number % len(AWKWARD_TEXT)]
                      .replace("\udc80", "?") + f" {number}"})
        turns.append({"from": "gpt", "value": "" if number % 5 else "   "})
    path.write_text(json.dumps({"id": "blank", "conversations": turns}, indent=1))
    return path


def _chat_lines(path: Path, rounds: int) -> Path:
    """Chat JSONL of own message ids holding text `json_line` escapes, half the replies
    empty."""
    lines = []
    for number in range(rounds):
        own = AWKWARD_TEXT[number % (len(AWKWARD_TEXT) - 2)]
        lines.append({"role": "user", "content": f"go on {number}", "id": f"u{number}{own}"})
        lines.append({"role": "assistant", "content": "" if number % 2 else "ok",
                      "id": f"a{number}{own}"})
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def _run(path: Path, steps: int) -> Path:
    """An opencode run of empty steps (a start and a finish, nothing shown)."""
    from tests.core.test_turn_index_formats import _event

    with open(path, "w", encoding="utf-8") as handle:
        for step in range(steps):
            for number, kind in enumerate(("step-start", "step-finish")):
                handle.write(json.dumps(_event(kind, f"msg_{step:06d}", step * 2 + number,
                                               reason="stop")) + "\n")
    return path


def _scan(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    status = main(["scan", "--json", "--jobs", "1", *args])
    out, _ = capsysbinary.readouterr()
    assert status == 0
    return out


@pytest.mark.parametrize("make", [_sharegpt, _chat_lines, _run])
def test_a_big_file_of_empty_turns_gives_the_whole_scans_bytes(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], make: Any) -> None:
    path = _aged(make(tmp_path / f"big.{make.__name__}", 3000))
    [session] = load_sessions(path)
    whole = scan_session(session, DEFAULT_RULES, default_suggester()).to_json()
    assert len(whole["empty_turns"]) >= 1500
    line = json_line(whole)
    assert _scan(capsysbinary, "--no-cache", str(path)) == line
    assert _scan(capsysbinary, str(path)) == line  # computed, and kept
    assert _scan(capsysbinary, str(path)) == line  # from the cache
    # Kept as batches of encoded turns, not as one JSON text of them.
    with sqlite3.connect(cache_path()) as db:  # (the session's row; its format's beside it)
        ((data,),) = db.execute("SELECT reports FROM results WHERE length(reports) > 100"
                                ).fetchall()
    assert data.startswith(b"\x00") and len(data) < len(line) / 4
    # Several jobs (a worker's result pickled to the parent) and a folder: the same line.
    copy = tmp_path / "folder" / path.name
    copy.parent.mkdir()
    _aged(Path(shutil.copy(path, copy)))
    status = main(["scan", "--json", "--no-cache", "--jobs", "2", str(path), str(copy)])
    out, _ = capsysbinary.readouterr()
    assert status == 0
    assert out == line + line.replace(str(path).encode(), str(copy).encode())


def test_the_cache_gives_back_what_it_stored(tmp_path: Path, small_batches: None) -> None:
    path = _aged(_sharegpt(tmp_path / "a.json", 300))
    [report] = scan_task(SessionTask(str(path))).reports
    assert len(report["empty_turns"].batches()) > 5
    task = SessionTask(str(path))
    with ScanCache() as cache:
        cache.store(task, path, "stamp", [report, {"empty_turns": EncodedList(), "n": 1}])
    with ScanCache() as cache:
        back = cache.lookup(task, "stamp")
        assert cache.lookup(task, "another stamp") is None
    assert back is not None and isinstance(back[0]["empty_turns"], EncodedList)
    assert back[0]["empty_turns"].batches() == report["empty_turns"].batches()
    assert [_joined(item) for item in back] == [
        _joined(report), json_line({"empty_turns": [], "n": 1})]
    assert decoded(encoded([report])) == [report] and decoded(encoded({"a": [1]})) == {"a": [1]}
    # A row cut short, or not written by this code, is computed again, never given back cut.
    with sqlite3.connect(cache_path()) as db:  # (the session's row; its format's beside it)
        ((data,),) = db.execute("SELECT reports FROM results WHERE length(reports) > 100"
                                ).fetchall()
        for broken in (data[:-7], data[:30], data[:12], b"[" + data[1:]):
            db.execute("UPDATE results SET reports = ?", (broken,))
            db.commit()
            with ScanCache() as cache:
                assert cache.lookup(task, "stamp") is None
    for broken in (data[:-7], data[:30]):
        with pytest.raises((ValueError, struct.error)):
            decoded(broken)


def _peak_of_a_scan(path: Path, cached: bool) -> int:
    """tracemalloc's peak over scanning `path` and writing its line (through the cache, the
    second time, when `cached`)."""
    task = SessionTask(str(path))
    sink = bytearray()
    if cached:
        with ScanCache() as cache:
            cache.store(task, path, "s", scan_task(task).reports)
    gc.collect()
    tracemalloc.start()
    try:
        if cached:
            with ScanCache() as cache:
                reports = cache.lookup(task, "s")
        else:
            reports = scan_task(task).reports
        assert reports is not None
        for report in reports:
            write_json_line(report, lambda piece: sink.extend(piece[:1]))
        del reports
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("cached", [False, True], ids=["scanned", "from-cache"])
def test_the_report_does_not_grow_as_dicts(tmp_path: Path, cached: bool) -> None:
    """The memory a report adds per empty turn: each held as a dict (and the line as one
    text), 530 bytes and more; encoded and compressed, a few dozen."""
    small = _sharegpt(tmp_path / "small.json", 1000)
    big = _sharegpt(tmp_path / "big.json", 5000)
    _peak_of_a_scan(small, cached)  # (what is imported or cached once is not counted)
    per_turn = (_peak_of_a_scan(big, cached) - _peak_of_a_scan(small, cached)) / 4000
    # Measured: 50 bytes scanned, 9 from the cache; as dicts, 530 (and the line whole).
    assert per_turn < 150, per_turn


def test_report_and_redaction_keep_the_encoded_turns() -> None:
    from replay.core.publish.redact import Redactor, redact_report

    empties = EncodedList({"index": n, "id": f"m{n}", "role": "assistant", "reason": "blank",
                           "suggestion": None, "evidence": [f"mail ana{n}@example.org"],
                           "gap_before": None} for n in range(50))
    corpus = CorpusReport()
    corpus.add({"path": "p", "format": "sharegpt", "title": None, "session_id": "s",
                "turns": 100, "skipped": 0, "warnings": [], "empty_turns": empties})
    [row] = corpus.sessions
    assert row.empty_turns is empties and corpus.empty == 50 and row.rate == 0.5
    redact_report(corpus, Redactor())
    texts = [empty["evidence"][0] for empty in row.empty_turns]
    assert len(texts) == 50 and not any("@example.org" in text for text in texts)
    assert texts[0] == "mail [redacted: email]"


def _table_report(count: int) -> dict[str, Any]:
    rng = random.Random(3)
    evidence = [[], ["gap before: 14 min", "no completion time"], ["[/] [link=x] \x1b]0;x\x07 "
                + "long " * 30], ["averyveryverylongunbreakableword" * 3]]
    return {"path": "p\x85", "format": "sharegpt", "title": "[b]t[/b]", "session_id": "s",
            "turns": count * 3, "skipped": 0, "warnings": [], "empty_turns": EncodedList(
                {"index": n * 3, "number": n * 3 + 1, "id": f"m{n}" + "x" * rng.choice([0, 40]),
                 "role": rng.choice(["user", "assistant"]),
                 "timestamp": rng.choice([None, "2026-01-02T03:04:05Z"]),
                 "reason": rng.choice(["blank-text", "no-content"]),
                 "evidence": rng.choice(evidence), "suggestion": rng.choice([None, "approval"]),
                 "gap_before": None} for n in range(count))}


class _Sink(io.StringIO):
    """Output let go of as it is written (only its size is kept)."""

    size = 0

    def write(self, text: str) -> int:
        self.size += len(text)
        return len(text)


def _printed(monkeypatch: pytest.MonkeyPatch, report: dict[str, Any], width: int,
             block: int, out: io.StringIO | None = None) -> tuple[str, int]:
    from rich.console import Console

    from replay.commands import scan as scan_command

    out = out if out is not None else io.StringIO()
    monkeypatch.setattr(scan_command, "table_console", lambda: Console(
        file=out, width=width, highlight=False, force_terminal=True, color_system="truecolor"))
    monkeypatch.setattr(scan_command, "TABLE_BLOCK", block)
    gc.collect()
    tracemalloc.start()
    try:
        scan_command.print_table(report)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out.getvalue(), peak


@pytest.mark.parametrize("width", [40, 119, 160])
def test_a_long_table_is_printed_in_blocks_that_read_as_one(
        monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """Past TABLE_BLOCK rows the table is printed a block at a time, each column as wide as
    one table of every row makes it: the same characters, colours and folds."""
    report = _table_report(450)
    blocked, _ = _printed(monkeypatch, report, width, 100)
    whole, _ = _printed(monkeypatch, report, width, 10**9)
    assert blocked == whole
    assert blocked.count("approv") > 100 and "\x1b]0" not in blocked


def test_a_long_table_holds_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _table_report(1200)
    sinks = [_Sink(), _Sink()]
    _, blocked = _printed(monkeypatch, report, 120, 100, sinks[0])
    _, whole = _printed(monkeypatch, report, 120, 10**9, sinks[1])
    assert sinks[0].size == sinks[1].size > 1200 * 120
    assert blocked < whole / 5, (blocked, whole)
