"""Mapping one opencode message (its info plus its parts) to a `Turn`, for all opencode readers.

The export, the storage directory and the SQLite database hold the same two shapes (see
`packages/opencode/src/session/message-v2.ts`); only the way ids and rows are stored differs.
Every field may be missing or of another type in other opencode versions, so nothing here
raises: odd values become None, unreadable parts are skipped and counted with `Session.warn`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import orjson

from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time
from replay.core.session.text import PREVIEW_CHARS, shorten

KEEP_WHOLE = 4_000
"""Texts, tool inputs and outputs longer than this are cut to a preview to save memory."""

ROLES = frozenset({"user", "assistant", "system"})

PartMapper = Callable[[dict[str, Any]], Part]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: object) -> float | None:
    """A finite number, or None (JSON parsers may hand over NaN, infinity or huge integers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _json_text(value: object) -> str | None:
    """Tool input or output as text: strings stay as they are, anything else becomes JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def _duration(time: object) -> float | None:
    """Seconds between `start` and `end` (ms epoch) of a time range, when both are there."""
    span = _dict(time)
    start, end = _number(span.get("start")), _number(span.get("end"))
    if start is None or end is None or end < start:
        return None
    return (end - start) / 1000.0


def _text_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.TEXT, text=_str(raw.get("text")) or "", synthetic=raw.get("synthetic") is True,
                duration=_duration(raw.get("time")))


def _reasoning_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.REASONING, text=_str(raw.get("text")) or "",
                duration=_duration(raw.get("time")))


def _tool_part(raw: dict[str, Any]) -> Part:
    state = _dict(raw.get("state"))
    output = state.get("output")
    if output is None:
        output = state.get("error")
    return Part(
        Kind.TOOL_CALL,
        name=_str(raw.get("tool")) or "tool",
        input=_json_text(state.get("input")),
        output=_json_text(output),
        status=_str(state.get("status")),
        call_id=_str(raw.get("callID")),
        duration=_duration(state.get("time")),
    )


def _file_part(raw: dict[str, Any]) -> Part:
    url = _str(raw.get("url"))
    mime = _str(raw.get("mime"))
    name = _str(raw.get("filename"))
    if name is None and url is not None:
        # An inline data: URL can be megabytes of base64; it is no name to show.
        name = f"(inline {mime or 'data'})" if url.startswith("data:") else url
    return Part(Kind.FILE, name=name, mime=mime,
                input=url if url is not None and not url.startswith("data:") else None)


def _patch_part(raw: dict[str, Any]) -> Part:
    files = raw.get("files")
    names = [name for name in files if isinstance(name, str)] if isinstance(files, list) else []
    return Part(Kind.PATCH, text="\n".join(names), name=_str(raw.get("hash")))


def _step_start_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.STEP, name="start")


def _step_finish_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.STEP, name="finish", text=_str(raw.get("reason")) or "")


def _snapshot_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.SNAPSHOT, text=_str(raw.get("snapshot")) or "")


def _compaction_part(raw: dict[str, Any]) -> Part:
    auto = raw.get("auto")
    name = "auto" if auto is True else "manual" if auto is False else None
    return Part(Kind.COMPACTION, name=name, text="overflow" if raw.get("overflow") is True else "")


def _agent_part(raw: dict[str, Any]) -> Part:
    source = _dict(raw.get("source"))
    return Part(Kind.AGENT, name=_str(raw.get("name")), text=_str(source.get("value")) or "")


def _subtask_part(raw: dict[str, Any]) -> Part:
    return Part(Kind.SUBTASK, name=_str(raw.get("agent")), text=_str(raw.get("prompt")) or "",
                input=_str(raw.get("description")) or _str(raw.get("command")))


def _retry_part(raw: dict[str, Any]) -> Part:
    error = raw.get("error")
    name, message = error_words(error)
    attempt = _number(raw.get("attempt"))
    prefix = f"attempt {attempt:.0f}" if attempt is not None else "retry"
    return Part(Kind.RETRY, name=name, text=f"{prefix}: {message}" if message else prefix)


PART_MAPPERS: dict[str, PartMapper] = {
    "text": _text_part,
    "reasoning": _reasoning_part,
    "tool": _tool_part,
    "file": _file_part,
    "patch": _patch_part,
    "step-start": _step_start_part,
    "step-finish": _step_finish_part,
    "snapshot": _snapshot_part,
    "compaction": _compaction_part,
    "agent": _agent_part,
    "subtask": _subtask_part,
    "retry": _retry_part,
}
"""opencode part type → mapper; a type not listed becomes `Kind.OTHER` named after it."""


def error_words(error: object) -> tuple[str | None, str]:
    """(name, message) of an opencode error object (`{name, data: {message}}`) or string."""
    if isinstance(error, str):
        return error or None, ""
    if not isinstance(error, dict):
        return None, ""
    data = _dict(error.get("data"))
    message = _str(data.get("message")) or _str(error.get("message")) or ""
    return _str(error.get("name")), message


def _shortened(part: Part) -> Part:
    """Cut long text, input and output to previews; `Session.full_parts` reads them back."""
    if len(part.text) > KEEP_WHOLE:
        whole = len(part.text)
        part.text = shorten(part.text, PREVIEW_CHARS)[0] or ""
        part.length = whole
        part.shortened = True
    if part.input is not None and len(part.input) > KEEP_WHOLE:
        part.input = part.input[:PREVIEW_CHARS]
        part.shortened = True
    if part.output is not None and len(part.output) > KEEP_WHOLE:
        part.output = part.output[:PREVIEW_CHARS]
        part.shortened = True
    return part


def part_from_opencode(raw: dict[str, Any]) -> Part:
    """One opencode part as a `Part`; unknown types become `Kind.OTHER` named after the type."""
    kind = raw.get("type")
    mapper = PART_MAPPERS.get(kind) if isinstance(kind, str) else None
    if mapper is None:
        return Part(Kind.OTHER, name=kind if isinstance(kind, str) else None)
    return mapper(raw)


def _tokens(value: object) -> dict[str, int] | None:
    """`{input, output, reasoning, cache: {read, write}}` flattened to `cache_read` and so on."""
    if not isinstance(value, dict):
        return None
    flat: dict[str, int] = {}
    for key, count in value.items():
        if key == "cache" and isinstance(count, dict):
            for sub, sub_count in count.items():
                number = _number(sub_count)
                if number is not None:
                    flat[f"cache_{sub}"] = int(number)
            continue
        number = _number(count)
        if number is not None:
            flat[str(key)] = int(number)
    return flat or None


def _role(info: dict[str, Any], turn_id: str, session: Session | None) -> str:
    role = info.get("role")
    if isinstance(role, str) and role in ROLES:
        return role
    # Only assistant infos carry the model that answered and the message they answer.
    guessed = "assistant" if ("modelID" in info or "parentID" in info) else "user"
    if session is not None:
        session.warn(f"message {turn_id}: role {role!r} not known, read as {guessed}",
                     skipped=False)
    return guessed


def _model(info: dict[str, Any]) -> str | None:
    model_id = _str(info.get("modelID"))
    if model_id is None:
        return None
    provider = _str(info.get("providerID"))
    return f"{provider}/{model_id}" if provider else model_id


def convert_parts(
    raw_parts: object, turn_id: str, session: Session | None = None, *, shorten_long: bool = True
) -> list[Part]:
    """Every readable part of a message, in the order given; bad parts are counted and skipped."""
    if raw_parts is None:
        return []
    if not isinstance(raw_parts, list):
        if session is not None:
            session.warn(f"message {turn_id}: parts is not a list")
        return []
    parts: list[Part] = []
    for position, raw in enumerate(raw_parts):
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            if session is not None:
                session.warn(f"message {turn_id}: part {position} is not an opencode part")
            continue
        part = part_from_opencode(raw)
        parts.append(_shortened(part) if shorten_long else part)
    return parts


def turn_from_message(
    info: dict[str, Any],
    parts: object,
    source: Source,
    session: Session | None = None,
    *,
    fallback_id: str | None = None,
    shorten_long: bool = True,
) -> Turn:
    """One opencode message as a turn: its parts in order, then its error as an ERROR part.

    `parts` is the message's list of part objects (anything else is counted as a problem).
    """
    turn_id = _str(info.get("id")) or fallback_id or source.record or "?"
    time = _dict(info.get("time"))
    timestamp, created = parse_time(time.get("created"))
    completed = parse_time(time.get("completed"))[1]
    agent = _str(info.get("mode")) or _str(info.get("agent"))
    turn = Turn(
        id=turn_id,
        role=_role(info, turn_id, session),
        parts=convert_parts(parts, turn_id, session, shorten_long=shorten_long),
        timestamp=timestamp,
        time=created,
        completed=completed,
        model=_model(info),
        tokens=_tokens(info.get("tokens")),
        agent=agent,
        # User infos carry `summary: {title, diffs}`; only the boolean marks a compaction summary.
        is_summary=info.get("summary") is True,
        source=source,
    )
    error = info.get("error")
    if error is not None and error is not False:
        name, message = error_words(error)
        turn.parts.append(Part(Kind.ERROR, name=name or "error", text=message))
    return turn


def sort_key_created(info: dict[str, Any], fallback_id: str) -> tuple[float, str]:
    """opencode's message order: `time.created`, then id (ids also sort by creation time)."""
    created = _number(_dict(info.get("time")).get("created"))
    return (created if created is not None else float("inf"), _str(info.get("id")) or fallback_id)
