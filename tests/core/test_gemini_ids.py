"""Gemini's message ids while a recording loads (`readers/gemini_ids.py`): the same turns as
a plain id dict gave, in a few bytes a message (a file of 100-byte messages in the app)."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
import uuid
from pathlib import Path

from replay.core.readers.base import iter_lines
from replay.core.readers.gemini import GeminiBuilder, index_turns
from replay.core.readers.gemini_ids import MessageIds


class DictIds:
    """The id map as a dict and a set (what the builder kept before): the reference."""

    def __init__(self) -> None:
        self.by_id: dict[str, int] = {}
        self.retired: set[str] = set()

    def live(self, key: str) -> int | None:
        return self.by_id.get(key)

    def used(self, key: str) -> bool:
        return key in self.retired

    def add(self, key: str, turn_id: str, index: int) -> None:
        self.by_id[key] = index
        if key != turn_id:
            self.retired.add(turn_id)

    def rewind(self, target: str) -> tuple[bool, int]:
        order = list(self.by_id)
        start = order.index(target) if target in self.by_id else 0
        for key in order[start:]:
            del self.by_id[key]
            self.retired.add(key)
        return target in order, len(order) - start


def test_message_ids_answer_as_a_dict_and_a_set() -> None:
    """Random messages (ids from a small pool, some made up), rewinds to live, dropped and
    unknown ids: every answer equals the dict's, through table growth (thousands of ids)."""
    for seed in range(40):
        chance = random.Random(seed)
        turns: list[str] = []
        compact, reference = MessageIds(turns.__getitem__), DictIds()
        pool = [f"m{n}" for n in range(chance.choice((3, 30, 3000)))] + ["m1@line-7"]
        for line in range(chance.choice((50, 4000))):
            if chance.random() < 0.03:
                target = chance.choice(pool + ["nowhere"])
                assert compact.rewind(target) == reference.rewind(target)
                turns.append(f"rewind-{line}")  # a notice: a turn, no message
                continue
            key = chance.choice(pool) if chance.random() < 0.9 else f"message-{line}"
            assert compact.live(key) == reference.live(key), (seed, line, key)
            assert (key in compact) == (key in reference.by_id)
            if compact.live(key) is None:
                assert compact.used(key) == reference.used(key), (seed, line, key)
                turn_id = f"{key}@line-{line}" if compact.used(key) else key
                turns.append(turn_id)
                compact.add(key, turn_id, len(turns) - 1)
                reference.add(key, turn_id, len(turns) - 1)


def _tiny_messages(path: Path, count: int) -> Path:
    """A recording of `count` messages of about 120 bytes: uuid ids, as Gemini CLI writes."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"sessionId": "g", "projectHash": "h"}) + "\n")
        for number in range(count):
            handle.write(json.dumps({
                "id": str(uuid.UUID(int=number * 2654435761)),
                "timestamp": "2026-03-01T10:00:00.000Z",
                "type": "user" if number % 2 else "gemini", "content": f"m{number}"},
                separators=(",", ":")) + "\n")
    return path


def _held_while_loading(path: Path) -> int:
    """Bytes the app's builder holds with every line fed (before `finish`)."""
    gc.collect()
    tracemalloc.start()
    try:
        builder = GeminiBuilder(str(path))
        index = index_turns(builder)
        with open(path, "rb") as handle:
            for line, offset, lineno in iter_lines(handle):
                builder.feed(line, offset, lineno)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert index[len(index) - 1].parts[0].text.startswith("m")
    return held


def test_loading_many_tiny_messages_holds_columns_not_ids(tmp_path: Path) -> None:
    """While the app loads a recording, what it holds grows by the index's columns and a few
    bytes of id table a message: the dict of id strings grew it by about 225 bytes a
    message of 119 (the app at 4x the file), now under 130 (about 96)."""
    small = _held_while_loading(_tiny_messages(tmp_path / "small.jsonl", 10_000))
    big = _held_while_loading(_tiny_messages(tmp_path / "big.jsonl", 40_000))
    per_message = (big - small) / 30_000
    assert per_message < 130, per_message


def test_rewinds_and_rewrites_through_the_index_keep_their_turns(tmp_path: Path) -> None:
    """A message rewritten long after (its turn columned), a rewind to an early id and that
    id back: the indexed builder makes the turns the whole read makes."""
    records: list[dict[str, object]] = [{"sessionId": "s", "projectHash": "p"}]
    records += [{"id": f"a{n}", "type": "user" if n % 2 else "gemini", "content": f"c{n}"}
                for n in range(300)]
    records.append({"id": "a3", "type": "gemini", "content": "rewritten late"})
    records.append({"$rewindTo": "a200"})
    records.append({"id": "a250", "type": "user", "content": "back after the rewind"})
    records.append({"id": "a3", "type": "gemini", "content": "rewritten again"})
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    made = []
    for indexed in (False, True):
        builder = GeminiBuilder(str(path))
        if indexed:
            index_turns(builder, tail=1, cache=1)
        with open(path, "rb") as handle:
            for line, offset, lineno in iter_lines(handle):
                builder.feed(line, offset, lineno)
        builder.finish()
        turns = builder.session.turns
        made.append([(turns[n].id, [part.text for part in turns[n].parts])
                     for n in range(len(turns))])
    assert made[0] == made[1]
    ids = [turn_id for turn_id, _ in made[0]]
    assert ids[3] == "a3" and made[0][3][1] == ["rewritten again"]
    assert ids[300] == "rewind-303"
    assert made[0][300][1] == ["Rewound to message a200: Gemini CLI discarded 100 messages "
                               "from there on."]
    assert ids[301] == "a250@line-304"
