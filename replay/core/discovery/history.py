"""The chats of one Aider history, listed from their headers and counted afterwards, in
arrays: the session list of a history of 144,510 chats holds no `Session` per chat.

`HistoryCounts.of(path)` lists the chats at once (`aider.list_chats`, a pass over the header
lines); `count` then scans the file once, windowed (`scan_stream`, as `replay scan` does,
so the counts are the scan's), and fills in each chat's turns and empty turns.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

from replay.core.corpus.scan import SessionSummary, scan_stream
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules
from replay.core.readers import aider
from replay.core.session.model import Session

FORMAT = aider.NAME


class HistoryCounts:
    """A history's chats (`ChatIndex`) and, once counted, each one's turns and empty
    turns (about 70 bytes a chat in all)."""

    __slots__ = ("counted", "empty", "error", "index", "labels", "most_empty",
                 "most_turns", "turns")

    def __init__(self, index: aider.ChatIndex) -> None:
        self.index = index
        """Where each chat is, and what its header says."""
        size = len(index)
        self.turns = array("l", [0]) * size
        self.empty = array("l", self.turns)
        self.counted = 0
        """Chats counted so far: the first `counted`, in file order."""
        self.labels: dict[int, str] = {}
        """The names of chats without a header time (their first prompt), once counted."""
        self.most_turns = 0
        self.most_empty = 0
        self.error: str | None = None
        """Why counting stopped before the end (the file changed), if it did."""

    @classmethod
    def of(cls, path: Path) -> HistoryCounts:
        """The chats of the history at `path`, listed, none counted yet (ReaderError when
        it cannot be read)."""
        return cls(aider.list_chats(path))

    @property
    def path(self) -> str:
        return self.index.path

    def __len__(self) -> int:
        return len(self.index)

    def label(self, number: int) -> str:
        """The chat's name in the list, as `Session.label` gives it."""
        return self.index.title(number) or self.labels.get(number) \
            or self.index.session_id(number)

    def summary(self, number: int) -> SessionSummary | None:
        """The chat's counts, None while not counted."""
        if number >= self.counted:
            return None
        return SessionSummary(label=self.label(number), started=self.index.started(number),
                              turns=self.turns[number], empty=self.empty[number], subagents=0,
                              format=FORMAT)

    def read(self, number: int) -> Session:
        """The chat's Session, read from its own bytes (ReaderError when it is gone)."""
        return self.index.read(number)

    def count(self, rules: DetectionRules = DEFAULT_RULES,
              cancelled: Callable[[], bool] = lambda: False) -> Iterator[int]:
        """Count every chat not counted yet (one windowed scan of the file), yielding how
        many are counted after each one; a file whose chats no longer match the list stops
        it, said in `error`."""
        if self.counted >= len(self.index):
            return
        path = Path(self.path)
        number = 0
        for report in scan_stream(aider.READER, path, rules, suggest=False):
            if cancelled():
                return
            if number >= len(self.index) or \
                    report.session.session_id != self.index.session_id(number):
                self.error = (f"{self.path}: the file changed since its chats were listed; "
                              "open it again to count them")
                return
            if number >= self.counted:
                turns, empty = len(report.session.turns), len(report.empty_turns)
                self.turns[number] = turns
                self.empty[number] = empty
                self.most_turns = max(self.most_turns, turns)
                self.most_empty = max(self.most_empty, empty)
                if self.index.title(number) is None:
                    session = report.session
                    self.labels[number] = session.title or report.prompt \
                        or session.session_id or self.path.rsplit("/", 1)[-1]
                self.counted = number + 1
                yield self.counted
            number += 1
