"""Streamed JSON documents: the same values as a whole parse, one element at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
