"""The few fields of a Claude Code JSONL record that replay needs, as typed msgspec structs.

Decoding into these structs skips every other field without building Python objects for it,
which is what makes reading hundreds of MB fast: tool payloads (`toolUseResult`, tool inputs)
are kept as `msgspec.Raw` and only looked at when needed. Records that do not fit (a string
`message`, a non-object block) go through `entry_from_object`, which is lenient.

The structs are made with `gc=False`: the garbage collector does not track them (a decoded
record only points down, at strings, lists and other such structs, and the builder keeps
none of them), which saves their tracking on every line: 0.01 s of decoding the 458 MB
real-shaped file with the collector off, 0.03 s with it on.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

EMPTY_RAW = Raw()
"""The default of absent raw fields: shared, since a `Raw` never changes."""


class ImageSource(Struct, gc=False):
    """The source of an image block; only its media type is kept (the data is skipped)."""

    media_type: str | None = None


class Block(Struct, gc=False):
    """One content block of a message; fields of every block type, all optional."""

    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    """The signature of a thinking block; all there is when the thinking text is withheld."""
    data: str | None = None
    """The encrypted content of a redacted_thinking block."""
    id: str | None = None
    name: str | None = None
    input: Raw = EMPTY_RAW
    tool_use_id: str | None = None
    content: Raw = EMPTY_RAW
    """A tool result's content (a string or a list of blocks), decoded only as far as needed."""
    is_error: bool | None = None
    source: ImageSource | None = None
    title: str | None = None


class Usage(Struct, gc=False):
    """Token counts of an assistant response."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class Message(Struct, gc=False):
    """The `message` of a user or assistant record."""

    id: str | None = None
    role: str | None = None
    model: str | None = None
    content: str | list[Block] | None | UnsetType = UNSET
    usage: Usage | None = None


class Entry(Struct, gc=False):
    """One line of a Claude Code session file: what every line is read for."""

    type: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    isMeta: bool | None = None  # noqa: N815 (the source's spelling)
    isCompactSummary: bool | None = None  # noqa: N815
    message: Message | None = None
    toolUseResult: Raw = EMPTY_RAW  # noqa: N815


class Meta(Struct, gc=False):
    """Facts about the session, read only from the first lines that carry them."""

    sessionId: str | None = None  # noqa: N815
    agentId: str | None = None  # noqa: N815
    version: str | None = None
    cwd: str | None = None
    gitBranch: str | None = None  # noqa: N815


DECODER = msgspec.json.Decoder(Entry)
"""The fast path: decodes a line straight into an `Entry`."""

META_DECODER = msgspec.json.Decoder(Meta)
"""Decodes the session facts of a line (only until they are known)."""

ANY_DECODER = msgspec.json.Decoder()
"""The fallback: decodes a line into plain Python objects."""

_ENTRY_STRINGS = ("type", "uuid", "timestamp")


class Malformed(ValueError):
    """A record of a known shape whose content cannot be read (counted as skipped)."""


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _raw(value: Any) -> Raw:
    return Raw(msgspec.json.encode(value)) if value is not None else EMPTY_RAW


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    counts = {key: value[key] for key in Usage.__struct_fields__
              if isinstance(value.get(key), int) and not isinstance(value.get(key), bool)}
    return Usage(**counts)


def _block(value: Any) -> Block:
    if not isinstance(value, dict):
        raise Malformed(f"a content block is {type(value).__name__}, not an object")
    source = value.get("source")
    return Block(
        type=_string(value.get("type")) or "",
        text=_string(value.get("text")),
        thinking=_string(value.get("thinking")),
        signature=_string(value.get("signature")),
        data=_string(value.get("data")),
        id=_string(value.get("id")),
        name=_string(value.get("name")),
        input=_raw(value.get("input")),
        tool_use_id=_string(value.get("tool_use_id")),
        content=_raw(value.get("content")),
        is_error=value.get("is_error") is True,
        source=ImageSource(_string(source.get("media_type"))) if isinstance(source, dict) else None,
        title=_string(value.get("title")),
    )


def _message(value: Any) -> Message | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise Malformed(f"message is {type(value).__name__}, not an object")
    content: str | list[Block] | None | UnsetType = UNSET
    if "content" in value:
        raw = value["content"]
        if isinstance(raw, list):
            content = [_block(item) for item in raw]
        elif isinstance(raw, str) or raw is None:
            content = raw
        else:
            raise Malformed(f"message content is {type(raw).__name__}")
    return Message(id=_string(value.get("id")), role=_string(value.get("role")),
                   model=_string(value.get("model")), content=content,
                   usage=_usage(value.get("usage")))


def entry_from_object(value: Any) -> Entry:
    """Read a decoded JSON value leniently into an `Entry`.

    Raises:
        Malformed: the value is not an object, or a user/assistant record whose message
            cannot be read.
    """
    if not isinstance(value, dict):
        raise Malformed(f"a JSON {type(value).__name__}, not an object")
    strings = {name: _string(value.get(name)) for name in _ENTRY_STRINGS}
    entry = Entry(**strings, isMeta=value.get("isMeta") is True,
                  isCompactSummary=value.get("isCompactSummary") is True,
                  toolUseResult=_raw(value.get("toolUseResult")))
    if entry.type in ("user", "assistant"):
        entry.message = _message(value.get("message"))
    return entry
