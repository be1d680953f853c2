"""A review queue's entries of each session file, kept in the scan cache between runs.

A second `replay review` of an unchanged corpus (or a sample drawn from it) reads no
session to build its queue: `index_corpus(memo=...)` asks `QueueMemo.known` first.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from replay.core.corpus.cache import ScanCache, Warn, file_stamp


class QueueMemo:
    """A review queue's summary and entries of each session file, kept in the scan cache
    (`index_corpus(memo=...)`): a second review of an unchanged corpus reads no session to
    build its queue, so a sample or a filter has its counts at once.

    Keyed by the session (file, format, key), the detection rules and the label set the
    suggestions are limited to; valid while the file's stamp holds.
    """

    def __init__(self, cache: ScanCache, rules: Any, labels: Iterable[str] | None) -> None:
        import dataclasses

        self.cache = cache
        fields = tuple((name, sorted(value) if isinstance(value, frozenset) else value)
                       for name, value in sorted(dataclasses.asdict(rules).items()))
        self._work = repr((fields, sorted(labels) if labels is not None else None))
        self._stamps: dict[str, str] = {}
        self.seen: set[str] = set()
        """The session files looked up (there when listed)."""

    def _key(self, ref: Any) -> str:
        # The absolute path: `review .` and `review ~/project` share their rows.
        identity = repr(("review-queue", os.path.abspath(ref.path), ref.format, ref.key,
                         self._work))
        return hashlib.blake2b(identity.encode("utf-8", "backslashreplace"),
                               digest_size=20).hexdigest()

    def known(self, ref: Any) -> Any:
        """(QueueSession, entries) of a session file unchanged since it was kept, else None
        (its stamp is taken now, before it is read, for `keep`)."""
        from replay.core.annotate.annotations import journal_path_for
        from replay.core.annotate.review_queue import QueueEntry, QueueSession

        if not ref.own_file:
            return None
        self.seen.add(str(ref.path))
        stamp = file_stamp(Path(ref.path))
        if stamp is None:
            return None
        self._stamps[ref.name] = stamp
        value = self.cache.lookup_key(self._key(ref), stamp)
        if not isinstance(value, dict):
            return None
        try:
            session = QueueSession(ref=ref, label=value["label"], format=value["format"],
                                   identity=value["identity"],
                                   journal=str(journal_path_for(value["journal"])),
                                   turns=value["turns"])
            entries = [QueueEntry(0, *entry) for entry in value["entries"]]
        except (KeyError, TypeError):
            return None
        return session, entries

    def keep(self, ref: Any, indexed: Any) -> None:
        """Keep what was read of a session whose stamp `known` took."""
        stamp = self._stamps.pop(ref.name, None)
        if stamp is None:
            return
        session, entries = indexed
        self.cache.store_key(self._key(ref), Path(os.path.abspath(ref.path)), stamp, {
            "label": session.label, "format": session.format, "identity": session.identity,
            "journal": Path(session.journal).stem, "turns": session.turns,
            "entries": [[entry.index, entry.turn_id, entry.role, entry.reason,
                         entry.suggestion] for entry in entries]})


@contextlib.contextmanager
def queue_memo(enabled: bool, rules: Any, labels: Any, warn: Warn | None = None,
               roots: Sequence[str | Path] = ()) -> Iterator[QueueMemo | None]:
    """A `QueueMemo` over the scan cache for the time of one queue build (None when
    `enabled` is False, `--no-cache`); `labels` is the label set suggestions are limited to
    (a `LabelSet`, names, or None for every label). `roots`: the paths the queue is built
    from; the cache's rows of files gone from them are dropped at the end."""
    if not enabled:
        yield None
        return
    from replay.core.suggest.rules import label_names

    with ScanCache(warn=warn) as cache:
        memo = QueueMemo(cache, rules, label_names(labels)) if cache.usable else None
        yield memo
        if memo is not None and roots:
            cache.forget_missing([str(root) for root in roots], memo.seen)
