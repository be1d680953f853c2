"""Issue 27: a line of megabytes is read without holding it; its huge strings stay in the
file (`huge_strings.lift_line`), decoded a piece at a time, and stand for exactly the text
the whole line decoded gives."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from replay.core.readers import huge_strings
from replay.core.readers.base import iter_lines, read_spans
from replay.core.session import lifted

PIECES = ["a", "word ", "\n", "\t", '"', "\\", "/", "\x1b[2J", "\x07", "\x00", "\x7f", "é",
          "日本語", "🦊", "\u202e", "\u200b", "\ud800", "\udcff", "[/]", "\ue000", "\ue002"]
"""What a message may hold, escaped by JSON (quotes, backslashes, controls, surrogate pairs,
lone surrogates) or written raw as UTF-8 (CJK, emoji), and the placeholder's own marks."""

texts = st.lists(st.sampled_from(PIECES), max_size=400).map("".join)


@contextmanager
def small_thresholds() -> Iterator[None]:
    """Lift strings over 40 bytes, decoded 16 bytes at a time (a piece boundary falls in
    every escape, character and surrogate pair somewhere), reading 64 bytes at a time."""
    with mock.patch.multiple(huge_strings, LIFT_BYTES=40, PIECE_BYTES=16, _READ=64,
                             HUGE_LINE_BYTES=0, WHOLE_BYTES=0, HEAD_CHARS=5):
        yield


