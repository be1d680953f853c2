"""`replay share`: the page, the Markdown and the recording, their safety, and the command's
edges (default name, standard output, one session only, nothing written half)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replay.cli import main
from tests.core.share_fixtures import SESSION_ID, silent_session


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text of the script element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def _share(tmp_path: Path, *args: str, name: str = "out") -> tuple[Path, str]:
    source = silent_session(tmp_path / "silent.jsonl")
    journal = tmp_path / "journal.jsonl"
    assert main(["label", str(source), "--turn", "#7", "--label", "resumption",
                 "--reviewer", "ana", "--note", "back after `lunch` <b>", "--annotations",
                 str(journal)]) == 0
    out = tmp_path / name
    code = main(["share", str(source), "-o", str(out), "--annotations", str(journal), *args])
    assert code == 0
    return out, out.read_text(encoding="utf-8")


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_page_holds_every_turn_and_only_its_own_script(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, page = _share(tmp_path, name="page.html")
    assert "wrote 12 turns, 3 empty (html)" in capsys.readouterr().err
    parser = _Elements()
    parser.feed(page)
    turns = [attrs for tag, attrs in parser.tags if tag == "article"]
    assert [attrs["data-turn"] for attrs in turns] == [str(n) for n in range(1, 13)]
    assert [(a["data-turn"], a["data-empty"]) for a in turns if "data-empty" in a] == \
        [("3", "empty-wrapper"), ("7", "blank-text"), ("10", "empty-wrapper")]
    assert all(attrs["id"] == attrs["data-turn"] for attrs in turns)
    # One script, ours, allowed by its digest; one style, allowed by its digest; nothing
    # else may run or load.
    assert len(parser.scripts) == 1 and len(parser.styles) == 1
    policy = next(a["content"] for t, a in parser.tags
                  if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy
    assert f"script-src '{_digest(parser.scripts[0])}'" in policy
    assert f"style-src '{_digest(parser.styles[0])}'" in policy
    assert "unsafe-inline" not in policy
    for tag, attrs in parser.tags:
        assert tag not in ("img", "iframe", "link", "object", "embed")
        assert not (attrs.get("href") or "#").lstrip().lower().startswith(("http", "javascript"))
        assert not [name for name in attrs if name.startswith("on")]
    # The transcript's attack is text.
    assert "&lt;script&gt;document.title=&#x27;pwned by script&#x27;" in page
    assert "␛[ESC]]0;evil title[BEL]" in page and "\x1b" not in page
    # Tool calls and reasoning are folded, the empty turn carries its reading and its label.
    assert page.count('<details class="tool">') == 1
    assert page.count('<details class="reasoning">') == 1
    seventh = page[page.index('id="7"'):page.index('id="8"')]
    assert "EMPTY TURN 2 / 3" in seventh and "gap before: 10 min" in seventh
    assert "<b>resumption</b> (Resumption) · reviewer ana" in seventh
    assert "back after `lunch` &lt;b&gt;" in seventh


def test_playback_delays_are_the_apps(tmp_path: Path) -> None:
    from replay.core.index.navigation import Navigator
    from replay.core.readers import load_sessions

    _, page = _share(tmp_path, name="page.html")
    delays = [float(d) for d in re.findall(r'data-delay="([\d.]+)"', page)]
    session = load_sessions(tmp_path / "silent.jsonl")[0]
    navigator = Navigator(session)
    assert delays == [round(navigator.delay_after(i, 1.0, 2.0), 3) for i in range(12)]
    assert max(delays) == 2.0  # the 10-minute gap is capped as in the app


def test_markdown_folds_tools_and_no_transcript_text_becomes_markup(
        tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    _, text = _share(tmp_path, "--as", "md", name="share.md")
    assert text.startswith("# Please fix the flaky test in tests/test\\_io.py\n")
    assert text.count("### #") == 12
    assert "> **EMPTY TURN 2 / 3:** the user sent an empty or blank message (blank-text)" in text
    assert "- **Label:** resumption (Resumption) · reviewer ana" in text
    assert "<details><summary>Bash · completed</summary>" in text
    # Rendered as GitHub would (raw HTML allowed), nothing of the transcript is an element.
    rendered = MarkdownIt("commonmark", {"html": True}).render(text)
    assert "<script" not in rendered and "<img" not in rendered and "<a href" not in rendered
    assert "&lt;script&gt;document.title" in rendered
    assert "<!-- comment -->" not in rendered.replace("&lt;!-- comment --&gt;", "")
    assert "\x1b" not in text


def test_the_recording_is_asciicast_v2_with_a_marker_at_each_empty_turn(tmp_path: Path) -> None:
    out, text = _share(tmp_path, "--as", "cast", name="share.cast")
    lines = text.splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 2 and header["width"] > 0 and header["height"] > 0
    events = [json.loads(line) for line in lines[1:]]
    times = [event[0] for event in events]
    assert times == sorted(times)
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) <= 2.0
    markers = [event for event in events if event[1] == "m"]
    assert [event[2] for event in markers] == ["#3 empty-wrapper", "#7 blank-text",
                                               "#10 empty-wrapper"]
    output = "".join(event[2] for event in events if event[1] == "o")
    # Every escape sequence is one of our colours; the transcript's are shown, not sent.
    assert re.findall(r"\x1b(?!\[[0-9;]*m)", output) == []
    assert "␛[ESC]]0;evil title[BEL]" in output
    assert " EMPTY TURN 2 / 3 " in output and "resumption (Resumption) · ana" in output
    # Each marker is at the time its turn is shown.
    for marker in markers:
        shown = next(event for event in events
                     if event[1] == "o" and f"#{marker[2].split()[0][1:]} · user" in event[2])
        assert shown[0] == marker[0]


@pytest.mark.skipif(shutil.which("asciinema") is None and not (
    Path(sys.executable).parent / "asciinema").exists(), reason="asciinema is not installed")
def test_asciinema_reads_the_recording(tmp_path: Path) -> None:
    out, text = _share(tmp_path, "--as", "cast", name="share.cast")
    binary = shutil.which("asciinema") or str(Path(sys.executable).parent / "asciinema")
    done = subprocess.run([binary, "cat", str(out)], capture_output=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert b"All 214 tests pass." in done.stdout and b"EMPTY TURN 3 / 3" in done.stdout


def test_default_name_and_suffix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    source = silent_session(tmp_path / "silent.jsonl")
    monkeypatch.chdir(tmp_path)
    assert main(["share", str(source)]) == 0
    assert (tmp_path / f"claude-code-{SESSION_ID}.html").is_file()
    assert f"to claude-code-{SESSION_ID}.html" in capsys.readouterr().err
    assert main(["share", str(source), "-o", "x.md"]) == 0
    assert (tmp_path / "x.md").read_text(encoding="utf-8").startswith("# ")
    assert main(["share", str(source), "--as", "cast"]) == 0
    assert (tmp_path / f"claude-code-{SESSION_ID}.cast").is_file()


def test_standard_output(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    source = silent_session(tmp_path / "silent.jsonl")
    assert main(["share", str(source), "--as", "md", "-o", "-"]) == 0
    captured = capfd.readouterr()
    assert captured.out.startswith("# Please fix") and "to standard output" in captured.err


def test_one_session_only_and_bad_paths(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("a.json", "b.json"):
        (folder / name).write_text(json.dumps({"id": name, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}))
    assert main(["share", str(folder), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "holds 2 sessions; share takes one" in err and "Traceback" not in err
    assert not (tmp_path / "x.html").exists()
    assert main(["share", str(tmp_path / "missing.jsonl")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_nothing_is_written_half(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.publish import share_html

    source = silent_session(tmp_path / "silent.jsonl")
    out = tmp_path / "kept.html"
    out.write_text("the previous page", encoding="utf-8")
    real = share_html.turn_html

    def failing(turn, shared):  # noqa: ANN001, ANN202
        if turn.number == 6:
            raise OSError(28, "No space left on device")
        return real(turn, shared)

    monkeypatch.setattr(share_html, "turn_html", failing)
    assert main(["share", str(source), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left on device" in err
    assert out.read_text(encoding="utf-8") == "the previous page"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kept")] == []


def test_an_unwritable_folder_is_one_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    source = silent_session(tmp_path / "silent.jsonl")
    assert main(["share", str(source), "-o", str(tmp_path / "no" / "such" / "x.html")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("replay: cannot write")
