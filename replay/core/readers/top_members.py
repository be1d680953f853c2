"""A long first line's top-level members, their values unparsed: what a sniffer needs to say
"not mine" of a whole JSON document on one line without parsing it.

A head holds the whole first line (`read_head`, up to `FIRST_LINE_BYTES`), so a Gemini CLI
recording written on one line is a head of a megabyte or more. The JSON-lines sniffers that
run before Gemini's (Claude Code, Codex) judge a record by its top-level keys and its
`type`; parsing the whole line into objects to learn that it has no top-level `type` was
most of the cost of listing a Gemini folder. Here the line is split into its top-level
members with each value left as raw bytes (msgspec skips over them without building
anything, about five times faster than parsing), and nothing is copied out of the head.

What this tells is used only to say "no" where the whole parse would say no too; anything
else (a line msgspec cannot read, a `type` that may make it a record) is parsed whole as
before, so detection gives the same answer on every input (`tests/core/test_sniff_long_lines.py`
checks it against the whole parse). The one case where msgspec reads a line the whole parse
rejects (bad UTF-8 or an out-of-range number inside a value: the members are not checked
that deep) is for the caller to weigh: the whole parse's failure has its own verdict.
"""

from __future__ import annotations

import msgspec

LONG_LINE = 64 * 1024
"""Lines longer than this are judged by their members first (a shorter one is parsed whole:
that is cheap, and it is what every sniffer did before)."""

_MEMBERS = msgspec.json.Decoder(dict[str, msgspec.Raw])

_WHITE = b" \t\n\r\x0b\x0c"
"""What `bytes.strip` strips."""

_last: tuple[bytes, int, int, dict[str, msgspec.Raw] | None] | None = None
"""The last line split (head, start, end, members): the sniffers ask in turn of one head.
It holds the head (its members are views into it): `forget` once the head is judged."""

_CUT = "truncated"
"""What msgspec's error says of input that ends inside its value."""


def line_spans(head: bytes, limit: int) -> list[tuple[int, int]]:
    """The pieces `head.split(b"\\n", limit)` gives, each as the (start, end) of the piece
    stripped as `bytes.strip` strips it, without copying a byte."""
    spans: list[tuple[int, int]] = []
    start, size = 0, len(head)
    while True:
        end = head.find(b"\n", start) if len(spans) < limit else -1
        stop = size if end < 0 else end
        first, last = start, stop
        while first < last and head[first] in _WHITE:
            first += 1
        while last > first and head[last - 1] in _WHITE:
            last -= 1
        spans.append((first, last))
        if end < 0:
            return spans
        start = end + 1


def members(head: bytes, start: int, end: int) -> dict[str, msgspec.Raw] | None:
    """The top-level members of the JSON object `head[start:end]`, each value as its raw
    bytes; None when it is not an object msgspec can read (parse it whole to know more).

    An object that stops before its end (the first line of a one-line document, cut where
    the head ends) has no members to tell: `{}`, as no parse would read it either (parsing
    it whole only to fail held copies of it: orjson's error keeps the text it failed on)."""
    global _last
    last = _last
    if last is not None and last[0] is head and last[1] == start and last[2] == end:
        return last[3]
    found: dict[str, msgspec.Raw] | None
    try:
        found = _MEMBERS.decode(memoryview(head)[start:end])
    except msgspec.DecodeError as error:
        found = {} if _CUT in str(error) else None
    except RecursionError:
        found = None
    _last = (head, start, end, found)
    return found


def forget() -> None:
    """Let go of the last line split (and of the head it is part of)."""
    global _last
    _last = None


def member_string(value: msgspec.Raw | None) -> str | None:
    """A member's value when it is a JSON string (decoded as a whole parse decodes it), else
    None."""
    if value is None or bytes(memoryview(value)[:1]) != b'"':
        return None
    try:
        decoded = msgspec.json.decode(value)
    except msgspec.DecodeError:
        return None
    return decoded if isinstance(decoded, str) else None
