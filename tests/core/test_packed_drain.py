"""`PackedList.drain` reads the batch still open as it is: compressing it only to decompress
it at once cost two zlib calls per drain, and a history of many short chats drains once per
chat (24,085 calls on a 25 MB Aider history)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import pytest

from replay.core.detection import packed as packed_module
from replay.core.detection.packed import BATCH, PackedList
from replay.core.suggest.signals import Repeat


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"compress": 0, "decompress": 0}

    def counted(name: str) -> Callable[..., Any]:
        real = getattr(zlib, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    for name in calls:
        monkeypatch.setattr(packed_module.zlib, name, counted(name))
    return calls


def _filled(count: int) -> PackedList:
    packed = PackedList()
    for number in range(count):
        packed.append((number, f"m{number}", ("text is blank",)), Repeat(number, 0, 1.0))
    return packed


def _expected(count: int) -> list[tuple[Any, ...]]:
    return [((number, f"m{number}", ("text is blank",)), Repeat(number, 0, 1.0))
            for number in range(count)]


def test_a_short_list_drains_without_zlib(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    packed = _filled(3)
    assert list(packed.drain()) == _expected(3)
    assert calls == {"compress": 0, "decompress": 0}
    assert len(packed) == 0 and list(packed.drain()) == []


def test_only_full_batches_go_through_zlib(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    count = 2 * BATCH + 17
    packed = _filled(count)
    assert calls == {"compress": 2, "decompress": 0}
    drained = list(packed.drain())
    assert drained == _expected(count)
    assert calls == {"compress": 2, "decompress": 2}
    assert len(packed) == 0 and list(packed.drain()) == []


def test_a_drained_list_is_empty_for_every_reader() -> None:
    # The open batch is handed over by the drain, not left behind for `__iter__` or `at`.
    packed = _filled(2)
    assert list(packed.drain()) == _expected(2)
    assert list(packed) == [] and len(packed) == 0
    with pytest.raises(IndexError):
        packed.at(0)


def test_the_list_can_be_filled_again_after_a_drain() -> None:
    packed = _filled(BATCH + 1)
    assert len(list(packed.drain())) == BATCH + 1
    packed.append((7, "again", ()), Repeat(7, 0, 1.0))
    assert len(packed) == 1
    assert list(packed.drain()) == [((7, "again", ()), Repeat(7, 0, 1.0))]
