"""Streamed JSON documents: the same values as a whole parse, one element at a time."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.readers import file_window
from replay.core.readers.file_window import FileChanged, WindowFile
from replay.core.readers.json_stream import Elements, NotStreamable, read_span, stream_document
from tests.conftest import REALDATA, SAMPLES


def _whole(value: Any) -> Any:
    """A streamed value with its `Elements` made lists (to compare with a whole parse)."""
    if isinstance(value, Elements):
        return [_whole(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    return value


def _documents() -> list[Path]:
    found = [p for p in sorted(REALDATA.rglob("*.json")) if p.is_file()]
    return found + [p for p in sorted(SAMPLES.iterdir())
                    if p.suffix in (".json", ".traj")]


@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.name[-40:])
def test_a_real_document_streams_to_what_a_whole_parse_gives(path: Path) -> None:
    value, start, end = stream_document(path)
    assert _whole(value) == orjson.loads(path.read_bytes())
    assert end == path.stat().st_size
    arrays = [item for item in (value.values() if isinstance(value, dict) else [value])
              if isinstance(item, Elements)]
    for elements in arrays:
        for index in range(len(elements)):
            assert read_span(path, *elements.span(index)) == elements[index]


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
              st.floats(allow_nan=False, allow_infinity=False), st.text()),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=5), children, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.dictionaries(st.text(max_size=8), json_values, max_size=5),
                       st.lists(json_values, max_size=5)),
       indent=st.sampled_from([None, 1, 2]), cut=st.integers(0, 400))
def test_any_document_streams_exactly_or_is_refused(
        tmp_path_factory: pytest.TempPathFactory, value: Any, indent: int | None,
        cut: int) -> None:
    folder = tmp_path_factory.mktemp("doc")
    data = json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8",
                                                                       "surrogatepass")
    for body in (data, data[:cut]):
        path = folder / "d.json"
        path.write_bytes(body)
        try:
            expected = orjson.loads(body)
        except orjson.JSONDecodeError:
            expected = NotStreamable
        try:
            streamed = _whole(stream_document(path)[0])
        except NotStreamable:
            streamed = NotStreamable
        if isinstance(expected, (dict, list)):
            assert streamed == expected
        else:
            assert streamed is NotStreamable


@pytest.mark.parametrize("body", [b"", b"   ", b'{"a": [1, 2', b'{"a": 1} trailing',
                                  b'{"a": [1, }', b'"just a string"', b"[1] [2]",
                                  b'{"a" 1}', b'{"a": [1 2]}', b"\xef\xbb\xbf"])
def test_what_is_not_one_clean_document_is_refused(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(body)
    with pytest.raises(NotStreamable):
        stream_document(path)


def test_a_bom_and_white_space_around_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'\xef\xbb\xbf\n  {"messages": [ {"a": "]}[{\\"x"} , 2 ], "n": 3}\n\n')
    value, start, _ = stream_document(path)
    assert start == 6 and value["n"] == 3 and list(value["messages"]) == [{"a": ']}[{"x'}, 2]


# ------------------------------------------------- read a window at a time, never mapped

@contextlib.contextmanager
def _window(size: int) -> Iterator[None]:
    """Windows of `size` bytes (so that values, strings and escapes fall across them)."""
    saved = file_window.WINDOW_BYTES
    file_window.WINDOW_BYTES = size
    try:
        yield
    finally:
        file_window.WINDOW_BYTES = saved


@pytest.mark.parametrize("size", [5, 4096])
@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.name[-40:])
def test_a_real_document_streams_the_same_through_tiny_windows(path: Path, size: int) -> None:
    if size < 100 and path.stat().st_size > 2_000_000:
        pytest.skip("a few bytes at a time: too slow for a big file")
    with _window(size):
        value, _, _ = stream_document(path)
        assert _whole(value) == orjson.loads(path.read_bytes())
        for elements in (value.values() if isinstance(value, dict) else [value]):
            if isinstance(elements, Elements):
                assert [orjson.loads(bytes(record)) for record, _, _ in elements.records()] \
                    == list(elements)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.dictionaries(st.text(max_size=8), json_values, max_size=5),
                       st.lists(json_values, max_size=5)),
       indent=st.sampled_from([None, 1, 2]), cut=st.integers(0, 400),
       size=st.integers(2, 40))
def test_any_document_streams_exactly_through_any_window(
        tmp_path_factory: pytest.TempPathFactory, value: Any, indent: int | None,
        cut: int, size: int) -> None:
    """Strings, escapes (`\\"`, a backslash last in a window), numbers and brackets cut
    by a window's end, documents cut off."""
    folder = tmp_path_factory.mktemp("doc")
    data = json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8",
                                                                       "surrogatepass")
    for body in (data, data[:cut]):
        path = folder / "d.json"
        path.write_bytes(body)
        try:
            expected = orjson.loads(body)
        except orjson.JSONDecodeError:
            expected = NotStreamable
        with _window(size):
            try:
                value, _, _ = stream_document(path)
                streamed = _whole(value)
            except NotStreamable:
                streamed = NotStreamable
        if isinstance(expected, (dict, list)):
            assert streamed == expected
        else:
            assert streamed is NotStreamable


