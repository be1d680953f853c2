"""`replay share --missing-replies`: a request that got no reply is followed by the app's
placeholder `#N+` (not in the file, what came instead), as an empty turn of the page, the
Markdown and the recording, with its annotations; without the option (and the setting) there
is none, as in the app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import main
from tests.core.share_browser import BROWSER, Browser

MESSAGES = [
    {"role": "user", "content": "first question [/] [link=x] list[int]"},
    {"role": "user", "content": "hello? <script>alert(1)</script>"},
    {"role": "assistant", "content": "Sorry, here it is."},
    {"role": "user", "content": "thanks"},
    {"role": "assistant", "content": ""},
]


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"id": "s1", "title": "lost reply", "messages": MESSAGES}))
    return path


def _share(tmp_path: Path, kind: str, *extra: str) -> str:
    source = _source(tmp_path)
    journal = tmp_path / "journal.jsonl"
    if not journal.exists():
        assert main(["label", str(source), "--turn", "#1+", "--label", "other",
                     "--reviewer", "ana", "--note", "went to lunch [b]x[/b]",
                     "--annotations", str(journal)]) == 0
    out = tmp_path / f"out.{kind}"
    assert main(["share", str(source), "-o", str(out), "--annotations", str(journal),
                 *extra]) == 0
    return out.read_text(encoding="utf-8")


def test_the_page_shows_the_placeholder_after_its_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = _share(tmp_path, "html", "--missing-replies")
    turns = page.split("<article ")[1:]
    names = [turn.split('data-turn="', 1)[1].split('"', 1)[0] for turn in turns]
    assert names == ["1", "1+", "2", "3", "4", "5"]
    placeholder = turns[1]
    assert 'data-empty="no-reply"' in placeholder and 'id="1+"' in placeholder
    assert "not in the file" in placeholder and "the reply to #1 never came" in placeholder
    assert "EMPTY TURN 1 / 2" in placeholder
    assert "went to lunch [b]x[/b]" in placeholder  # its annotation, escaped as text
    assert "<script>alert(1)</script>" not in page
    assert 'data-empty="' in turns[5] and "EMPTY TURN 2 / 2" in turns[5]
    assert '<a href="#1+"' in page  # the timeline marks it


def test_markdown_and_recording_show_it_too(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    markdown = _share(tmp_path, "md", "--missing-replies")
    assert "### #1+ · assistant · *not in the file*" in markdown
    assert "the reply to \\#1 never came" in markdown  # (`#` escaped: no heading)
    assert "#1+ (no-reply)" in markdown
    cast = _share(tmp_path, "cast", "--missing-replies")
    markers = [json.loads(line)[2] for line in cast.splitlines()[1:]
               if json.loads(line)[1] == "m"]
    assert markers == ["#1+ no-reply", "#5 blank-text"]


def test_without_the_option_there_is_none(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    page = _share(tmp_path, "html")
    assert 'data-turn="1+"' not in page and "never came" not in page


def test_the_app_setting_turns_it_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("missing_replies = true\n")
    monkeypatch.setenv("REPLAY_CONFIG_FILE", str(config))
    page = _share(tmp_path, "html")
    assert 'data-turn="1+"' in page


@pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH")
def test_the_player_pauses_at_the_placeholder(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _share(tmp_path, "html", "--missing-replies")
    with Browser(tmp_path / "profile") as browser:
        browser.open((tmp_path / "out.html").as_uri())
        browser.press("]")
        assert browser.eval("document.body.dataset.current") == "1+"
        status = browser.eval("document.getElementById('player-status').textContent")
        assert status.startswith("turn 1+ / 5 · empty turn 1 / 2"), status
