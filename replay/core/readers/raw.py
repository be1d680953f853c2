"""The source record(s) behind a turn, read back from disk exactly as the tool wrote them."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers.base import parse_document, read_spans
from replay.core.session.model import Source, Turn

RAW_LIMIT = 200_000
"""Characters of raw record returned at most."""

_INDEX = re.compile(r"^(\w+)\[(\d+)\]$")


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _pointer_parts(record: str) -> list[str] | None:
    """`/messages/3` or `messages[3]` as path steps; None for other locators."""
    match = _INDEX.match(record)
    if match:
        return [match.group(1), match.group(2)]
    if record.startswith("/"):
        return [step.replace("~1", "/").replace("~0", "~") for step in record[1:].split("/")]
    return None


def _resolve(document: Any, steps: list[str]) -> Any:
    value = document
    for step in steps:
        if isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            raise KeyError(step)
    return value


def _from_spans(source: Source, steps: list[str] | None) -> list[str]:
    pieces = []
    for record in read_spans(source.path, source.spans):
        try:
            value = orjson.loads(record)
        except orjson.JSONDecodeError:
            pieces.append(record.decode("utf-8", "replace"))
            continue
        if steps is not None:
            try:
                value = _resolve(value, steps)
            except KeyError:
                pass
        pieces.append(_pretty(value))
    return pieces


def _from_document(source: Source, steps: list[str]) -> list[str]:
    document = parse_document(Path(source.path).read_bytes()).value
    return [_pretty(_resolve(document, steps))]


def _from_database(source: Source, message_id: str) -> list[str]:
    uri = f"file:{Path(source.path).resolve()}?mode=ro"
    with sqlite3.connect(uri, uri=True, timeout=1.0) as connection:
        rows = connection.execute("SELECT data FROM message WHERE id = ?", (message_id,))
        pieces = [_pretty(orjson.loads(data)) for (data,) in rows]
        parts = connection.execute(
            "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,))
        pieces.extend(f"part {part_id}\n{_pretty(orjson.loads(data))}" for part_id, data in parts)
    return pieces


def _from_storage(source: Source, message_file: Path) -> list[str]:
    pieces = [_pretty(orjson.loads(message_file.read_bytes()))]
    storage = message_file.parent.parent.parent
    part_dir = storage / "part" / message_file.stem
    if part_dir.is_dir():
        for part_file in sorted(part_dir.glob("*.json")):
            pieces.append(f"{part_file.name}\n{_pretty(orjson.loads(part_file.read_bytes()))}")
    return pieces


def raw_record_text(turn: Turn) -> str:
    """The turn's source record(s), pretty-printed JSON where they are JSON, with a heading.

    Never raises for a missing or changed file: it says what went wrong instead.
    """
    source = turn.source
    if source is None:
        return "(the reader kept no source for this turn)"
    heading = source.path
    if source.line is not None:
        heading += f", line {source.line}"
    if source.record:
        heading += f", {source.record}"
    record = source.record or ""
    steps = _pointer_parts(record)
    try:
        if source.spans:
            pieces = _from_spans(source, steps)
        elif record.startswith("message:"):
            pieces = _from_database(source, record.removeprefix("message:"))
        elif record.startswith("message/"):
            pieces = _from_storage(source, Path(source.path))
        elif steps is not None:
            pieces = _from_document(source, steps)
        else:
            pieces = ["(this source has no addressable record)"]
    except (OSError, ValueError, KeyError, sqlite3.Error) as error:
        pieces = [f"(could not read the record again: {error})"]
    text = "\n\n".join([heading, *pieces])
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + "\n… cut"
