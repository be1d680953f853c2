"""An Aider history of many chats in the app: listed from its header lines at once, counted
by a worker as the list is looked at, and each chat read from its own bytes when opened.

The list's rows are made when drawn (`HistoryRows`): a history of 144,510 chats is held as
a few arrays (`HistoryCounts`), never as a `Session` or a row per chat.
"""

from __future__ import annotations

import gc
import math
import time
from array import array
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from replay.core.readers.base import Reader, ReaderError, SessionEntry
from replay.core.session.model import Session
from replay.core.session.text import one_line
from replay.ui.literal import shown
from replay.ui.messages import HistoryCounted, LoadFailed, SessionStarted, TurnsAdded

if TYPE_CHECKING:
    from replay.core.discovery.history import HistoryCounts
    from replay.core.readers.aider import ChatReading
    from replay.ui.app import ReplayApp
    from replay.ui.screens.picker import PickerRow, SessionPicker

LABEL_WIDTH = 70
"""Characters of a chat's name shown (as `row_cells` cuts it)."""
FLUSH_SECONDS = 0.2
"""How often the list is told how far counting got."""
COLLECT_SECONDS = 5.0
"""How often garbage is collected while counting: the scan keeps the collector off for the
whole pass (its own objects make no cycles), and minutes of the screen's own garbage would
pile up meanwhile."""


def list_history(app: ReplayApp, path: Path, reader: Reader) -> bool:
    """In the loading worker: list an Aider history of several chats for the picker (True),
    or leave the file to be read whole (False: another format, or one chat)."""
    from replay.core.readers import aider

    if reader.name != aider.NAME or not path.is_file():
        return False
    from replay.core.discovery.history import HistoryCounts

    try:
        counts = HistoryCounts.of(path)
    except ReaderError as error:
        app.post_message(LoadFailed(str(error)))
        return True
    if len(counts) == 1 and (reading := counts.index.reading(0)) is not None:
        from replay.ui.chat_loading import load_chat

        load_chat(app, reading)  # one long chat: on screen from its first turns
        return True
    if len(counts) < 2:
        return False
    rows = HistoryRows(counts, str(app.options.path))  # here: it measures every chat's name
    app.call_from_thread(_show, app, rows, reader)
    return True


def _show(app: ReplayApp, rows: HistoryRows, reader: Reader) -> None:
    from replay.ui.screens.picker import SessionPicker

    counts = rows.counts
    picker = SessionPicker(str(app.options.path), rows, app.options.rules, reader)
    app._show_picker(picker)
    app.run_worker(partial(_count, app, picker, counts), thread=True, group="count-history",
                   exit_on_error=False, description="Counting turns")


def _count(app: ReplayApp, picker: SessionPicker, counts: HistoryCounts) -> None:
    """Count every chat (one windowed scan), telling the list a few times a second; the
    counts kept in the scan cache for the file as it is (or, for a history appended to,
    of every chat but its new ones) come at once."""
    from replay.ui.cache_notice import cache_warning

    worker = get_current_worker()
    told = collected = time.monotonic()
    try:
        for done in counts.count(app.options.rules, cancelled=lambda: worker.is_cancelled,
                                 cache=app.options.cache,
                                 warn=lambda line: cache_warning(app, line)):
            now = time.monotonic()
            if now - told > FLUSH_SECONDS:
                picker.post_message(HistoryCounted(len(counts) - done))
                told = now
            if now - collected > COLLECT_SECONDS:
                gc.collect()
                collected = time.monotonic()
    except ReaderError as error:
        counts.error = str(error)
    if not worker.is_cancelled:
        picker.post_message(HistoryCounted(len(counts) - counts.counted, counts.error))


def open_chat(app: ReplayApp, read: Callable[[], Session | ChatReading]) -> None:
    """Read a chat picked from the list in a worker, and show it."""
    app.first_screen_painted.clear()
    app.run_worker(partial(_open, app, read), thread=True, group="load", exclusive=True,
                   exit_on_error=False, description="Reading the chat")


