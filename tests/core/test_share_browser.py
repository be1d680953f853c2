"""The `replay share` page in a real headless Chromium, driven by keys over DevTools.

What the DOM holds (a turn per `data-turn`, the empty ones marked), that the player pauses by
itself at every empty turn, that `#N` opens there, that nothing is fetched and a
transcript's script, `onerror=` and `javascript:` link run nothing. Skipped, saying why,
when no Chromium is installed (`.ci/run` installs it first).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from replay.cli import main
from tests.core.share_browser import BROWSER, Browser
from tests.core.share_fixtures import silent_session

pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium on PATH (apt-get install chromium; .ci/run does)")

EMPTY = ["3", "7", "10"]
"""The empty turns of `silent_session`."""


@pytest.fixture
def page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    source = silent_session(tmp_path / "silent.jsonl")
    journal = tmp_path / "journal.jsonl"
    assert main(["label", str(source), "--turn", "#7", "--label", "resumption",
                 "--reviewer", "ana", "--note", "<img src=x onerror=alert(1)> back later",
                 "--annotations", str(journal)]) == 0
    out = tmp_path / "page.html"
    assert main(["share", str(source), "-o", str(out), "--annotations", str(journal)]) == 0
    capsys.readouterr()
    return out


@pytest.fixture
def browser(tmp_path: Path) -> Browser:
    with Browser(tmp_path / "profile") as opened:
        yield opened


def test_the_dom_holds_every_turn_and_marks_the_empty_ones(page: Path, browser: Browser) -> None:
    browser.open(page.as_uri())
    numbers = browser.eval("[...document.querySelectorAll('[data-turn]')]"
                           ".map(e => e.dataset.turn)")
    assert numbers == [str(n) for n in range(1, 13)]
    empty = browser.eval("[...document.querySelectorAll('[data-empty]')]"
                         ".map(e => e.dataset.turn + ':' + e.dataset.empty)")
    assert empty == ["3:empty-wrapper", "7:blank-text", "10:empty-wrapper"]
    banner = browser.eval("document.getElementById('7').querySelector('.banner').textContent")
    assert "EMPTY TURN 2 / 3" in banner and "gap before: 10 min" in banner
    assert "resumption" in banner and "<img src=x onerror=alert(1)> back later" in banner
    # Tool calls and reasoning are folded; the timeline has a mark per empty turn.
    assert browser.eval("document.querySelectorAll('details.tool:not([open])').length") == 1
    assert browser.eval("document.querySelectorAll('details.reasoning').length") == 1
    marks = browser.eval("[...document.querySelectorAll('#timeline a.mark')]"
                         ".map(a => a.getAttribute('href'))")
    assert marks == ["#3", "#7", "#10"]
    assert browser.eval("document.querySelector('#timeline a.mark.done').getAttribute('href')") \
        == "#7"


def test_the_player_pauses_at_every_empty_turn(page: Path, browser: Browser) -> None:
    browser.open(page.as_uri())
    assert browser.eval("document.getElementById('player').hidden") is False
    for _ in range(4):
        browser.press("+")  # 16x: the capped gaps (2 s) pass in an eighth of a second
    assert browser.eval("document.body.dataset.speed") == "16"
    stops = []
    for _ in EMPTY:
        browser.press(" ")
        browser.wait_for("document.body.dataset.state === 'paused-empty'")
        stops.append(browser.eval("document.body.dataset.current"))
        status = browser.eval("document.getElementById('player-status').textContent")
        assert f"turn {stops[-1]} / 12" in status and "paused at empty turn" in status
    assert stops == EMPTY
    browser.press(" ")
    browser.wait_for("document.body.dataset.state === 'paused' && "
                     "document.body.dataset.current === '12'")
    assert browser.eval("document.body.dataset.pausedAt") == ",".join(EMPTY)


def test_keys_step_and_jump_as_in_the_app(page: Path, browser: Browser) -> None:
    browser.open(page.as_uri())

    def current() -> str:
        return browser.eval("document.body.dataset.current")

    assert current() == "1"
    browser.press("ArrowRight")
    browser.press("l")
    assert current() == "3"
    browser.press("h")
    assert current() == "2"
    browser.press("]")
    assert current() == "3"
    browser.press("]")
    assert current() == "7"
    browser.press("[")
    assert current() == "3"
    browser.press("End")
    assert current() == "12"
    browser.press("Home")
    assert current() == "1"
    browser.press("-")
    assert browser.eval("document.body.dataset.speed") == "0.5"
    # The current turn is on screen, below the sticky header.
    browser.press("End")
    top = browser.eval("document.getElementById('12').getBoundingClientRect().top")
    header = browser.eval("document.getElementById('top').getBoundingClientRect().bottom")
    assert top >= header - 1


def test_a_link_to_a_turn_opens_there(page: Path, browser: Browser) -> None:
    browser.open(page.as_uri() + "#10")
    assert browser.eval("document.body.dataset.current") == "10"
    top = browser.eval("document.getElementById('10').getBoundingClientRect().top")
    assert 0 <= top < 400


def test_nothing_is_fetched_and_the_transcript_runs_nothing(page: Path,
                                                           browser: Browser) -> None:
    browser.open(page.as_uri())
    # Click the transcript's javascript: link, if it were a link.
    browser.eval("[...document.querySelectorAll('a')].forEach(a => "
                 "a.href.startsWith('javascript:') && a.click())")
    browser.press(" ")
    assert browser.requests() == [page.as_uri()]
    assert browser.eval("document.body.dataset.ran") is None
    assert "pwned" not in browser.eval("document.title")
    assert browser.eval("document.querySelectorAll('script').length") == 1
    assert browser.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert browser.eval("[...document.querySelectorAll('a')].filter(a => "
                        "!a.getAttribute('href').startsWith('#')).length") == 0
    text = browser.eval("document.getElementById('4').textContent")
    assert "<script>document.title='pwned by script'" in text
    assert "javascript:document.body.dataset.ran" in text
    assert "␛[ESC]]0;evil title[BEL]" in text
    assert not [line for line in browser.console_errors() if "Content Security Policy" in line]


def test_without_scripts_the_page_is_the_whole_transcript(page: Path, tmp_path: Path) -> None:
    with Browser(tmp_path / "noscript", scripts=False) as browser:
        browser.open(page.as_uri())
        assert browser.eval("document.querySelectorAll('[data-turn]').length") == 12
        assert browser.eval("document.getElementById('player').hidden") is True
        assert "Fixed: the temp file is now per test." in browser.eval("document.body.textContent")


def test_a_big_session_is_folded_and_says_so(tmp_path: Path, browser: Browser,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.publish import share_model

    monkeypatch.setattr(share_model, "BIG_SOURCE_BYTES", 1000)
    monkeypatch.setattr(share_model, "BIG_PART_CHARS", 20)
    source = silent_session(tmp_path / "silent.jsonl")
    out = tmp_path / "big.html"
    assert main(["share", str(source), "-o", str(out)]) == 0
    assert "large session: turns folded" in capsys.readouterr().err
    browser.open(out.as_uri())
    notice = browser.eval("document.getElementById('notice').textContent")
    assert "every turn is folded" in notice and "longer than 20 characters is cut" in notice
    # Every turn with content is folded; the empty ones show their banner unfolded.
    assert browser.eval("document.querySelectorAll('details.fold').length") == 9
    assert browser.eval("document.querySelectorAll('.empty .banner').length") == 3
    assert browser.eval("document.querySelectorAll('.cut').length") >= 1
    # Stepping unfolds the turn it lands on.
    browser.press("ArrowRight")
    assert browser.eval("document.getElementById('2').querySelector('details.fold').open")


def test_screenshot_of_the_page(page: Path, browser: Browser, tmp_path: Path) -> None:
    browser.open(page.as_uri() + "#7")
    png = tmp_path / "share.png"
    browser.screenshot(png)
    assert png.stat().st_size > 10_000
    assert re.match(rb"\x89PNG", png.read_bytes()[:4])


def test_autoplay_in_the_address_plays_to_the_first_empty_turn(page: Path,
                                                              browser: Browser) -> None:
    browser.open(page.as_uri() + "?autoplay&speed=16")
    browser.wait_for("document.body.dataset.state === 'paused-empty'")
    assert browser.eval("document.body.dataset.current") == "3"
    assert browser.eval("document.body.dataset.speed") == "16"
