"""`replay report`: counts over a corpus, labels and agreement, the terminal and HTML pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.cli import main
from replay.core.corpus.report import NO_GAP, CorpusReport, gap_bucket
from replay.core.publish.report_html import render_report_html
from tests.conftest import REALDATA, realdata

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"alert(1)\">\x1b]0;t\x07"


def _chat(folder: Path, name: str, messages: list[dict], conversation: str,
          title: str | None = None) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    document = {"id": conversation, "messages": messages, **({"title": title} if title else {})}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    _chat(folder, "a.json", [
        {"role": "user", "content": "fix it", "timestamp": "2026-03-01T10:00:00Z"},
        {"role": "assistant", "content": "Plan: pin the seed.",
         "timestamp": "2026-03-01T10:00:05Z"},
        {"role": "user", "content": "", "timestamp": "2026-03-01T10:20:05Z"},
        {"role": "assistant", "content": "Done.", "timestamp": "2026-03-01T10:20:09Z"},
    ], "conv-a")
    _chat(folder, "b.json", [
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": ""},
    ], "conv-b", title=HOSTILE)
    _chat(folder, "c.json", [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"},
    ], "conv-c")
    return folder


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["report", "--jobs", "1", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_gap_buckets() -> None:
    assert gap_bucket(None) == NO_GAP
    assert gap_bucket(3.0) == "< 10 s"
    assert gap_bucket(1200.0) == "10 min – 1 h"
    assert gap_bucket(3 * 86400.0) == "≥ 1 day"


def test_counts_over_the_real_transcripts() -> None:
    from replay.core.corpus.pool import run_tasks
    from replay.core.corpus.tasks import plan

    report = CorpusReport()
    for result in run_tasks(plan(realdata("opencode")) + plan(REALDATA / "claude-code")):
        for scanned in result.reports:
            report.add(scanned)
    # PRODUCT.md: six empty turns in the opencode exports (five assistant, one user
    # compaction request) and one in the Claude Code files (a user wrapper line).
    assert report.formats["opencode"].empty == 6 and report.formats["claude-code"].empty == 1
    assert report.roles == {"assistant": 5, "user": 2}
    assert report.reasons["compaction-request"] == 1 and report.reasons["empty-wrapper"] == 1
    assert sum(report.gaps.values()) == report.empty == 7
    rates = [row.rate for row in report.silent_sessions(3)]
    assert rates == sorted(rates, reverse=True) and len(rates) == 3


def test_report_in_the_terminal_with_two_reviewers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path)
    for path, turn, label, reviewer in (("a.json", "#3", "approval", "ana"),
                                        ("a.json", "#3", "approval", "bo"),
                                        ("b.json", "#2", "artifact", "ana"),
                                        ("b.json", "#2", "thinking", "bo")):
        assert main(["label", str(folder / path), "--turn", turn, "--label", label,
                     "--reviewer", reviewer]) == 0
    capsys.readouterr()
    status, out, err = _report(capsys, str(folder))
    assert status == 0 and err == ""
    assert "3 sessions · 8 turns · 2 empty turns" in out
    assert re.search(r"│ assistant\s*│\s*1 │ 50\.0% │", out)
    assert re.search(r"│ 10 min – 1 h\s*│\s*1 │", out)
    assert re.search(r"│ approval\s*│\s*2 │", out)
    assert "Labels (2 of 2 empty turns annotated)" in out
    assert re.search(r"ana · bo\s*│\s*2 │\s*0\.500", out)
    # The hostile title is shown as text: no escape sequence reaches the terminal.
    assert "\x1b]" not in out and "\x07" not in out and "<script>document.title" in out


def test_report_reads_journals_given_and_says_when_there_are_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path)
    status, out, _ = _report(capsys, str(folder))
    assert status == 0 and "No annotations yet" in out
    status, _, err = _report(capsys, str(folder), "--annotations", str(tmp_path / "none.jsonl"))
    assert status == 2 and err.count("\n") == 1 and "none.jsonl" in err
    journal = tmp_path / "team.jsonl"
    assert main(["label", str(folder / "b.json"), "--turn", "#2", "--label", "artifact",
                 "--reviewer", "cy", "--annotations", str(journal)]) == 0
    capsys.readouterr()
    status, out, _ = _report(capsys, str(folder), "--annotations", str(journal))
    assert "Labels (1 of 2 empty turns annotated)" in out and "only one reviewer" in out


def test_unreadable_paths_are_one_line_each_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path)
    status, out, err = _report(capsys, str(folder), str(tmp_path / "missing.json"))
    assert status == 2 and "3 sessions" in out
    assert err.count("\n") == 1 and "missing.json" in err


def test_nothing_readable_is_the_error_lines_alone_without_a_table_of_zeros(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    page = tmp_path / "r.html"
    status, out, err = _report(capsys, str(tmp_path / "empty"), "--html", str(page))
    assert status == 2 and out == "" and not page.exists()
    assert err.count("\n") == 1 and "empty" in err


def test_html_is_self_contained_escaped_and_links_sessions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path)
    page_path = tmp_path / "report.html"
    status, _, err = _report(capsys, str(folder), "--html", str(page_path))
    assert status == 0 and "wrote" in err
    page = page_path.read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img src=x" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    # No network: nothing is fetched from anywhere; charts are data: images.
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    anchors = set(re.findall(r'id="([^"]+)"', page))
    links = re.findall(r'href="#([^"]+)"', page)
    assert links and all(link in anchors for link in links)
    assert 'href="#chat-json-conv-b"' in page and 'id="chat-json-conv-b-2"' in page
    assert "\x1b" not in page


def test_html_charts_are_svg_drawn_by_matplotlib(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the replay[report] extra is not installed")
    import base64

    report = CorpusReport()
    report.add({"path": "/x/a.json", "format": "chat-json", "title": "<b>t</b> $x^2$",
                "session_id": "s", "turns": 4, "skipped": 0, "warnings": [],
                "empty_turns": [{"index": 1, "id": "m1", "role": "user", "timestamp": None,
                                 "reason": "no-content", "evidence": [], "suggestion": None,
                                 "gap_before": 42.0}]})
    page, charted = render_report_html(report)
    assert charted
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(images) == 6
    svgs = [base64.b64decode(image).decode() for image in images]
    assert all("<svg" in svg and "<script" not in svg for svg in svgs)
    assert any("Gap before the empty turn" in svg for svg in svgs)
    # A title is text, never maths or markup, in the chart too.
    assert any("&lt;b&gt;t&lt;/b&gt; $x^2$" in svg for svg in svgs)


def test_a_long_session_name_in_a_chart_ends_with_an_ellipsis() -> None:
    pytest.importorskip("matplotlib", reason="the replay[report] extra is not installed")
    import base64

    title = "Re-enable protobuf transport, logging.ts review"
    report = CorpusReport()
    report.add({"path": "/x/a.json", "format": "chat-json", "title": title,
                "session_id": "s", "turns": 8, "skipped": 0, "warnings": [],
                "empty_turns": [{"index": 1, "id": "m1", "role": "user", "timestamp": None,
                                 "reason": "no-content", "evidence": [], "suggestion": None,
                                 "gap_before": None}]})
    page, _ = render_report_html(report)
    svgs = [base64.b64decode(image).decode()
            for image in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)]
    silent = next(svg for svg in svgs if "Most silent sessions" in svg)
    assert f"{title[:35]}…" in silent


def test_html_without_matplotlib_still_has_every_number(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.publish import report_html

    monkeypatch.setattr(report_html, "bar_chart_svg", lambda *a, **k: None)
    report = CorpusReport()
    report.add({"path": "/x/a.json", "format": "chat-json", "title": None, "session_id": "s",
                "turns": 4, "skipped": 0, "warnings": [],
                "empty_turns": [{"index": 1, "id": "m1", "role": "user", "timestamp": None,
                                 "reason": "no-content", "evidence": [], "suggestion": None,
                                 "gap_before": None}]})
    page, charted = render_report_html(report)
    assert not charted and "<img" not in page
    assert "no-content" in page and "no time" in page


_FONT_CACHE_AT_ONCE = """
import sys, threading

