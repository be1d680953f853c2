"""Session titles: the tool's own title record where it writes one, else the first real
prompt; the session list and the header show `Session.label`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.corpus.scan import summarize
from replay.core.readers import load_sessions
from tests.conftest import SAMPLES
from tests.core.test_claude_code import Lines, text
from tests.core.test_codex import assistant, line, user_event, user_item, write_rollout


def _claude(tmp_path: Path, *titles: dict[str, str]) -> str | None:
    lines = Lines()
    for record in titles:
        lines.raw(record)
    lines.user("u1", "fix the flaky test please").assistant("a1", "msg_1", text("On it."))
    (session,) = load_sessions(lines.write(tmp_path / "s.jsonl"))
    return session.title


def test_claude_code_title_records_and_their_precedence(tmp_path: Path) -> None:
    summary = {"type": "summary", "summary": "Flaky test hunt", "leafUuid": "x"}
    ai = {"type": "ai-title", "aiTitle": "Fix flaky scheduler test", "sessionId": "s"}
    custom = {"type": "custom-title", "customTitle": "ci-flake", "sessionId": "s"}
    later_summary = {"type": "summary", "summary": "Something later", "leafUuid": "y"}
    assert _claude(tmp_path / "a", summary, later_summary) == "Flaky test hunt"
    assert _claude(tmp_path / "b", summary, ai) == "Fix flaky scheduler test"
    assert _claude(tmp_path / "c", custom, ai, summary) == "ci-flake"
    assert _claude(tmp_path / "d") is None


def test_claude_code_without_a_title_is_labelled_by_its_first_prompt(tmp_path: Path) -> None:
    path = (Lines()
            .user("u0", "<command-name>/clear</command-name>")
            .user("u1", "  \nfix the flaky test please\nit fails one run in twenty")
            .assistant("a1", "msg_1", text("On it."))
            .write(tmp_path / "s.jsonl"))
    (session,) = load_sessions(path)
    assert session.title is None
    assert session.label == "fix the flaky test please"


def test_codex_thread_name_updated_names_the_session(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, [
        line("session_meta", {"id": "t-1", "cwd": "/w"}),
        line("response_item", user_item("why is CI red")), line("event_msg", user_event(
            "why is CI red")), line("response_item", assistant("Looking.")),
        line("event_msg", {"type": "thread_name_updated", "thread_id": "t-1",
                           "thread_name": "CI red on main"}),
        line("event_msg", {"type": "thread_name_updated", "thread_id": "t-1",
                           "thread_name": "CI: heap tie-break"}),
    ])
    (session,) = load_sessions(path)
    assert session.title == "CI: heap tie-break"
    assert session.label == "CI: heap tie-break"


def test_codex_without_a_name_is_labelled_by_its_first_prompt() -> None:
    (session,) = load_sessions(SAMPLES / "flaky-test.codex.jsonl")
    assert session.title is None
    assert session.label and not session.label.startswith("<")
    assert session.label != session.session_id


@pytest.mark.parametrize("summary", [None, "Cache expiry fix"])
def test_gemini_first_user_message_unless_a_summary(tmp_path: Path, summary: str | None) -> None:
    document = {"sessionId": "g", "projectHash": "p", "messages": [
        {"id": "a", "type": "user", "content": "why does the cache never expire?"},
        {"id": "b", "type": "gemini", "content": "Let me look."}]}
    if summary:
        document["summary"] = summary
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document))
    (session,) = load_sessions(path)
    assert session.title == (summary or "why does the cache never expire?")


def test_opencode_export_title_and_chat_first_prompt_in_the_summary() -> None:
    (export,) = load_sessions(SAMPLES / "torch-revert.opencode.json")
    assert export.title and summarize(export).label == export.title
    (chat,) = load_sessions(SAMPLES / "support-bot.chat.json")
    assert chat.label.startswith("hi, my order SW-48213")


def test_trajectory_is_labelled_by_its_task() -> None:
    (session,) = load_sessions(SAMPLES / "paginate-fix.mini-swe-agent.traj.json")
    assert session.label == "The first page of search results repeats items 21-40 and items 1-20 n…"


def _scanned(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    from replay.cli import main

    main(["scan", "--jobs", "1", *args])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_scan_names_each_session_as_the_app_does(capsys: pytest.CaptureFixture[str]) -> None:
    from replay.core.corpus.scan import report_label
    from replay.core.session.model import first_prompt
    from tests.conftest import REALDATA

    paths = sorted(p for p in SAMPLES.iterdir() if p.name != "README.md")
    if REALDATA.is_dir():
        paths += sorted(p for p in REALDATA.rglob("*.json*") if ".meta." not in p.name)
    for path in paths:
        sessions = load_sessions(path)
        reports = _scanned(capsys, "--json", str(path))
        assert len(reports) == len(sessions), path
        for session, report in zip(sessions, reports, strict=True):
            # `title`: the source's own title, else the first real prompt; the table heading
            # (`report_label`) is then the header's and the session list's name.
            assert report["title"] == (session.title or first_prompt(session.turns)), path
            assert report_label(report) == session.label, path


def test_the_table_heads_an_untitled_session_with_its_first_prompt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "<context>cwd=/x</context>\nwhy is the build red?"},
        {"role": "assistant", "content": ""}]}))
    from replay.cli import main

    assert main(["scan", str(path)]) == 0
    heading = capsys.readouterr().out.splitlines()[0]
    assert heading.startswith("why is the build red?  chat-json · 3 turns · 1 empty"), heading


def test_the_table_counts_one_turn_in_the_singular(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    from replay.cli import main

    assert main(["scan", str(path)]) == 0
    heading = capsys.readouterr().out.splitlines()[0]
    assert heading.startswith("hi  chat-json · 1 turn · 0 empty"), heading