def _write(path: Path, records: list[object], ascii_only: bool) -> list[bytes]:
    lines = [json.dumps(record, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
             for record in records]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return lines


def _whole(value: object) -> object:
    """The value with every placeholder decoded."""
    if isinstance(value, str):
        return lifted.materialise(value) if lifted.holds(value) else value
    if isinstance(value, list):
        return [_whole(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    return value


def _loads(line: bytes) -> object:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)  # a lone surrogate


@settings(max_examples=200, deadline=None)
@given(text=texts, other=texts, ascii_only=st.booleans())
# A lone high and a lone low surrogate side by side, raw in the line (found by hypothesis).
@example(text="a\n\x07\ud800\udcffaaaword \x1b[2J\x1b[2J", other="", ascii_only=False)
def test_a_lifted_line_stands_for_exactly_the_line(tmp_path_factory: pytest.TempPathFactory,
                                                   text: str, other: str,
                                                   ascii_only: bool) -> None:
    path = tmp_path_factory.mktemp("lift") / "s.jsonl"
    record = {"type": "assistant", "message": {"content": [
        {"type": "text", "text": text}, {"type": "tool_result", "content": other},
        {"short": "x", "n": 1}]}}
    line, = _write(path, [record], ascii_only)
    with small_thresholds(), open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), 0)
    assert found is not None
    skeleton, end, ended = found
    assert end == len(line) and ended
    assert _whole(_loads(skeleton)) == _loads(line)
    # A long string is a placeholder whose head is the text's start and whose rope reads
    # every run of it as the text has it; a blank one is as blank as it was.
    held = _loads(skeleton)["message"]["content"][0]["text"]  # type: ignore[index]
    rope = lifted.source(held)
    long = len(json.dumps(text, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")) > 42
    assert (rope is not None) == (long and not (text.isspace())), (held, text)
    text = _loads(line)["message"]["content"][0]["text"]  # type: ignore[index]
    if rope is not None:  # (a lone high and a lone low surrogate escaped read as one pair)
        assert len(rope) == len(text)
        assert rope.lines == text.count("\n")
        for start, stop in ((0, 5), (3, 40), (len(text) - 7, len(text)), (10, 11)):
            assert rope.read(start, stop) == text[max(0, start):stop]
        assert lifted.visible(held) == text[:len(lifted.visible(held))]


def test_lines_read_with_lifting_are_those_read_without_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    big = "日本語 🦊 \x1b[31m [/]\n" * 3000  # past the first read: lines not yet ended
    lines = _write(path, [{"n": 0}, {"text": big, "n": 1}, {"n": 2}, {"text": big}], True)
    with open(path, "rb") as handle:
        plain = list(iter_lines(handle))
    for views in (False, True):
        with small_thresholds(), open(path, "rb") as handle:
            read = [(bytes(line), offset, number)
                    for line, offset, number in iter_lines(handle, views=views, lift=True)]
        assert [(offset, number) for _, offset, number in read] == \
            [(offset, number) for _, offset, number in plain]
        assert [_whole(_loads(line)) for line, _, _ in read] == [_loads(line) for line in lines]
        assert len(read[1][0]) < len(lines[1])
        # The turn's record read back is the same skeleton, without reading the line again.
        assert read_spans(str(path), ((read[1][1], len(read[1][0])),)) == [read[1][0]]


def test_an_unfinished_huge_line_is_held_back_as_any_unfinished_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"n": 0}\n{"text": "' + b"x" * 500 + b'", "n"')
    with small_thresholds(), open(path, "rb") as handle:
        read = list(iter_lines(handle, final=False, lift=True))
    assert [line for line, _, _ in read] == [b'{"n": 0}']


def test_a_line_that_is_not_json_strings_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    bad = b'{"text": "' + b"x" * 300 + b'\\q' + b"y" * 300 + b'"}'  # a bad escape
    path.write_bytes(bad + b"\n{}\n")
    with small_thresholds(), open(path, "rb") as handle:
        assert [bytes(line) for line, _, _ in iter_lines(handle, lift=True)] == [bad, b"{}"]


def _lifted_text(path: Path, text: str) -> lifted.Rope:
    _write(path, [{"text": text}], True)
    with small_thresholds(), open(path, "rb") as handle:
        found = huge_strings.lift_line(handle.fileno(), str(path), 0)
    assert found is not None
    rope = lifted.source(_loads(found[0])["text"])  # type: ignore[index]
    assert rope is not None
    return rope


def test_a_text_whose_file_was_rewritten_is_not_read_wrongly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = "the first version of the message\n" * 12000  # more than a run kept decoded
    rope = _lifted_text(path, text)
    assert rope.read(0, 9) == "the first"
    # The session goes on (appended): the text is where it was.
    with open(path, "ab") as handle:
        handle.write(b'{"n": 2}\n')
    assert rope.read(0, 9) == "the first"
    # Rewritten in place, same size, other words: refused, not shown as the message.
    data = path.read_bytes().replace(b"first", b"other")
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(1, 1))
    # The run already decoded is the text as it was read; anything read from the file now
    # is refused.
    with pytest.raises(lifted.TextMoved):
        rope.read(len(text) - 9, len(text))
    # Replaced by another file.
    rope = _lifted_text(path, text)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(io.BytesIO(path.read_bytes()).read())
    os.replace(replacement, path)
    with pytest.raises(lifted.TextMoved):
        rope.read(len(text) - 9, len(text))
    assert lifted.materialise("no placeholder") == "no placeholder"


def test_a_token_spelt_by_a_transcript_means_nothing() -> None:
    spoof = "\ue000" + "0" * 16 + "1\ue001head\ue002 and \ue002 stay"
    assert lifted.source(spoof) is None
    assert lifted.visible("a \ue002 b \ue000c") == "a \ue002 b \ue000c"


@settings(max_examples=100, deadline=None)
@given(text=texts, indent=st.sampled_from([None, 1, 2]))
def test_a_lifted_element_of_a_document_stands_for_exactly_the_element(
        tmp_path_factory: pytest.TempPathFactory, text: str, indent: int | None) -> None:
    from replay.core.readers.json_stream import stream_document

    path = tmp_path_factory.mktemp("doc") / "d.json"
    document = {"id": "d", "messages": [{"role": "user", "content": "hi"},
                                        {"role": "assistant", "content": text}]}
    path.write_bytes(json.dumps(document, indent=indent).encode("utf-8", "surrogatepass"))
    try:
        value, _, _ = stream_document(path)
    except ValueError:
        return  # (a lone surrogate: not streamed)
    messages = value["messages"]
    expected = [_loads(path.read_bytes())["messages"][i] for i in range(2)]  # type: ignore[index]
    huge_strings.enable()
    try:
        with small_thresholds():
            assert [_whole(message) for message in messages] == expected
            assert [_whole(message) for message in messages[0:2]] == expected
            assert _whole(messages[1]) == expected[1]
            held = messages[1]["content"]
            long = len(json.dumps(text).encode()) > 42 and not text.isspace()
            assert (lifted.source(held) is not None) == long, (held, text)
    finally:
        huge_strings.enable(False)
