"""The scan cache as the listing's memory of each file (`readers.known.FileFacts`): a file's
format and the start its head tells, kept under the file's stamp, so listing a folder again
reads only the files that changed, were added, or changed a moment ago.

A listing of a folder that changed at all (one file added, one being written, a symbolic
link in it) is made again (`rows.planned`); with these facts that costs a walk and a lookup
per file, not a read of each file's head. Facts are kept under the file's path (absolute)
and the stamp it had *before* the fact was computed (`file_stamp`): a file written while it
was looked at, or within `RACY_SECONDS`, is never kept, so a fact is never served for
content it was not computed from.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from replay.core.corpus.cache import ScanCache, file_stamp

FACT_KIND = "file-fact/1"
"""The facts' kind in the cache key (a new number when what a fact means changes)."""


class CachedFacts:
    """File facts kept in a scan cache for one listing (see the module's docstring)."""

    def __init__(self, cache: ScanCache, now: float | None = None) -> None:
        self._cache = cache
        self._now = now if now is not None else time.time()
        self._stamps: dict[str, str | None] = {}
        """Each file's stamp as first seen in this listing (what its facts are kept under)."""
        self.recalled = 0
        self.kept = 0
        """Facts served and facts kept (for tests and benchmarks)."""

    def _place(self, path: Path, what: str) -> tuple[str, Path, str] | None:
        where = os.path.abspath(path)
        if where not in self._stamps:
            self._stamps[where] = file_stamp(Path(where), self._now)
        stamp = self._stamps[where]
        if stamp is None:
            return None
        identity = repr((FACT_KIND, where, what))
        key = hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                              digest_size=20).hexdigest()
        return key, Path(where), stamp

    def recall(self, path: Path, what: str) -> object | None:
        """The fact kept for the file as it is now (`known.FileFacts.recall`)."""
        place = self._place(path, what)
        if place is None:
            return None
        value = self._cache.lookup_key(place[0], place[2])
        if value is not None:
            self.recalled += 1
        return value

    def keep(self, path: Path, what: str, value: object) -> None:
        """Keep a fact under the stamp the file had when first seen in this listing."""
        place = self._place(path, what)
        if place is None:
            return
        self._cache.store_key(place[0], place[1], place[2], value)
        self.kept += 1