class AtOnce:  # matplotlib's "building the font cache" warning is due after 5 s: now
    def __init__(self, interval, function):
        self.function = function
    def start(self):
        self.function()
    def cancel(self):
        pass

threading.Timer = AtOnce
from replay.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_report_html_says_only_its_own_lines_on_stderr(tmp_path: Path) -> None:
    # (The round-10 fuzz, seed 1001: `report --html` on a loaded machine printed a line of
    # matplotlib's on stderr. Its first chart of a fresh cache builds the font cache, and a
    # build longer than 5 s logs "Matplotlib is building the font cache"; a CJK name in a
    # chart warned of glyphs missing from DejaVu Sans, every time.)
    pytest.importorskip("matplotlib", reason="the replay[report] extra is not installed")
    import os
    import subprocess
    import sys

    path = _chat(tmp_path, "cjk.json", [
        {"role": "user", "content": "修复测试"}, {"role": "assistant", "content": ""},
    ], "conv-cjk", title="修复测试 漢字")
    env = {key: value for key, value in os.environ.items() if not key.startswith("MPL")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # no font cache yet
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", _FONT_CACHE_AT_ONCE, "report", "--no-cache", "--jobs", "1",
         "--html", str(tmp_path / "out.html"), str(path)],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cache" / "matplotlib").is_dir()  # the font cache was built
    assert done.stderr.splitlines() == [f"replay: wrote {tmp_path / 'out.html'}"]
    assert "修复测试" in (tmp_path / "out.html").read_text(encoding="utf-8")


def test_a_control_character_in_a_chart_name_is_escaped() -> None:
    pytest.importorskip("matplotlib", reason="the replay[report] extra is not installed")
    import xml.etree.ElementTree as ElementTree

    from replay.core.publish.report_html import bar_chart_svg
    from replay.core.safe import escape_controls

    svg = bar_chart_svg("Most silent sessions", [("fix\x00it\x1b[2J", 1)])
    assert svg is not None
    ElementTree.fromstring(svg)  # readable XML: a raw NUL is not
    assert escape_controls("fix\x00it\x1b[2J") in svg and "\x1b" not in svg