def _open(app: ReplayApp, read: Callable[[], Session | ChatReading]) -> None:
    try:
        session = read()
    except ReaderError as error:
        app.post_message(LoadFailed(str(error), fatal=False))
        return
    if not isinstance(session, Session):  # a long chat: shown while it is read
        from replay.ui.chat_loading import load_chat

        load_chat(app, session, fatal=False)
        return
    app.post_message(SessionStarted(session))
    app.post_message(TurnsAdded(session, 0, done=True))


def _chat(counts: HistoryCounts, number: int) -> Session | ChatReading:
    """What opening a chat reads: a long one a step at a time, else its Session."""
    return counts.index.reading(number) or counts.read(number)


class HistoryRows:
    """The picker's rows of a history (`CompactRows`): each made when it is drawn."""

    def __init__(self, counts: HistoryCounts, root: str) -> None:
        from replay.core.readers import aider

        self.counts = counts
        self._path = Path(counts.path)
        self._format = aider.NAME
        self._path_text = str(self._path)
        self._path_folded = self._path_text.casefold()
        index = counts.index
        self._widest_label = max(
            (len(one_line(shown(index.title(n) or index.session_id(n)), LABEL_WIDTH))
             for n in range(len(index))), default=1)
        from replay.ui.screens.picker import _folder

        self._folder = _folder(self[0], root).cell_len if len(index) else 0

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, number: int) -> PickerRow:
        from replay.ui.screens.picker import PickerRow

        if not 0 <= number < len(self.counts):
            raise IndexError(number)
        counts, index = self.counts, self.counts.index
        entry = SessionEntry(key=index.session_id(number), path=self._path,
                             title=counts.label(number), started=index.started(number),
                             format=self._format)
        return PickerRow(entry=entry, summary=counts.summary(number),
                         read=partial(_chat, counts, number))

    @property
    def waiting(self) -> int:
        return len(self.counts) - self.counts.counted

    def newest_first(self) -> array[int]:
        times = self.counts.index.times
        return array("l", sorted(range(len(times)), reverse=True,
                                 key=lambda n: 0.0 if math.isnan(times[n]) else times[n]))

    def _text(self, number: int) -> str:
        # As `row_text` makes it from the row's summary and entry.
        counts = self.counts
        label = counts.label(number)
        return "\n".join((label if number < counts.counted else "", label,
                          counts.index.session_id(number), self._path_text)).casefold()

    def matches(self, number: int, needle: str) -> bool:
        if "\n" in needle:
            return needle in self._text(number)
        # As `needle in _text(number)`, piece by piece: the file's name is the same for
        # every chat (cased once), and no join is made per row.
        if needle in self._path_folded:
            return True
        return needle in self.counts.label(number).casefold() \
            or needle in self.counts.index.session_id(number).casefold()

    def sort_value(self, column: str) -> Callable[[int], object] | None:
        counts, index = self.counts, self.counts.index
        # Numbers, not (kind, value) pairs: 144,510 keys at once, each a small object. They
        # order as `_sort_value` does ("?" and "…" first), a start by its second.
        if column == "started":
            times = index.times
            return lambda number: -math.inf if math.isnan(times[number]) else times[number]
        if column in ("turns", "empty"):
            values = counts.turns if column == "turns" else counts.empty
            return lambda number: values[number] if number < counts.counted else -1
        if column == "session":  # the name as shown (never empty, never only digits)
            return lambda number: one_line(shown(counts.label(number)), LABEL_WIDTH)
        return None

    def widths(self) -> dict[str, int]:
        counts = self.counts
        labels = max((len(one_line(shown(label), LABEL_WIDTH))
                      for label in counts.labels.values()), default=0)
        return {"started": 16, "turns": len(f"{counts.most_turns:,}"),
                "empty": len(str(counts.most_empty)), "subagents": 0,
                "session": max(self._widest_label, labels), "format": len(self._format),
                "folder": self._folder}
