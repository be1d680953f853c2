"""What listing a folder learns of each file, remembered between runs by whoever lists it.

Telling a file's format (`detect_reader`) and glancing at when its session started
(`glance_started`) read the file's head; a listing does both for every file under a
folder, every time. A caller that keeps results between runs (the scan cache: see
`corpus.file_facts`) makes them its `FileFacts` for the length of a listing
(`remembering`), and each fact is then asked of it first and kept in it after: a file that
did not change since is never read again to say what it is. The facts are keyed by the
file and by what is asked; whether the file changed is the keeper's to tell (it stamps the
file before the fact is computed, so a file written meanwhile is asked again next time).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol, TypeVar

T = TypeVar("T")


class FileFacts(Protocol):
    """Facts about files, kept while each file is unchanged."""

    def recall(self, path: Path, what: str) -> object | None:
        """The fact `what` about the file at `path` kept while it was as it is now; None
        when none is kept (or the file changed, or cannot be stamped)."""

    def keep(self, path: Path, what: str, value: object) -> None:
        """Keep a fact (JSON: text, numbers, lists) about the file as it was when recalled."""


_FACTS: ContextVar[FileFacts | None] = ContextVar("replay_file_facts", default=None)


def facts() -> FileFacts | None:
    """The facts of the listing under way, if its caller keeps any."""
    return _FACTS.get()


@contextlib.contextmanager
def remembering(kept: FileFacts | None) -> Iterator[None]:
    """Within this block, file facts are asked of `kept` first and kept in it (None: not
    kept, as outside any block)."""
    token = _FACTS.set(kept)
    try:
        yield
    finally:
        _FACTS.reset(token)


def mapped(mapper: Callable[[Callable[[Path], T], Sequence[Path]], Iterable[T]],
           function: Callable[[Path], T], files: Sequence[Path], what: str,
           revive: Callable[[object], T]) -> list[T]:
    """`list(mapper(function, files))`, each file's result asked of the listing's facts
    first and kept there after: only the files with no fact kept are given to `mapper` (a
    process pool's `map` reads their heads in its workers). `revive` turns a kept value
    (JSON) back into a result, raising ValueError for one it does not take (then the file
    is looked at again)."""
    kept = facts()
    if kept is None:
        return list(mapper(function, files))
    results: list[T | None] = [None] * len(files)
    missing: list[int] = []
    for index, file in enumerate(files):
        value = kept.recall(file, what)
        try:
            if not isinstance(value, list) or len(value) != 1:
                raise ValueError(what)
            results[index] = revive(value[0])
        except (ValueError, TypeError):
            missing.append(index)
    for index, result in zip(missing, mapper(function, [files[i] for i in missing]),
                             strict=True):
        results[index] = result
        kept.keep(files[index], what, [result])
    return results  # type: ignore[return-value]  # (every place filled)
