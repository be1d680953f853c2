"""`replay share` of a file holding several sessions (an Aider history with two `# aider chat
started at` blocks) said `share takes one (name its file, e.g. <the same file>)`: a hint that
loops. `--session ID` picks one, as `replay label --session` does, and the refusal lists the
ids to pick from."""
from __future__ import annotations

from pathlib import Path

import pytest

from replay.cli import main

HISTORY = """
# aider chat started at 2025-01-02 10:00:00

#### add a --dry-run flag to deploy.py

I'll add the flag.

#### 

#### /undo

# aider chat started at 2025-01-02 11:00:00

#### [/] [link=x] list[int]

Sure.
"""


def _history(tmp_path: Path) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY, encoding="utf-8")
    return path


def test_the_refusal_names_the_sessions_and_the_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _history(tmp_path)
    assert main(["share", str(source), "-o", str(tmp_path / "out.md")]) == 2
    err = capsys.readouterr().err
    assert "holds 2 sessions" in err and "--session" in err, err
    assert "2025-01-02 10:00:00" in err and "2025-01-02 11:00:00" in err, err
    assert "name its file" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.md").exists()


def test_session_picks_one_of_the_file(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    source = _history(tmp_path)
    out = tmp_path / "second.md"
    assert main(["share", str(source), "--session", "2025-01-02 11:00:00",
                 "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "[/] [link=x] list[int]" in text and "dry-run" not in text


def test_an_unknown_session_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    source = _history(tmp_path)
    assert main(["share", str(source), "--session", "nope", "-o", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err
    assert "no session 'nope'" in err and len(err.strip().splitlines()) == 1, err
