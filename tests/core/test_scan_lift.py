"""Issue 27: `scan` (and `report`) leave a huge message in its file, as the app does
(`readers.huge_strings`; the memory is in `bench/README.md`, round 8), and the report is the
one the message decoded whole gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from replay import cli
from replay.core.readers import huge_strings
from replay.core.session import lifted

LINE = "word " * 12 + "\n"
PROMPT = "please write it all out"


def _lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def claude_code(folder: Path, turns: list[tuple[str, str]]) -> Path:
    def record(number: int, role: str, text: str) -> dict[str, object]:
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        return {"type": role, "sessionId": "5b0c1a52-0000-4000-8000-000000000003",
                "uuid": f"u-{number}", "parentUuid": f"u-{number - 1}" if number else None,
                "timestamp": f"2026-01-01T00:00:{number:02d}Z",
                "message": {"role": role, "content": content,
                            **({"id": f"m-{number}"} if role == "assistant" else {})}}
    return _lines(folder / "big.jsonl", [record(number, role, text)
                                         for number, (role, text) in enumerate(turns)])


def codex(folder: Path, turns: list[tuple[str, str]]) -> Path:
    def item(role: str, text: str) -> dict[str, object]:
        kind = "input_text" if role == "user" else "output_text"
        return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item",
                "payload": {"type": "message", "role": role,
                            "content": [{"type": kind, "text": text}]}}
    return _lines(folder / "rollout-2026-01-01T00-00-00-big.jsonl", [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
         "payload": {"id": "big", "cwd": "/tmp"}}, *[item(*turn) for turn in turns]])


def chat_json(folder: Path, turns: list[tuple[str, str]]) -> Path:
    path = folder / "chat.json"
    path.write_text(json.dumps([{"role": role, "content": text} for role, text in turns]))
    return path


MAKERS: dict[str, Callable[[Path, list[tuple[str, str]]], Path]] = {
    "claude-code": claude_code, "codex": codex, "chat-json": chat_json}


def _one_message(text: str) -> list[tuple[str, str]]:
    return [("user", PROMPT), ("assistant", text), ("user", "thanks"), ("assistant", "ok")]


def _scan(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["scan", "--json", "--no-cache", str(path)]) == 0
    return capsys.readouterr().out


def lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift strings past 4 KiB on lines past 16 KiB (a test's file need not be huge)."""
    monkeypatch.setattr(huge_strings, "_ENABLED", [True])
    monkeypatch.setattr(huge_strings, "HUGE_LINE_BYTES", 16 << 10)
    monkeypatch.setattr(huge_strings, "WHOLE_BYTES", 32 << 10)
    monkeypatch.setattr(huge_strings, "LIFT_BYTES", 4 << 10)


def scanned_both_ways(path: Path, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """`scan --json` of `path` with its texts decoded, then with them left in the file under
    the `lowered` thresholds (checking that a text was left there)."""
    monkeypatch.setattr(huge_strings, "_ENABLED", [False])
    monkeypatch.setattr(huge_strings, "enable", lambda on=True: None)  # (scan turns it on)
    decoded = _scan(path, capsys)
    before = len(lifted._TEXTS)
    lowered(monkeypatch)
    left = _scan(path, capsys)
    assert len(lifted._TEXTS) > before, "no text was left in its file"
    return decoded, left


BODY = LINE * 7000  # 420 KB (past a document's 256 KiB window): lifted under the
# lowered thresholds below
CASES: dict[str, list[tuple[str, str]]] = {
    "plain": _one_message(BODY),
    "wide": _one_message("日本語のテキスト 🦊 [/] \x1b[31m red\x07 é \u202e bidi\n" * 7000),
    "blank": [("user", PROMPT), ("assistant", " \n\t " * 110_000), ("user", "thanks"),
              ("assistant", "ok")],
    # An empty reply, then a huge message whose last words are a reaction to it.
    "reaction-at-the-end": [("user", PROMPT), ("assistant", ""),
                            ("user", BODY + "why did you stop? please continue\n"),
                            ("assistant", "ok")],
    "reaction-at-the-start": [("user", PROMPT), ("assistant", ""),
                              ("user", "you stopped, continue\n" + BODY), ("assistant", "ok")],
    # An empty reply, then a huge summary: its headings are counted over all of it.
    "summary": [("user", PROMPT), ("assistant", "short"), ("user", "go"), ("assistant", ""),
                ("assistant", "## Summary\n" + BODY + "## Next steps\n- x\n## Status\nhalf\n"),
                ("user", "thanks")],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(MAKERS))
def test_a_message_left_in_its_file_scans_as_it_does_decoded(
        tmp_path: Path, name: str, case: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huge_strings, "_ENABLED", [False])
    path = MAKERS[name](tmp_path, CASES[case])
    decoded = _scan(path, capsys)  # (texts under the real thresholds: decoded whole)
    before = len(lifted._TEXTS)
    monkeypatch.setattr(huge_strings, "HUGE_LINE_BYTES", 16 << 10)
    monkeypatch.setattr(huge_strings, "WHOLE_BYTES", 32 << 10)
    monkeypatch.setattr(huge_strings, "LIFT_BYTES", 4 << 10)
    assert _scan(path, capsys) == decoded
    # The message was left in the file (a blank one is read as blank: no text to keep).
    assert (len(lifted._TEXTS) > before) == (case != "blank")
