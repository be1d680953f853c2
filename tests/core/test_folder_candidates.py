"""Which files of a folder are session candidates: the bundled samples scan clean, a README
or a picture beside the transcripts is neither read nor said, and every candidate that cannot
be read still gets its one line and exit status 1."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from replay.core.readers import folder
from replay.core.readers.folder import is_candidate
from tests.conftest import REPO, SAMPLES

CHAT = json.dumps({"messages": [{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": ""}]})


def _scan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replay", "scan", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


def test_the_bundled_samples_scan_with_status_zero_and_nothing_on_stderr() -> None:
    result = _scan(str(SAMPLES))
    assert (result.returncode, result.stderr) == (0, "")
    result = _scan("--json", str(SAMPLES))
    assert (result.returncode, result.stderr) == (0, "")
    assert len(result.stdout.splitlines()) == len([p for p in SAMPLES.iterdir()
                                                   if p.name != "README.md"])


def _mixed_folder(tmp_path: Path) -> Path:
    """Transcripts, prose and pictures side by side, plus candidates that cannot be read."""
    root = tmp_path / "mixed"
    root.mkdir()
    (root / "good.json").write_text(CHAT)
    (root / "README.md").write_text("# my transcripts\n\nSee below.\n")
    (root / "notes.txt").write_text("todo: look at good.json\n")
    (root / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (root / "empty.md").write_text("")
    (root / "empty.txt").write_text("")
    (root / "loop.txt").symlink_to("loop.txt")
    (root / "broken.json").write_text("not json at all\n")
    (root / "loop.jsonl").symlink_to("loop.jsonl")
    (root / "rollout.traj").write_text("plain words\n")
    # Content decides what is read: chat lines under a .log name are still a session.
    (root / "chat.log").write_text('{"role": "user", "content": "q"}\n'
                                   '{"role": "assistant", "content": "a"}\n')
    sub = root / "more"
    sub.mkdir()
    (sub / "LICENSE").write_text("MIT\n")
    (sub / "other.json").write_text(CHAT)
    return root


def test_only_candidates_are_said_as_skipped_and_content_still_decides_what_is_read(
        tmp_path: Path) -> None:
    root = _mixed_folder(tmp_path)
    result = _scan("--json", str(root))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert all(line.startswith("replay: skipped ") for line in lines)
    said = sorted(Path(line.split(" ", 2)[2].split(": ")[0]).name for line in lines)
    assert said == ["broken.json", "loop.jsonl", "rollout.traj"]
    read = sorted(Path(json.loads(line)["path"]).name for line in result.stdout.splitlines())
    assert read == ["chat.log", "good.json", "other.json"]


def test_a_folder_of_only_unreadable_candidates_exits_two(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    root.mkdir()
    (root / "README.md").write_text("# nothing here\n")
    (root / "broken.json").write_text("not json\n")
    result = _scan(str(root))
    assert result.returncode == 2
    assert "broken.json" in result.stderr and "README.md" not in result.stderr


def _listable_folder(tmp_path: Path) -> Path:
    """Single-session transcripts (listable one by one) among prose, plus broken candidates."""
    root = tmp_path / "listable"
    root.mkdir()
    for sample in ("deploy-pivot.opencode.json", "flaky-test.codex.jsonl"):
        (root / sample).write_bytes((SAMPLES / sample).read_bytes())
    (root / "README.md").write_text("# sessions of May\n")
    (root / "notes.txt").write_text("")
    (root / "broken.json").write_text("not json at all\n")
    (root / "loop.jsonl").symlink_to("loop.jsonl")
    return root


def test_the_folder_listing_keeps_candidates_only(tmp_path: Path) -> None:
    entries = folder.list_sessions(_listable_folder(tmp_path))
    assert entries is not None
    listed = sorted((entry.path.name, entry.problem is not None) for entry in entries)
    assert listed == [("broken.json", True), ("deploy-pivot.opencode.json", False),
                      ("flaky-test.codex.jsonl", False), ("loop.jsonl", True)]


def test_candidate_names() -> None:
    for name in ("a.json", "a.JSONL", "x.ndjson", "run.traj", "run.traj.json", "opencode.db",
                 "s.sqlite", ".aider.chat.history.md"):
        assert is_candidate(Path(name)), name
    for name in ("README.md", "notes.txt", "shot.png", "LICENSE", "SOURCES.md", "a.json.bak"):
        assert not is_candidate(Path(name)), name


def test_jsonl_transcripts_of_several_tools_in_one_folder_are_each_read(tmp_path: Path) -> None:
    # A Claude Code session makes the folder look like a Claude Code project; the Codex and
    # opencode files beside it were skipped as "not a Claude Code session file".
    names = ["refactor.claude-code.jsonl", "flaky-test.codex.jsonl",
             "dry-run-flag.opencode-run.jsonl"]
    for name in names:
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    (tmp_path / "broken.jsonl").write_text("not a transcript\n")
    result = _scan("--json", str(tmp_path))
    formats = {Path(json.loads(line)["path"]).name: json.loads(line)["format"]
               for line in result.stdout.splitlines()}
    assert formats == {"refactor.claude-code.jsonl": "claude-code",
                       "flaky-test.codex.jsonl": "codex",
                       "dry-run-flag.opencode-run.jsonl": "opencode-run"}
    # What no reader takes is still said, once, and the status says some were skipped.
    assert result.returncode == 1
    assert result.stderr.count("broken.jsonl") == 1 and "skipped" in result.stderr


def test_a_subfolder_of_a_claude_code_project_folder_is_scanned_too(tmp_path: Path) -> None:
    # A folder of Claude Code sessions is read as a project folder; a Codex rollout and a
    # chat export kept in its subfolders were silently left out of the scan.
    root = tmp_path / "d"
    (root / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", root / "a.jsonl")
    shutil.copy(SAMPLES / "flaky-test.codex.jsonl", root / "sub" / "b.jsonl")
    shutil.copy(SAMPLES / "torch-revert.opencode.json", root / "sub" / "deeper" / "c.json")
    (root / "notes").mkdir()  # no transcript in it: nothing said
    (root / "notes" / "todo.txt").write_text("look at a.jsonl\n")
    result = _scan("--json", str(root))
    assert (result.returncode, result.stderr) == (0, "")
    found = [(json.loads(line)["path"], json.loads(line)["format"])
             for line in result.stdout.splitlines()]
    assert sorted(found) == [(str(root / "a.jsonl"), "claude-code"),
                             (str(root / "sub" / "b.jsonl"), "codex"),
                             (str(root / "sub" / "deeper" / "c.json"), "opencode")]
    # A file that may hold several sessions (a chat dataset) is not guessed at: one line
    # names its folder, and the status says something was not scanned.
    (root / "data").mkdir()
    (root / "data" / "chats.json").write_text(CHAT)
    result = _scan("--json", str(root))
    assert result.returncode == 1
    assert result.stderr == (f"replay: skipped {root / 'data'}: its files hold several "
                             "sessions each; scan that folder by itself\n")
    assert len(result.stdout.splitlines()) == 3


def test_a_session_s_own_folder_is_not_listed_again(tmp_path: Path) -> None:
    # `<id>/subagents/` beside `<id>.jsonl` is read with its session, as before.
    from replay.core.readers import claude_code

    root = tmp_path / "project"
    (root / "s1" / "subagents").mkdir(parents=True)
    session = (SAMPLES / "refactor.claude-code.jsonl").read_bytes()
    (root / "s1.jsonl").write_bytes(session)
    (root / "s1" / "subagents" / "agent-x.jsonl").write_bytes(session)
    keys = [entry.key for entry in claude_code.list_sessions(root)]
    assert keys == ["s1.jsonl"]
