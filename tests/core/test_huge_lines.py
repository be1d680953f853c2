"""Issue 27: a huge Aider prompt or reply (a run of megabytes of Markdown lines) is left in
its file when the app reads it (`huge_lines`): its turn holds a placeholder, whose text is
exactly the text the reader makes of those lines with lifting off; a file rewritten under it
is refused, never read as other text."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.readers import aider, huge_strings
from replay.core.session import lifted
from replay.core.session.model import Session

PIECES = ["word ", "a", "é", "日本語", "🦊", "\x1b[2J", "\x07", "\x00", "\t", "  ", "\r",
          "\r\n", "\n", "\n\n", "\n   \n", "\n\x1c\n", "[/]", "[link=x]", "\ue000", "\ue002",
          "\\", '"', "\u2028", "\x85"]
"""What a reply's lines may hold: every line end aider's reader knows (LF, CRLF, a lone
CR), lines of white space (Unicode's too), controls, markup-looking text, the placeholder's
own marks."""
BAD = [b"\xff", b"\xe6\x97", b"\xf0\x9f"]
"""Bytes that are not UTF-8 (read with replacement)."""

texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=300).map("".join)


@contextmanager
def lifting(chars: int = 30, piece: int = 16) -> Iterator[None]:
    """Lifting on (as in the app), a block left in its file past `chars` characters, marked
    every `piece` bytes (a mark at nearly every line)."""
    from replay.core.readers import huge_lines

    huge_strings.enable()
    try:
        with mock.patch.multiple(huge_lines, LIFT_CHARS=chars, PIECE_BYTES=piece,
                                 HEAD_CHARS=7):
            yield
    finally:
        huge_strings.enable(False)


def _history(path: Path, reply: bytes, prompt: bytes = b"fix it") -> Path:
    prompt_lines = b"\n".join(b"#### " + line for line in prompt.split(b"\n"))
    path.write_bytes(b"# aider chat started at 2024-05-01 10:20:30\n\n> Aider v0.50.1\n\n"
                     + prompt_lines + b"\n\n" + reply
                     + b"\n\n> Tokens: 1k sent, 2 received.\n\n#### thanks\n\nok\n")
    return path


def _sessions(path: Path) -> list[Session]:
    return aider._read_indexed(path)


def _texts(sessions: list[Session]) -> list[list[tuple[str, str, str | None]]]:
    """Every turn's (role, whole text of each part, note), placeholders decoded."""
    return [[(turn.role, "\x00".join(lifted.materialise(part.text) for part in turn.parts),
              turn.note) for turn in session.turns] for session in sessions]


def _held(sessions: list[Session]) -> list[str]:
    return [part.text for session in sessions for turn in session.turns
            for part in turn.parts if lifted.source(part.text) is not None]


@settings(max_examples=120, deadline=None)
@given(reply=texts, prompt=texts, bad=st.lists(st.sampled_from(BAD), max_size=3),
       chars=st.sampled_from([1, 30, 200]))
def test_a_lifted_block_stands_for_exactly_its_text(
        tmp_path_factory: object, reply: str, prompt: str, bad: list[bytes],
        chars: int) -> None:
    folder = tmp_path_factory.mktemp("lines")  # type: ignore[attr-defined]
    data = ("reply: " + reply).encode("utf-8") + b"".join(bad)
    path = _history(folder / ".aider.chat.history.md", data,
                    ("ask " + prompt.replace("\r", "")).encode("utf-8"))
    whole = _texts(_sessions(path))
    with lifting(chars):
        read = _sessions(path)
        assert _texts(read) == whole
        held = _held(read)
        # A reply of lines over `chars` is left in the file: its turn holds a placeholder.
        [reply_text] = [text for role, text, _ in whole[0] if text.startswith("reply: ")]
        if "\n" in reply_text and len(reply_text) > chars:
            assert lifted.source(read[0].turns[2].parts[0].text) is not None
        for text in held:
            rope = lifted.source(text)
            assert rope is not None
            full = rope.read()
            assert len(rope) == len(full) and rope.lines == full.count("\n")
            for _ in range(20):  # any run of it, decoded alone
                start = random.randrange(len(full) + 1)
                end = random.randrange(start, len(full) + 2)
                assert rope.read(start, end) == full[start:end]
            assert lifted.visible(text) == full[:7].partition(lifted.END)[0]  # its head
    # Read with lifting off again (the CLI), nothing is held.
    assert not _held(_sessions(path)) and _texts(_sessions(path)) == whole


def test_a_short_block_and_a_blank_prompt_are_kept_as_text(tmp_path: Path) -> None:
    path = _history(tmp_path / ".aider.chat.history.md", b"short", b"\n".join([b""] * 50))
    with lifting(chars=1000):
        sessions = _sessions(path)
        assert not _held(sessions)
    prompt = sessions[0].turns[1]
    assert prompt.role == "user" and prompt.note == "not sent to the model"


def test_a_reply_whose_file_was_rewritten_is_not_read_wrongly(tmp_path: Path) -> None:
    reply = "".join(f"the first version of line {n}\n" for n in range(20_000)).rstrip()
    path = _history(tmp_path / ".aider.chat.history.md", reply.encode())
    with lifting(chars=1000, piece=1 << 12):
        [held] = _held(_sessions(path))
    rope = lifted.source(held)
    assert rope is not None
    assert rope.read(0, 9) == "the first"
    # Aider appends: the reply is where it was.
    with open(path, "ab") as handle:
        handle.write(b"\n#### more\n\nyes\n")
    assert rope.read(len(reply) - 9, len(reply)) == reply[-9:]
    # Rewritten in place, same size, other words: refused, not shown as the reply.
    data = path.read_bytes().replace(b"first", b"other")
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(1, 1))
    try:
        got = rope.read(len(reply) // 2, len(reply) // 2 + 40)
    except lifted.TextMoved as error:
        assert "rewritten" in str(error)
    else:
        raise AssertionError(f"read from a rewritten file: {got!r}")
    # Cut shorter than the reply.
    with open(path, "r+b") as handle:
        handle.truncate(len(data) // 2)
    try:
        rope.read(0, 9)  # (not the run decoded last: that is served as it was read)
    except lifted.TextMoved:
        pass
    else:
        raise AssertionError("read past the end of a cut file")