def _long_document(path: Path) -> Path:
    rows = [{"role": "user", "content": f"message {n} \\\" " + "x" * 50} for n in range(400)]
    path.write_text(json.dumps({"messages": rows}, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize("read", ["records", "iterate", "index"])
def test_a_document_cut_shorter_after_its_scan_is_file_changed_not_a_crash(
        tmp_path: Path, read: str) -> None:
    path = _long_document(tmp_path / "d.json")
    size = path.stat().st_size
    with _window(1024):
        value, _, _ = stream_document(path)
        messages = value["messages"]
        os.truncate(path, 1000)
        with pytest.raises(FileChanged) as caught:
            if read == "records":
                [bytes(record) for record, _, _ in messages.records()]
            elif read == "iterate":
                list(messages)
            else:
                messages[len(messages) - 1]
    assert str(caught.value) == (f"file changed while it was read: {size:,} bytes expected, "
                                 "1,000 found")
    assert isinstance(caught.value, OSError)


def test_a_document_cut_while_its_structure_is_scanned_is_file_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _long_document(tmp_path / "d.json")
    size = path.stat().st_size
    real = WindowFile.read

    def read(self: WindowFile, offset: int, length: int) -> bytes:
        data = real(self, offset, length)
        if offset == 0:
            os.truncate(path, 1000)  # once the first window is read
        return data

    monkeypatch.setattr(WindowFile, "read", read)
    with _window(4096), pytest.raises(FileChanged, match=f"{size:,} bytes expected, 1,000 found"):
        stream_document(path)


def test_a_record_rewritten_in_place_is_file_changed(tmp_path: Path) -> None:
    path = _long_document(tmp_path / "d.json")
    value, _, _ = stream_document(path)
    messages = value["messages"]
    offset, length = messages.span(7)
    with open(path, "r+b") as handle:  # the same size, other bytes
        handle.seek(offset)
        handle.write(b"!" * length)
    with pytest.raises(FileChanged, match=f"the record at byte {offset:,} is no longer"):
        messages[7]
    assert messages[6]["content"].startswith("message 6")


def test_a_document_that_grows_while_read_is_read_as_it_was(tmp_path: Path) -> None:
    path = _long_document(tmp_path / "d.json")
    expected = orjson.loads(path.read_bytes())["messages"]
    with _window(1024):
        value, _, end = stream_document(path)
        with open(path, "ab") as handle:
            handle.write(b"\n" * 100_000)
        assert list(value["messages"]) == expected
        assert [orjson.loads(bytes(r)) for r, _, _ in value["messages"].records()] == expected
    assert end < path.stat().st_size


def test_a_window_file_reads_at_most_its_size_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    with WindowFile(path) as file:
        assert file.read(8, 100) == b"89" and file.read(20, 5) == b""
        assert [window for _, window in file.windows(size=4)] == [b"0123", b"4567", b"89"]
        with open(path, "ab") as handle:
            handle.write(b"more")
        assert file.read(0, 100) == b"0123456789" and file.same_file()
        os.truncate(path, 3)
        assert not file.same_file()
        with pytest.raises(FileChanged, match="10 bytes expected, 3 found"):
            file.read(0, 10)
    replaced = tmp_path / "g"
    replaced.write_bytes(b"0123456789")
    with WindowFile(path) as file:
        os.replace(replaced, path)
        assert not file.same_file()
        assert file.read(0, 3) == b"012"  # still the file that was opened


def test_read_span_of_a_file_cut_shorter_is_file_changed(tmp_path: Path) -> None:
    path = _long_document(tmp_path / "d.json")
    value, _, _ = stream_document(path)
    span = value["messages"].span(300)
    os.truncate(path, 1000)
    with pytest.raises(FileChanged, match="bytes expected, 1,000 found"):
        read_span(path, *span)


def test_records_of_a_document_rewritten_shifted_in_place_are_file_changed(
        tmp_path: Path) -> None:
    """Rewritten in place (not cut), a few bytes on: the records' spans fall mid-record."""
    path = _long_document(tmp_path / "d.json")
    data = path.read_bytes()
    with _window(1024):
        value, _, _ = stream_document(path)
        path.write_bytes(b"  " + data)
        with pytest.raises(FileChanged, match="the record at byte .* is no longer the one read"):
            [bytes(record) for record, _, _ in value["messages"].records()]
