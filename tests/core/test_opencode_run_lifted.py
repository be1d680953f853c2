"""Issue 27: a scan of an `opencode run` stream leaves a huge text part in its file, as the
Claude Code and Codex readers do (`huge_strings`), in both of its passes: the first pass
(`late_events`) and the second (a handle capped at what the first saw, `_Capped`) read the
huge line as its skeleton, never whole. The scan's report is the one the part decoded whole
gives."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from replay.core.readers import huge_strings, opencode_run
from replay.core.session import lifted

from .test_scan_lift import lowered, scanned_both_ways

TEXT = "word " * 12 + "\n"


def _run(path: Path, text: str, end: str = "\n") -> Path:
    def event(number: int, kind: str, message: str, **part: object) -> str:
        return json.dumps({"type": kind, "timestamp": 1700000000000 + number,
                           "sessionID": "ses_big",
                           "part": {"id": f"prt_{number}", "sessionID": "ses_big",
                                    "messageID": message, "type": kind.replace("_", "-"),
                                    **part}})
    path.write_text("\n".join([
        event(0, "step_start", "msg_1"), event(1, "text", "msg_1", text=text),
        event(2, "text", "msg_2", text="ok")]) + end)
    return path


def _fed(path: Path) -> opencode_run.RunBuilder:
    feed = opencode_run.scan_feed(path)
    for record, offset, lineno in feed.records:
        feed.builder.feed(record, offset, lineno)
    feed.builder.finish()
    assert isinstance(feed.builder, opencode_run.RunBuilder)
    return feed.builder


@pytest.mark.parametrize("end", ["\n", ""])
def test_a_huge_text_part_is_left_in_its_file_and_reads_back_exactly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str) -> None:
    lowered(monkeypatch)
    text = TEXT * 5000 + "the last line\n"
    # The huge part last too (its line maybe without a line end): the cap is where it ends.
    path = _run(tmp_path / "run.jsonl", text, end)
    session = _fed(path).session
    [first, second] = session.turns
    part = first.parts[-1]
    assert lifted.holds(part.text)  # a placeholder naming the file's bytes, not the text
    assert len(part.text) < 10_000
    rope = lifted.source(part.text)
    assert rope is not None and rope.read() == text
    assert second.parts[0].text == "ok"


def test_a_scan_of_a_huge_text_part_holds_no_copy_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 24 MB part, both passes, traced under a third of it (before: the line whole in
    the read buffer and parsed whole, in each pass). Lines are lifted past 256 KiB here
    (4 MiB in a scan: the line reader's buffer is then up to 16 MiB, whatever the line)
    and read from the file 128 KiB at a time (1 MiB: a few of them are alive at once)."""
    monkeypatch.setattr(huge_strings, "_ENABLED", [True])
    monkeypatch.setattr(huge_strings, "_READ", 128 << 10)
    monkeypatch.setattr(huge_strings, "HUGE_LINE_BYTES", 256 << 10)
    monkeypatch.setattr(huge_strings, "WHOLE_BYTES", 256 << 10)
    text = TEXT * 400_000
    path = _run(tmp_path / "run.jsonl", text)
    gc.collect()
    tracemalloc.start()
    try:
        builder = _fed(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(text) / 3, peak
    assert lifted.source(builder.session.turns[0].parts[-1].text).read() == text


def test_a_scan_reports_the_lifted_part_as_it_does_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _run(tmp_path / "run.jsonl", TEXT * 7000 + "why did you stop? please continue\n")
    decoded, left = scanned_both_ways(path, capsys, monkeypatch)
    assert left == decoded


def test_both_passes_lift_the_huge_line_once_while_the_file_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lowered(monkeypatch)
    lifts: list[int] = []
    skeleton = huge_strings._skeleton

    def counted(fd: int, path: str, offset: int, *rest: object, **named: object) -> object:
        lifts.append(offset)
        return skeleton(fd, path, offset, *rest, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(huge_strings, "_skeleton", counted)
    text = TEXT * 5000
    path = _run(tmp_path / "run.jsonl", text)
    first = _fed(path).session.turns[0].parts[-1].text
    assert len(lifts) == 1  # (the first pass lifted it; the second took that)
    assert lifted.source(first).read() == text
    # The file written again (another text): lifted afresh, read right.
    other = text.replace("word", "WORDS")
    _run(path, other)
    again = _fed(path).session.turns[0].parts[-1].text
    assert len(lifts) == 2
    assert lifted.source(again).read() == other
