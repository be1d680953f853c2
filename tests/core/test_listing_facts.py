"""Listing a folder again reads only what changed: each unchanged file's format and start are
kept under its stamp (`corpus.file_facts`), a folder holding symbolic links is stamped
through them, and no listing is ever stale: a file added, removed, or rewritten a moment
ago (within its time's tick) is seen by the next scan."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core import readers
from replay.core.corpus import tasks
from replay.core.readers import base, claude_code
from tests.conftest import SAMPLES

OLD = 1_700_000_000


def _age(*paths: Path) -> None:
    for path in paths:
        for folder, _, files in os.walk(path):
            for name in files:
                os.utime(Path(folder) / name, (OLD, OLD), follow_symlinks=False)
        if path.is_file():
            os.utime(path, (OLD, OLD))


@pytest.fixture
def heads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every file whose head is read to tell its format or its start."""
    seen: list[str] = []
    read, glance_head = readers.read_head, claude_code._head

    def counted(path: Path, *args):  # type: ignore[no-untyped-def]
        if not path.is_dir():
            seen.append(path.name)
        return read(path, *args)

    def counted_glance(path: Path) -> bytes:
        seen.append(path.name)
        return glance_head(path)

    monkeypatch.setattr(readers, "read_head", counted)
    monkeypatch.setattr(base, "read_head", counted)
    monkeypatch.setattr(claude_code, "_head", counted_glance)
    return seen


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    real = tasks.plan

    def listing(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(str(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(tasks, "plan", listing)
    return made


def _scan(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    main(["scan", "--json", "--jobs", "1", *args])
    return capsysbinary.readouterr()[0]


def _gemini_on_one_line(path: Path) -> Path:
    messages = [{"id": f"m{n}", "timestamp": "2025-12-01T21:45:00Z",
                 "type": "user" if n % 2 == 0 else "gemini",
                 "content": f"message {n} " + "words " * 300} for n in range(200)]
    path.write_bytes(orjson.dumps({
        "sessionId": "5b959dae-0000-4000-8000-000000000000", "projectHash": "ab" * 32,
        "startTime": "2025-12-01T21:45:00Z", "lastUpdated": "2025-12-01T22:45:00Z",
        "messages": messages}))
    return path


def _mixed(folder: Path) -> Path:
    """A folder of sessions of many formats, in subfolders too, all long unchanged."""
    (folder / "deeper").mkdir(parents=True)
    for sample in sorted(SAMPLES.iterdir()):
        if sample.suffix != ".md":
            shutil.copy(sample, folder / sample.name)
    shutil.copy(SAMPLES / "flaky-test.codex.jsonl", folder / "deeper" / "rollout.jsonl")
    _gemini_on_one_line(folder / "deeper" / "session-2025-12-01T21-45-5b959dae.json")
    (folder / "notes.txt").write_text("not a transcript\n")
    _age(folder)
    return folder


def test_a_folder_listed_again_reads_only_the_files_that_changed(
        tmp_path: Path, heads: list[str], listings: list[str],
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _mixed(tmp_path / "mixed")
    first = _scan(capsysbinary, str(folder))
    assert len(first.splitlines()) >= 10 and "notes.txt" in heads
    heads.clear()
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", folder / "deeper" / "new.jsonl")
    _age(folder / "deeper" / "new.jsonl")
    second = _scan(capsysbinary, str(folder))
    assert str(folder) in listings  # (the folder changed: listed again)
    assert set(heads) == {"new.jsonl"}
    assert second == _scan(capsysbinary, "--no-cache", str(folder))
    assert len(second.splitlines()) == len(first.splitlines()) + 1


def test_a_file_changed_a_moment_ago_is_looked_at_again_and_the_others_are_not(
        tmp_path: Path, heads: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _mixed(tmp_path / "mixed")
    live = folder / "live.jsonl"
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", live)  # (written just now)
    _scan(capsysbinary, str(folder))
    heads.clear()
    _scan(capsysbinary, str(folder))
    assert set(heads) == {"live.jsonl"}
    # Rewritten within its time's tick: the same size and modification time, another
    # format. Its format was never kept: it is told again, not served stale.
    status = live.stat()
    data = (SAMPLES / "flaky-test.codex.jsonl").read_bytes()
    live.write_bytes(data[:status.st_size].ljust(status.st_size, b"\n"))
    os.utime(live, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert live.stat().st_size == status.st_size
    rewritten = _scan(capsysbinary, str(folder))
    assert rewritten == _scan(capsysbinary, "--no-cache", str(folder))
    assert b'"path":"' + str(live).encode() + b'","format":"codex"' in rewritten


def test_a_file_added_or_removed_right_after_a_listing_is_seen(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    folder = _mixed(tmp_path / "mixed")
    before = _scan(capsysbinary, str(folder))
    assert _scan(capsysbinary, str(folder)) == before
    added = folder / "deeper" / "added.jsonl"
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", added)
    with_it = _scan(capsysbinary, str(folder))
    assert str(added).encode() in with_it and len(with_it.splitlines()) == \
        len(before.splitlines()) + 1
    added.unlink()
    (folder / "support-bot.chat.json").unlink()
    without = _scan(capsysbinary, str(folder))
    assert without == _scan(capsysbinary, "--no-cache", str(folder))
    assert b"added.jsonl" not in without and b"support-bot" not in without


def test_a_folder_holding_symbolic_links_is_not_listed_again_until_one_changes(
        tmp_path: Path, listings: list[str], heads: list[str],
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "kept").mkdir(parents=True)
    shutil.copy(SAMPLES / "flaky-test.codex.jsonl", elsewhere / "kept" / "rollout.jsonl")
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", elsewhere / "one.jsonl")
    shutil.copy(SAMPLES / "support-bot.chat.json", elsewhere / "two.chat.json")
    folder = _mixed(tmp_path / "mixed")
    (folder / "linked.jsonl").symlink_to(elsewhere / "one.jsonl")
    (folder / "linked-folder").symlink_to(elsewhere / "kept")
    (folder / "loop").symlink_to(folder)  # (read once, at its first place)
    _age(elsewhere, folder)
    first = _scan(capsysbinary, str(folder))
    assert b"linked.jsonl" in first and b"linked-folder/rollout.jsonl" in first
    listings.clear()
    heads.clear()
    assert _scan(capsysbinary, str(folder)) == first
    assert listings == [] and heads == []
    # Through the link to a folder: a file added there is seen.
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", elsewhere / "kept" / "more.jsonl")
    _age(elsewhere / "kept" / "more.jsonl")
    grown = _scan(capsysbinary, str(folder))
    assert b"linked-folder/more.jsonl" in grown
    # A link pointed elsewhere, to a file of another format: seen.
    (folder / "linked.jsonl").unlink()
    (folder / "linked.jsonl").symlink_to(elsewhere / "two.chat.json")
    moved = _scan(capsysbinary, str(folder))
    assert moved == _scan(capsysbinary, "--no-cache", str(folder))
    assert moved != grown and b'"format":"chat-json"' in moved


def test_a_link_s_target_rewritten_with_the_same_stamp_as_the_link_is_seen(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """What a link points to is stamped, not the link: the target changing is seen."""
    target = tmp_path / "target.jsonl"
    shutil.copy(SAMPLES / "refactor.claude-code.jsonl", target)
    folder = _mixed(tmp_path / "mixed")
    (folder / "linked.jsonl").symlink_to(target)
    _age(target, folder)
    first = _scan(capsysbinary, str(folder))
    shutil.copy(SAMPLES / "flaky-test.codex.jsonl", target)
    os.utime(target, (OLD + 60, OLD + 60))
    assert time.time() - target.stat().st_mtime > 2
    changed = _scan(capsysbinary, str(folder))
    assert changed != first and changed == _scan(capsysbinary, "--no-cache", str(folder))
