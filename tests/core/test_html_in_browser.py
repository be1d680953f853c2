"""The report and case-study pages opened in a real headless Chromium: what shows, what runs.

Skipped, saying why, when no Chromium is installed (`.ci/run` installs it first).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from replay.cli import main

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                if (found := shutil.which(name))), None)

pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium on PATH (apt-get install chromium; .ci/run does)")

ATTACK = ("<script>document.title='pwned by script';document.body.dataset.ran='script'"
          "</script><img src=x onerror=\"document.title='pwned by img';"
          "document.body.dataset.ran='img'\">")


def _browser(*args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-extensions", "--virtual-time-budget=3000", *args],
        capture_output=True, text=True, timeout=120, check=False)


def _dom(page: Path) -> str:
    """The document as the browser holds it after loading (and running whatever it would)."""
    done = _browser("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _screenshot(page: Path, png: Path, height: int = 1600) -> None:
    done = _browser(f"--screenshot={png}", f"--window-size=1200,{height}", page.as_uri())
    assert done.returncode == 0 and png.stat().st_size > 10_000, done.stderr[-2000:]


def _text(dom: str) -> str:
    """The visible text of a DOM dump: tags and the style sheet dropped, entities read."""
    body = re.sub(r"<style>.*?</style>", "", dom, flags=re.DOTALL)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    attack = {"id": "conv-attack", "title": ATTACK, "messages": [
        {"role": "user", "content": "Please fix the flaky test",
         "timestamp": "2026-03-01T10:00:00Z"},
        {"role": "assistant", "content": ATTACK, "timestamp": "2026-03-01T10:00:05Z"},
        {"role": "user", "content": "", "timestamp": "2026-03-01T10:20:00Z"},
        {"role": "assistant", "content": "Continuing.", "timestamp": "2026-03-01T10:20:04Z"},
    ]}
    quiet = {"id": "conv-quiet", "messages": [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": ""}]}
    (folder / "attack.json").write_text(json.dumps(attack), encoding="utf-8")
    (folder / "quiet.json").write_text(json.dumps(quiet), encoding="utf-8")
    assert main(["label", str(folder / "attack.json"), "--turn", "#3", "--label", "approval",
                 "--reviewer", "ana", "--note", "<b>bold?</b> no"]) == 0
    return folder


def test_report_page_shows_the_numbers_and_runs_nothing(
        corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "report.html"
    assert main(["report", "--jobs", "1", str(corpus), "--html", str(page)]) == 0
    capsys.readouterr()
    dom = _dom(page)
    # Neither the script nor the image handler ran: the title and body are as written.
    assert "<title>replay report · 2 sessions</title>" in dom
    assert "pwned" not in re.search(r"<title>.*?</title>", dom, re.DOTALL).group(0)
    assert "data-ran" not in dom
    # The attack is shown, as text, never as elements.
    assert not re.search(r"<script|<img src=\"x", dom)
    text = _text(dom)
    assert "Corpus report" in text and "2 sessions · 6 turns · 2 empty turns" in text
    assert "<script>document.title='pwned by script'" in text
    assert "Most silent sessions (top 10)" in text and "Gap before the empty turn" in text
    assert "approval · ana · medium · <b>bold?</b> no" in text
    if "data:image/svg+xml" in dom:
        assert dom.count('<img alt="') == 7  # format, role, reason, suggestion, gap, top, labels
    _screenshot(page, tmp_path / "report.png")


def test_case_study_page_shows_the_turns_and_runs_nothing(
        corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "cases.html"
    assert main(["export", str(corpus / "attack.json"), "--format", "html",
                 "-o", str(page)]) == 0
    capsys.readouterr()
    dom = _dom(page)
    assert "<title>Case studies</title>" in dom and "data-ran" not in dom
    assert not re.search(r"<script|<img", dom)
    text = _text(dom)
    assert "Turn #3 · user · 2026-03-01 10:20:00" in text
    assert "Reason blank-text" in text and "gap before: 20 min" in text
    assert "Label approval (Tacit approval) · reviewer ana · confidence medium" in text
    assert "Note <b>bold?</b> no" in text
    assert "#2 assistant · 2026-03-01 10:00:05 <script>document.title='pwned by script'" in text
    assert "#4 assistant · 2026-03-01 10:20:04 Continuing." in text
    _screenshot(page, tmp_path / "cases.png", height=1000)
