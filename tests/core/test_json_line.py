"""`json_line` on text above ASCII: the bytes are looked through for the characters it
escapes (a big report is not decoded to text for nothing), with the same result."""

from __future__ import annotations

import re

import orjson

from replay.core.safe import _JSON_UNSAFE, json_line


def _by_text(value: object) -> bytes:
    text = orjson.dumps(value).decode()
    return re.sub(_JSON_UNSAFE, lambda m: f"\\u{ord(m.group(0)):04x}", text).encode() + b"\n"


def test_every_escaped_character_is_still_escaped() -> None:
    unsafe = [chr(code) for code in range(0x7F, 0x10000)
              if not 0xD800 <= code < 0xE000 and _JSON_UNSAFE.match(chr(code))]
    assert len(unsafe) > 60
    for char in unsafe:
        value = {"t": f"é {char} …"}
        assert json_line(value) == _by_text(value)
        assert orjson.loads(json_line(value)) == value
        assert char.encode() not in json_line(value)


def test_text_without_them_is_written_as_orjson_writes_it() -> None:
    value = {"t": "日本 é … ok \U0001f600", "n": [1, 2.5, None]}
    assert json_line(value) == orjson.dumps(value) + b"\n" == _by_text(value)
