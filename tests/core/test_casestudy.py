"""`replay export --format md|html`: case studies of empty turns, with untrusted text inert."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.cli import main

HOSTILE = ("<script>document.title='pwned'</script><img src=x onerror=\"document.title="
           "'pwned-img'\"> ```\n# not a heading\n```` \x1b]0;title\x07 [x](javascript:alert(1))")

CHAT = {
    "id": "conv-h",
    "title": "Flaky <b>test</b>",
    "messages": [
        {"role": "user", "content": "Please fix the flaky test", "timestamp":
         "2026-03-01T10:00:00Z"},
        {"role": "assistant", "content": HOSTILE, "timestamp": "2026-03-01T10:00:05Z"},
        {"role": "user", "content": "", "timestamp": "2026-03-01T10:12:00Z"},
        {"role": "assistant", "content": "Continuing with the seed pinned.",
         "timestamp": "2026-03-01T10:12:04Z"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": ""},
    ],
}


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    return path


def _export(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["export", *args])
    out, err = capsys.readouterr()
    return status, out, err


def _annotate(chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["label", str(chat), "--turn", "#3", "--label", "approval", "--reviewer", "ana",
                 "--note", "said <nothing> after the *plan*"]) == 0
    capsys.readouterr()


def test_markdown_case_study_of_an_annotated_turn(
        chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _annotate(chat, capsys)
    status, out, err = _export(capsys, str(chat), "--format", "md")
    assert status == 0 and "wrote 1 case study (md)" in err
    assert "## Flaky \\<b\\>test\\</b\\> · #3" in out
    assert "- **Turn:** #3 · user · 2026-03-01 10:12:00" in out
    assert "- **Reason:** blank-text" in out
    assert "gap before: 12 min" in out
    assert "**Label:** approval (Tacit approval) · reviewer ana · confidence medium" in out
    assert "**Note:** said \\<nothing\\> after the \\*plan\\*" in out
    assert "**Suggestion:**" in out
    assert "**#2 assistant**" in out and "**#4 assistant**" in out
    # The hostile excerpt sits in a fence longer than any backtick run inside it.
    fence = re.search(r"^(`{5,})text$", out, re.MULTILINE)
    assert fence is not None
    body = out[fence.end():out.index("\n" + fence.group(1) + "\n", fence.end())]
    assert "<script>" in body and "# not a heading" in body
    assert "\x1b" not in out and "\x07" not in out
    # Only the annotated turn; #6 is empty too but nobody labelled it.
    assert "#6" not in out


def test_all_empty_writes_every_empty_turn_and_html_escapes_everything(
        chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _annotate(chat, capsys)
    target = tmp_path / "cases.html"
    status, out, err = _export(capsys, str(chat), "--format", "html", "--all-empty",
                               "-o", str(target))
    assert status == 0 and out == "" and "wrote 2 case studies (html)" in err
    page = target.read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "<b>test" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert 'id="chat-json-conv-h-3"' in page and 'id="chat-json-conv-h-6"' in page
    assert "not annotated" in page and "said &lt;nothing&gt; after the *plan*" in page
    assert "\x1b" not in page


def test_output_kind_from_the_file_name_and_as(
        chat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _annotate(chat, capsys)
    status, _, _ = _export(capsys, str(chat), "-o", str(tmp_path / "cases.md"))
    assert status == 0 and (tmp_path / "cases.md").read_text().startswith("# Case studies")
    status, out, _ = _export(capsys, str(chat), "--as", "html")
    assert status == 0 and out.startswith("<!DOCTYPE html>")


def test_no_annotation_says_how_to_get_every_empty_turn(
        chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _export(capsys, str(chat), "--format", "md")
    assert status == 0 and "--all-empty" in out and "wrote 0 case studies" in err


def test_the_reader_format_still_works_beside_md_and_html(
        chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _export(capsys, str(chat), "--format", "chat-json", "--all-empty")
    assert status == 0 and out.splitlines()[0].lstrip("\ufeff").startswith("session_id,")


def test_turns_passed_over_are_named_so_the_numbers_never_jump_unsaid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # #2 and #4 are both empty: the write-up of #4 shows #3 before and #5 after, and says
    # #2 (before #3) was left out; two empties after it are named as a range.
    said = [("user", "start"), ("assistant", ""), ("user", "go on"), ("assistant", ""),
            ("user", "still there?"), ("assistant", ""), ("assistant", ""),
            ("user", "hello")]
    path = tmp_path / "gaps.json"
    path.write_text(json.dumps({"id": "gaps", "messages": [
        {"role": role, "content": text} for role, text in said]}), encoding="utf-8")
    status, out, _ = _export(capsys, str(path), "--format", "md", "--all-empty")
    assert status == 0
    study = out.split("· #4\n", 1)[1].split("\n## ", 1)[0]
    before, after = study.split("### After", 1)
    assert before.index("**#1 user**") < before.index("*#2 not shown: no visible content*") \
        < before.index("**#3 user**")
    assert after.index("**#5 user**") < after.index(
        "*#6–#7 not shown: 2 turns without visible content*") < after.index("**#8 user**")
    assert "not shown" not in out.split("· #2\n", 1)[1].split("### After", 1)[0]
    status, page, _ = _export(capsys, str(path), "--format", "html", "--all-empty")
    assert "<p class=muted>#2 not shown: no visible content</p>" in page
