"""A task's `scan --json` objects as the scan cache keeps them (`rows`): a path named as
JSON text can hold it, and the reports of a task of many sessions kept a few rows at a time
and read back a row at a time (`ChunkedReports`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from replay.core.corpus.cache import ScanCache
from replay.core.readers.base import ReaderError


class ChunkedReports(Sequence[dict[str, Any]]):
    """A task's reports kept in rows of `rows.CHUNK_REPORTS` (`keep_result`), read back a row at a
    time as they are iterated (the cache must stay open meanwhile, as it does for a scan's
    whole output). Pickled, it is a plain list."""

    def __init__(self, cache: ScanCache, keys: Sequence[str], stamp: str, count: int) -> None:
        self._cache, self._keys, self._stamp, self._count = cache, keys, stamp, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        given = 0
        for key in self._keys:
            chunk = self._cache.lookup_key(key, self._stamp)
            if not isinstance(chunk, list):
                raise ReaderError(f"the scan cache lost part of a result ({key}): run again, "
                                  "or with --no-cache")
            given += len(chunk)
            yield from chunk
        if given != self._count:
            raise ReaderError("the scan cache lost part of a result: run again, or with "
                              "--no-cache")

    def __getitem__(self, index: int | slice) -> Any:
        return list(self)[index]  # (rare: callers iterate)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def chunk_keys(key: str, chunks: int) -> list[str]:
    """The keys of the rows holding a task's reports, beside its own row's `key`."""
    return [f"{key}#{number}" for number in range(chunks)]


def text_of(path: str) -> str:
    """A path as JSON text can hold it (a name that is not UTF-8 as its bytes in hex, after
    a NUL no path holds: never renamed, as its report keeps it in `path_base64`)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + os.fsencode(path).hex()
    return path
