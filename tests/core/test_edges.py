"""One rule for the edges of every format (README, "Edges"): a byte-order mark, LF, CRLF and
CR line ends read the same; text lines around a whole JSON document are skipped with a
warning naming them; an empty file and a cut-off document are a session with no turns and
a warning; detection sees past a first message larger than the head."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replay.core.readers import load_sessions
from replay.core.readers.base import HEAD_BYTES
from tests.conftest import SAMPLES


def _pretty(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


def _lines(*values: object) -> bytes:
    return b"".join(orjson.dumps(value) + b"\n" for value in values)


GEMINI = {"sessionId": "g-1", "projectHash": "p", "startTime": "2025-01-01T10:00:00Z",
          "messages": [{"id": "a", "type": "user", "content": "hi",
                        "timestamp": "2025-01-01T10:00:00Z"},
                       {"id": "b", "type": "gemini", "content": "",
                        "timestamp": "2025-01-01T10:00:05Z"}]}

FILES: dict[str, tuple[str, bytes]] = {
    "claude-code": ("s.jsonl", (SAMPLES / "refactor.claude-code.jsonl").read_bytes()),
    "codex": ("rollout.jsonl", (SAMPLES / "flaky-test.codex.jsonl").read_bytes()),
    "opencode": ("export.json", (SAMPLES / "deploy-pivot.opencode.json").read_bytes()),
    "chat-json": ("chat.json", (SAMPLES / "support-bot.chat.json").read_bytes()),
    "gemini": ("session.json", _pretty(GEMINI)),
    "gemini-jsonl": ("session.jsonl", _lines({"sessionId": "g-1", "projectHash": "p"},
                                            *GEMINI["messages"])),  # type: ignore[arg-type]
    "sharegpt": ("share.json", _pretty({"id": "c1", "conversations": [
        {"from": "human", "value": "hi"}, {"from": "gpt", "value": ""}]})),
    "chat-jsonl": ("chat.jsonl", _lines({"role": "user", "content": "hi"},
                                        {"role": "assistant", "content": ""})),
    "mini-swe-agent": ("run.traj.json",
                       (SAMPLES / "paginate-fix.mini-swe-agent.traj.json").read_bytes()),
    "swe-agent": ("run.traj", (SAMPLES / "cache-expiry.swe-agent.traj").read_bytes()),
    "opencode-run": ("run.jsonl", (SAMPLES / "dry-run-flag.opencode-run.jsonl").read_bytes()),
    "aider": ("history.md", b"# aider chat started at 2024-05-01 10:20:30\n\n#### hi\n\n"
                            b"hello there\n\n#### go on\n\n"),
}
"""A small real-shaped file of every format (name → file name, content)."""

DOCUMENTS = ["opencode", "chat-json", "gemini", "sharegpt", "mini-swe-agent", "swe-agent"]
"""The formats that are one JSON document per file."""


def _format(name: str) -> str:
    return name.removesuffix("-jsonl") if name == "gemini-jsonl" else name


def _shape(path: Path) -> list[tuple[str | None, int, list[tuple[str, str, int]]]]:
    return [(s.session_id, s.skipped, [(t.id, t.role, len(t.parts)) for t in s.turns])
            for s in load_sessions(path)]


def _write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / FILES[name][0]
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("variant", ["bom", "crlf", "cr", "bom+crlf"])
def test_bom_and_line_ends_read_like_the_plain_file(tmp_path: Path, name: str,
                                                    variant: str) -> None:
    content = FILES[name][1]
    plain = _shape(_write(tmp_path, name, content))
    assert plain and plain[0][2], "the plain file has turns"
    if "crlf" in variant:
        content = content.replace(b"\n", b"\r\n")
    elif variant == "cr":
        content = content.replace(b"\n", b"\r")
    if "bom" in variant:
        content = b"\xef\xbb\xbf" + content
    path = _write(tmp_path, name, content)
    assert [s.format for s in load_sessions(path)] == [_format(name)] * len(plain)
    assert _shape(path) == plain


@pytest.mark.parametrize("name", DOCUMENTS)
@pytest.mark.parametrize(("before", "after"), [(1, 0), (0, 1), (5, 5), (3, 2), (2, 0)])
def test_text_lines_around_a_document_are_skipped_with_a_warning(
        tmp_path: Path, name: str, before: int, after: int) -> None:
    content = FILES[name][1]
    plain = _shape(_write(tmp_path, name, content))
    leading = b"".join(b"Exporting session: ses_%d\n" % n for n in range(before))
    trailing = b"".join(b"user@host:~$ done %d\n" % n for n in range(after))
    path = _write(tmp_path, name, leading + content + trailing)
    sessions = load_sessions(path)
    assert sessions[0].format == _format(name)
    assert _shape(path) == plain
    warnings = sessions[0].warnings
    if before:
        assert any(w.startswith(f"skipped {before} line") and "before the JSON document" in w
                   and "Exporting session: ses_0" in w for w in warnings), warnings
    if after:
        assert any(w.startswith(f"skipped {after} line") and "after the JSON document" in w
                   and "done 0" in w for w in warnings), warnings


@pytest.mark.parametrize("name", DOCUMENTS)
def test_six_lines_of_text_are_not_a_document_any_more(tmp_path: Path, name: str) -> None:
    leading = b"".join(b"line %d\n" % n for n in range(6))
    path = _write(tmp_path, name, leading + FILES[name][1])
    with pytest.raises(Exception) as caught:  # noqa: PT011 - any ReaderError subclass
        load_sessions(path)
    assert "not recognised" in str(caught.value)


def test_a_document_in_a_folder_with_a_status_line_is_listed(tmp_path: Path) -> None:
    (tmp_path / "export.json").write_bytes(b"Exporting session: ses_1\n" + FILES["opencode"][1])
    (tmp_path / "chat.json").write_bytes(FILES["chat-json"][1])
    sessions = load_sessions(tmp_path)
    assert sorted(s.format for s in sessions) == ["chat-json", "opencode"]


@pytest.mark.parametrize("name", list(FILES))
def test_an_empty_file_is_a_session_with_no_turns_and_a_warning(tmp_path: Path,
                                                                 name: str) -> None:
    for content in (b"", b"\n\n", b"\xef\xbb\xbf"):
        path = _write(tmp_path, name, content)
        (session,) = load_sessions(path, format=_format(name))
        assert (session.turns, session.warnings) == ([], ["the file is empty: 0 turns read"])
        (detected,) = load_sessions(path)
        assert (detected.turns, detected.warnings) == ([], ["the file is empty: 0 turns read"])


@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_cut_off_document_is_a_session_with_no_turns_and_a_warning(tmp_path: Path,
                                                                     name: str) -> None:
    content = FILES[name][1]
    path = _write(tmp_path, name, content[: len(content) * 2 // 3])
    for sessions in (load_sessions(path), load_sessions(path, format=_format(name))):
        (session,) = sessions
        assert (session.format, session.turns, session.skipped) == (_format(name), [], 1)
        assert session.warnings[-1].startswith("the JSON document is cut off at byte")


@pytest.mark.parametrize("name", ["chat-jsonl", "claude-code", "codex"])
def test_a_first_message_larger_than_the_head_is_still_recognised(tmp_path: Path,
                                                                  name: str) -> None:
    big = "x" * (3 * HEAD_BYTES)
    if name == "chat-jsonl":
        content = _lines({"role": "user", "content": big}, {"role": "assistant", "content": "ok"})
    else:
        lines = FILES[name][1].splitlines(keepends=True)
        first = orjson.loads(lines[0])
        first["padding"] = big
        content = orjson.dumps(first) + b"\n" + b"".join(lines[1:])
    path = _write(tmp_path, name, content)
    assert [s.format for s in load_sessions(path)] == [name]


@pytest.mark.parametrize("indent", [False, True])
@pytest.mark.parametrize(("name", "document"), [
    ("chat-json", lambda big: {"messages": [{"role": "user", "content": big},
                                            {"role": "assistant", "content": "ok"}]}),
    ("sharegpt", lambda big: {"conversations": [{"from": "human", "value": big},
                                                {"from": "gpt", "value": "ok"}]}),
])
def test_a_document_whose_first_message_is_larger_than_the_head_is_recognised(
        tmp_path: Path, name: str, document: object, indent: bool) -> None:
    value = document("x" * (3 * HEAD_BYTES))  # type: ignore[operator]
    path = tmp_path / "big.json"
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0))
    (session,) = load_sessions(path)
    assert (session.format, len(session.turns)) == (name, 2)
