"""Issue 27: telling the format of a file holding one huge message on one line (a ShareGPT
or chat JSON document) holds about one copy of its head, and nothing holds it after.

The head of such a file is its first line, up to `FIRST_LINE_BYTES` (16 MiB; 1 MiB here):
several copies of it were alive at once (the head grown by `+=`, each cut-line parse's copy
and orjson's error keeping the text, the head decoded whole to find lists, the SpecStory
check's decoded lines), and `top_members` kept the last one for the rest of the scan."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from replay.core.readers import base, detect_reader, top_members

WORDS = "word " * 12 + "\n"
WIDE = "日本語のテキスト 🦊 [/] é \u202e bidi\u202c\u200b end.\n"


def _document(path: Path, fmt: str, text: str) -> Path:
    if fmt == "sharegpt":
        turns = [{"from": "human", "value": "please write it all out"},
                 {"from": "gpt", "value": text}, {"from": "human", "value": "thanks"}]
        value: object = [{"id": "big", "conversations": turns}]
    else:
        value = {"id": "big", "messages": [
            {"role": "user", "content": "please write it all out"},
            {"role": "assistant", "content": text}, {"role": "user", "content": "thanks"}]}
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("line", [WORDS, WIDE])
@pytest.mark.parametrize("fmt", ["sharegpt", "chat-json"])
def test_detecting_a_one_line_document_holds_one_copy_of_its_head(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, line: str) -> None:
    head_bytes = 1 << 20
    monkeypatch.setattr(base, "FIRST_LINE_BYTES", head_bytes)
    path = _document(tmp_path / "big.json", fmt, line * (3 * head_bytes // len(line)))
    assert len(base.read_head(path)) == head_bytes  # (the first line cut where it stops)
    detect_reader(_document(tmp_path / "warm.json", fmt, "hi"))  # (its modules imported)
    gc.collect()
    tracemalloc.start()
    try:
        reader = detect_reader(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reader.name == fmt
    assert peak < 1.5 * head_bytes, peak


def test_nothing_holds_the_head_once_the_format_is_told(tmp_path: Path) -> None:
    # An object on a line past `top_members.LONG_LINE`: the Claude Code and Codex sniffers
    # split it into its members (views into the head).
    path = _document(tmp_path / "big.json", "chat-json", WORDS * 20_000)
    assert detect_reader(path).name == "chat-json"
    assert top_members._last is None


@pytest.mark.parametrize("tail", ["", "\\ud83e", "\\ud83e\\", "\\ud83e\\udd8a \\u00e9"])
def test_a_cut_document_is_told_without_decoding_its_head(tail: str) -> None:
    """A head cut inside the huge string, also just after an escaped surrogate pair's
    first half (msgspec's "truncated" there is no lone surrogate Python would read)."""
    from replay.core.readers.chat import head_has_item

    opening = '[{"id": "big", "conversations": [{"from": "human", "value": "hi"}, '
    head = (opening + '{"from": "gpt", "value": "' + "\\u65e5 word " * 100_000 + tail).encode()
    gc.collect()
    tracemalloc.start()
    try:
        found = head_has_item(head, lambda item: isinstance(item, dict) and "from" in item)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found
    assert peak < len(head) / 4, peak
