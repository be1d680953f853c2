"""The headless scan: one report per session, as `replay scan --json` prints it."""

from __future__ import annotations

import gc
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, overload

from replay.core.corpus.encoded import EncodedList
from replay.core.detection.empty import (
    DEFAULT_RULES,
    NO_COMPLETION,
    REPLY_WINDOW,
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_empty,
    find_empty_turns,
    is_empty,
    is_stop,
    missing_reply,
)
from replay.core.detection.packed import PackedEmpties, PackedList
from replay.core.readers import huge_strings
from replay.core.readers.base import (
    EMPTY_FILE,
    LineBuilder,
    Progress,
    Reader,
    ReaderError,
    RecordFeed,
    UnreadablePath,
    feed_lines,
    feed_records,
    iter_lines,
)
from replay.core.readers.file_window import FileChanged
from replay.core.safe import json_path
from replay.core.session.model import (
    PROMPT_TURNS,
    Session,
    Turn,
    TurnColumns,
    first_prompt,
    no_conversation,
)
from replay.core.suggest.rules import suggest_ahead, suggest_from
from replay.core.suggest.signals import (
    USER_LOOKBACK_TURNS,
    WINDOW,
    SessionStats,
    Signals,
    StatsTally,
    read_signals,
)


@dataclass(slots=True)
class ScanReport:
    """What a scan found in one session."""

    session: Session
    """The session scanned."""
    empty_turns: Sequence[EmptyTurn]
    """Its empty turns in order (a list, or `PackedEmpties` from a windowed scan)."""
    prompt: str | None = None
    """Its first real prompt (`first_prompt`), taken while its first turns were at hand."""
    started: float | None = None
    """When its first timed turn was written (`Session.started`), taken on the way: the
    session lists keep it beside the report (not part of `scan --json`)."""

    def to_json(self, *, consume: bool = False) -> dict[str, Any]:
        """The JSON object of PRODUCT.md's `scan --json` contract. With `consume`, its
        `empty_turns` is an `EncodedList` (each report encoded and compressed as it is made:
        a session of 100,000 empty turns holds them in a few megabytes, not as dicts; write
        the object with `encoded.write_json_line`), and this report lets go of each empty
        turn as it is encoded (`empty_turns` is then empty)."""
        session = self.session
        return {
            # Lossless for any file name: `path` text, plus `path_base64` when not UTF-8.
            **json_path(session.path),
            "format": session.format,
            # The name the app shows: the source's title, else the first real prompt.
            "title": session.title or self.prompt,
            "session_id": session.session_id,
            "turns": len(session.turns),
            "skipped": session.skipped,
            # A file of bookkeeping alone says so, as the app does where turns would be.
            "warnings": list(session.warnings) + [
                note for note in (no_conversation(session),) if note],
            "empty_turns": self._consumed() if consume else [
                empty.to_json() for empty in self.empty_turns],
        }

    def _consumed(self) -> EncodedList:
        empties, self.empty_turns = self.empty_turns, []
        encoded = EncodedList()
        append = encoded.append
        if isinstance(empties, PackedEmpties):
            for empty in empties.drain():
                append(empty.to_json())
            return encoded
        if isinstance(empties, list):
            empties.reverse()
            while empties:
                append(empties.pop().to_json())
            return encoded
        for empty in empties:
            append(empty.to_json())
        return encoded


def report_label(report: dict[str, Any]) -> str:
    """A session's short name from its `scan --json` object, as `Session.label` names it."""
    return str(report.get("title") or report.get("session_id")
               or str(report["path"]).rsplit("/", 1)[-1])


def scan_session(
    session: Session, rules: DetectionRules = DEFAULT_RULES, suggester: Suggester | None = None
) -> ScanReport:
    """Find the empty turns of one session."""
    return ScanReport(session, find_empty_turns(session, rules, suggester),
                      first_prompt(session.turns), session.started)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line about a session for a list of sessions: kept instead of the session."""

    label: str
    """Its title, else its id, else its file name."""
    started: float | None
    """When its first turn was written (epoch seconds)."""
    turns: int
    """Number of turns."""
    empty: int
    """Number of empty turns under the rules it was summarised with."""
    subagents: int
    """Number of subagent sessions linked to it."""
    format: str
    """Reader name."""
    title: str | None = None
    """As `scan --json` names it: the source's title, else the first real prompt."""
    session_id: str | None = None
    """The id the session's records give."""
    skipped: int = 0
    """Records skipped as unreadable or unknown (`scan --json`'s `skipped`)."""


def summarize(session: Session, rules: DetectionRules = DEFAULT_RULES) -> SessionSummary:
    """The summary of a session (no suggestions: counting is enough)."""
    turns = session.turns
    empty = (len(turns.stops(0, len(turns), rules)) if isinstance(turns, TurnColumns)
             else sum(1 for turn in turns if is_stop(session, turn.index, rules)))
    return SessionSummary(
        label=session.label, started=session.started, turns=len(turns), empty=empty,
        subagents=len(session.sidechains), format=session.format,
        title=session.title or first_prompt(turns), session_id=session.session_id,
        skipped=session.skipped)


# ---------------------------------------------------------------- streamed scan

LOOK_AHEAD = max(WINDOW, REPLY_WINDOW) + 2
"""Turns read past a turn before it is judged: the signals look `WINDOW` turns ahead (a
missing reply `REPLY_WINDOW`), and a turn is judged only once the turns after it can no
longer grow (a response's lines come together; one more turn of margin)."""

_REACH = LOOK_AHEAD - 2
"""How far past a turn its judgement reads: the signals' and a missing reply's look-ahead."""

LOOK_BACK = max(USER_LOOKBACK_TURNS, WINDOW, 50) + 1
"""Turns kept behind the one being judged: the longest look back of a signal (earlier user
messages for a repeat) or of the evidence (the gap before)."""

_PROVISIONAL = SessionStats(turns=0, median_gap=None, median_text=None,
                            records_completion=True)
"""Stand-in figures while the session is still being read; `Signals.settled` and the
completion evidence replace them at its end."""


class TurnWindow:
    """The turns of a session being scanned: every index counts, only the latest are kept.

    Reads by index and slice as a list does, in the session's own numbering; reading a turn
    that was let go is an error (IndexError), never a silent wrong answer.
    """

    __slots__ = ("_base", "_turns", "append")

    def __init__(self) -> None:
        self._turns: list[Turn] = []
        self._base = 0
        self.append = self._turns.append
        """Add the next turn (the list's own method: this runs once per turn)."""

    def __len__(self) -> int:
        return self._base + len(self._turns)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[Turn]:
        """The turns still kept (not the whole session)."""
        return iter(self._turns)

    @overload
    def __getitem__(self, key: int) -> Turn: ...

    @overload
    def __getitem__(self, key: slice) -> list[Turn]: ...

    def __getitem__(self, key: int | slice) -> Turn | list[Turn]:
        # (`len(self)` written out: the signals read the window by index thousands of times.)
        base, turns = self._base, self._turns
        if isinstance(key, slice):
            start, stop, step = key.indices(base + len(turns))
            if stop > start and start < base:
                raise IndexError(f"turns before {base} were let go")
            return turns[max(start - base, 0):max(stop - base, 0):step]
        index = key + base + len(turns) if key < 0 else key
        if not base <= index < base + len(turns):
            raise IndexError(f"turn {key} is not in the window")
        return turns[index - base]

    def forget_before(self, index: int) -> None:
        """Let go of the turns before `index`, in batches so each turn is moved once or twice."""
        drop = index - self._base
        if drop > 0 and drop >= len(self._turns) // 2:
            del self._turns[:drop]
            self._base = index


class _LateMerge(Exception):
    """A line joined a turn the window had already judged, or one its judged neighbours read,
    on a pass that knew of no such line: the scan starts again holding every turn
    (`scan_file`)."""


@dataclass(slots=True)
class _Again(Exception):
    """A pass over lines out of order: its judgements are void, and the file is read again
    (`scan_file`), knowing which turns later lines change."""

    late: dict[int, int] | None
    """What the void pass saw (`_WindowScan.late`); None: hold every turn instead."""


class _Waits:
    """How many turns from the first no later line changes, on a pass over lines read before:
    from that earlier pass's `_WindowScan.late` (each turn a line changed once newer turns had
    come, with the number of turns read when the last such line came). A turn waits until
    more turns than that are read: the lines, and so the turns, come as they came before."""

    __slots__ = ("_counts", "_next", "_turns", "_window")

    def __init__(self, late: dict[int, int], window: TurnWindow) -> None:
        ordered = sorted(late.items())
        self._turns = array("q", [turn for turn, _ in ordered])
        self._counts = array("q", [count for _, count in ordered])
        self._next = 0
        self._window = window

    def __call__(self) -> int:
        turns, counts, at, read = self._turns, self._counts, self._next, len(self._window)
        # The first turn still waiting (the ones before it are done: the count only grows).
        while at < len(turns) and counts[at] < read:
            at += 1
        self._next = at
        return turns[at] if at < len(turns) else read


class _WindowScan:
    """Judges each turn once the turns after it are read, then lets go of it; with `hold`,
    judges every turn only at the end (the whole session kept, as a whole read has it).
    `late`: what a void pass over the same lines saw (`_Waits`); each turn a later line
    changes waits for it."""

    def __init__(self, session: Session, rules: DetectionRules, suggest: bool,
                 settled: Callable[[], int] | None = None, hold: bool = False,
                 late: dict[int, int] | None = None) -> None:
        self.session = session
        self.hold = hold
        self.window = TurnWindow()
        self.waits = None if late is None else _Waits(late, self.window)
        if self.waits is not None:
            settled = self.waits if settled is None else partial(_least, settled, self.waits)
        self.settled = settled
        """How many turns from the first can no longer change (`Reader.scan_feed`'s
        builder, or `late`); None when a turn is done once the next one is read."""
        self.late: dict[int, int] = {}
        """Each turn a line changed after newer turns came (`merged`), with the number of
        turns read when the last such line came: a second pass waits for them."""
        self.void = False
        """A line changed a turn already judged, or one a judged turn read: nothing more is
        judged (the turns are still let go), and the file is read again (`_Again`)."""
        session.turns = self.window  # type: ignore[assignment]
        self.rules = rules
        self.suggest = suggest
        self.ahead = True
        """Suggest while reading where no session-wide figure decides (`suggest_ahead`);
        False reads every signal of every empty turn (the same answers: tests compare)."""
        self.tally = StatsTally()
        self.found = PackedList()
        """Each empty turn's report and signals, packed (`detection.packed`) until the end:
        a file of mostly empty turns would otherwise hold a kilobyte of objects for each."""
        self._next = 0
        self.prompt: str | None = None
        """The first real prompt, looked for among the turns `first_prompt` looks at."""

    def advance(self, final: bool = False) -> None:
        """Judge every turn that has enough turns after it (every turn, when `final`)."""
        window = self.window
        if self.hold and not final:
            return
        end = len(window) if final else len(window) - LOOK_AHEAD
        if self.settled is not None and not final:
            # A turn may still change (a late event of its message): it, the turns that see
            # it as one of their neighbours and every turn after it wait.
            end = min(end, self.settled() - LOOK_AHEAD)
        if self._next >= end:
            return
        # The window's own list, not `window[i]`: this runs once per turn.
        if not self.void:
            kept, base, judge = window._turns, window._base, self._judge
            for position in range(self._next, end):
                judge(kept[position - base])
        self._next = end
        window.forget_before(self._next - LOOK_BACK)

    def merged(self, turn: Turn) -> None:
        """A later line joined `turn` (the builder's `watch_merges`). A judged turn may have
        read it when it is a turn judged so far (the first `_next`) or one whose judgement
        looked as far ahead as `turn` (at most `_REACH` turns past it): this pass is then
        void, or, on a pass told of every such line (`late`), raises `_LateMerge` (a line
        it was not told of: the builder saw these lines otherwise). A reply's lines come
        within a turn or two of each other in real files (its tool results between them),
        which `LOOK_AHEAD`'s margin leaves unjudged.

        Every line that changes a turn older than the last two is kept in `late`: only
        those can touch a judged turn's reach (`_next + _REACH <= len(window) - 2`)."""
        index, read = turn.index, len(self.window)
        if self.waits is None and index < read - 2:
            self.late[index] = read
        if self._next and index < self._next + _REACH:
            if self.waits is not None:
                raise _LateMerge
            self.void = True

    def _judge(self, turn: Turn) -> None:
        self.tally.add(turn)
        if self.prompt is None and turn.role == "user" and turn.index < PROMPT_TURNS:
            self.prompt = first_prompt([turn])
        session, rules = self.session, self.rules
        # `is_stop` on a window (never a compact index), without asking which kind it is.
        if not is_empty(turn, rules) and not (
                rules.missing_replies and missing_reply(session, turn.index) is not None):
            return
        # Built as a whole-session scan builds it; the suggestion and the completion evidence
        # wait for the session-wide figures (`finish`).
        empty = describe_empty(session, turn, rules, None, records_completion=True)
        signals: Signals | tuple[str, str, tuple[str, ...], str] | None = None
        if self.suggest:
            # Most empty turns are decided by a rule that needs no session-wide figure: its
            # suggestion is made now, from the few signals it reads; the rest wait.
            found = suggest_ahead(session, turn.index) if self.ahead else None
            if found is None:
                signals = read_signals(session, turn.index, _PROVISIONAL)
            else:
                signals = (found.label, found.confidence, tuple(found.reasons), found.rule)
        self.found.append((empty.index, empty.id, empty.role, empty.timestamp, empty.reason,
                           tuple(empty.evidence), empty.gap_before), signals)

    def finish(self) -> PackedEmpties:
        """The empty turns, with the session-wide figures now known (held packed)."""
        self.advance(final=True)
        stats = self.tally.stats()
        empties = PackedEmpties()
        for (index, turn_id, role, timestamp, reason, evidence, gap), signals in \
                self.found.drain():
            empty = EmptyTurn(index=index, id=turn_id, role=role, timestamp=timestamp,
                              reason=reason, evidence=list(evidence), gap_before=gap)
            if not stats.records_completion and NO_COMPLETION in empty.evidence:
                empty.evidence.remove(NO_COMPLETION)
            if isinstance(signals, tuple):  # decided while read (`_judge`)
                empty.suggestion, empty.suggestion_confidence, reasons, empty.suggestion_rule \
                    = signals
                empty.suggestion_reasons = list(reasons)
            elif signals is not None:
                found = suggest_from(signals.settled(stats))
                if found is not None:
                    empty.suggestion, empty.suggestion_confidence = found.label, found.confidence
                    empty.suggestion_reasons = list(found.reasons)
                    empty.suggestion_rule = found.rule
            empties.append(empty)
        return empties


def scan_file(reader: Reader, path: Path, rules: DetectionRules = DEFAULT_RULES,
              suggest: bool = True, progress: Progress | None = None) -> ScanReport:
    """Scan a one-session file of a `windowed` reader, keeping a window of its turns.

    The same report as `scan_session` on the whole session (every label suggested when
    `suggest`), in memory bounded by the window rather than the file. Raises ReaderError.

    A file whose lines are out of order, so that a line joins a turn already judged (a reply's
    lines far apart), is scanned again knowing which turns later lines change (what the first
    pass saw): each of those waits in the window until its last line is read. The same report
    still, in the memory of a window as long as the lines' disorder (a whole shuffle: the whole
    session). Should that pass still meet such a line, a third one holds every turn.
    """
    again: _Again | None = None
    for _ in range(3):
        try:
            return _scan_one_file(reader, path, rules, suggest, progress, again)
        except _Again as void:
            # (Read again outside this handler: the exception's frames hold the void pass's
            # turns, which must go before the next pass reads.)
            late = void.late
        except _LateMerge:
            late = None
        again = _Again(late)
    raise AssertionError("a pass that holds every turn is never void")


def _scan_one_file(reader: Reader, path: Path, rules: DetectionRules, suggest: bool,
                   progress: Progress | None, again: _Again | None) -> ScanReport:
    """`scan_file`'s one pass over the file: windowed, or again (`again`), told what the first
    pass saw or holding every turn. Raises `_Again` when this pass is void."""
    assert reader.builder is not None and reader.windowed
    builder = reader.builder(str(path))
    lean = getattr(builder, "for_scan", None)
    # A builder may hand the scan a feed of its own (the same turns, as far as a scan reads
    # them, for less work).
    take = lean() if lean is not None else builder.feed
    try:
        total = os.path.getsize(path)
        handle = open(path, "rb")
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    complete = reader.complete_alone or reader.complete

    def completed(builder: LineBuilder) -> Session:
        # Subagent sessions are not part of the report: not read (or let go at once).
        assert complete is not None
        session = complete(path, builder)
        session.sidechains = []
        return session

    with handle:
        if getattr(builder, "takes_views", False):
            # The lines as `iter_lines(views=True)` yields them, handed over in one loop.
            def pump(take: Callable[[bytes, int, int], None],
                     tick: Callable[[int, int], None]) -> bool:
                return feed_lines(handle, take, tick, _BATCH_MASK)
        else:
            pump = partial(feed_records, iter_lines(handle, lift=huge_strings.enabled()),
                           mask=_BATCH_MASK)
        return _scan_fed(builder, pump, take, total, EMPTY_FILE, rules, suggest, progress,
                         completed if complete is not None else None, again, True)


def scan_records(feed: RecordFeed, rules: DetectionRules = DEFAULT_RULES, suggest: bool = True,
                 progress: Progress | None = None,
                 complete: Callable[[LineBuilder], Session] | None = None,
                 feed_one: Callable[[bytes, int, int], None] | None = None) -> ScanReport:
    """Scan one session from its records (`Reader.record_feed`, or a file's lines), keeping a
    window of its turns: `scan_file` for records that are not lines. `complete` gives the
    session once every record is fed (None: the builder's); `feed_one` feeds a record (None: the
    builder's `feed`). Raises ReaderError."""
    return _scan_fed(feed.builder, partial(feed_records, feed.records, mask=_BATCH_MASK),
                     feed_one or feed.builder.feed, feed.total, feed.empty, rules, suggest,
                     progress, complete)


Pump = Callable[[Callable[[bytes, int, int], None], Callable[[int, int], None]], bool]
"""Hands every record to its first argument, `take(record, offset, number)`, calls its second,
`tick(number, offset)`, after every record whose number is a multiple of 64, and says
whether any record was handed over (`readers.base.feed_lines`)."""


def _scan_fed(builder: LineBuilder, pump: Pump, take: Callable[[bytes, int, int], None],
              total: int, empty: str | None, rules: DetectionRules, suggest: bool,
              progress: Progress | None,
              complete: Callable[[LineBuilder], Session] | None,
              again: _Again | None = None, rereads: bool = False) -> ScanReport:
    """The windowed scan of one session whose records `pump` hands to `take`. `rereads` (from
    `scan_file`, which can read the file again): the builder tells of lines joining older turns
    (`watch_merges`), and a pass they made void raises `_Again` at its end; `again`: this is
    such a second pass (`_Again.late`), or, `late` None, one that keeps every turn and judges
    them at the end."""
    hold = again is not None and again.late is None
    scan = _WindowScan(builder.session, rules, suggest, getattr(builder, "settled", None),
                       hold, None if again is None else again.late)
    watch = getattr(builder, "watch_merges", None)
    if watch is not None and rereads and not hold:
        watch(scan.merged)
    advance = scan.advance
    # A builder that makes no reference cycles needs no collection while it is fed.
    collect = not getattr(builder, "acyclic", False)
    # A builder may leave a fact of its last turn to be settled before the turns are read.
    settle = getattr(builder, "settle_times", None)

    def tick(number: int, offset: int) -> None:
        # After every 64th record: judge what can be judged, now and then collect and report.
        if settle is not None:
            settle()
        advance()
        if not number & _COLLECT_MASK:
            if collect:
                gc.collect(1)
            if progress is not None:
                progress(offset, total)

    was_enabled = gc.isenabled()
    # The turns of a scan die young and make no cycles: the collector would walk the window
    # again and again for nothing (a third of the time on tiny records). A young collection
    # now and then still frees any cycle a reader might make.
    gc.disable()
    try:
        fed = pump(take, tick)
        builder.finish()
        if scan.void:
            raise _Again(scan.late)
        session = builder.session
        if not fed and empty is not None:
            session.warn(empty, skipped=False)
        if complete is not None:
            session = complete(builder)
        empties = scan.finish()
    finally:
        if was_enabled:
            gc.enable()
    if progress is not None:
        progress(total, total)
    return ScanReport(session, empties, scan.prompt, scan.tally.first)


def _least(first: Callable[[], int], second: Callable[[], int]) -> int:
    return min(first(), second())


_BATCH_MASK = 63
"""Turns are judged after every 64th line: the window holds that many more, and the check
costs nothing on the other lines."""

_COLLECT_MASK = (1 << 16) - 1
"""A young collection every 65,536 lines."""


def scan_stream(reader: Reader, path: Path, rules: DetectionRules = DEFAULT_RULES,
                suggest: bool = True, items: Iterable[Session | None] | None = None
                ) -> Iterator[ScanReport]:
    """Scan every session of a file of a reader with a `stream`, keeping a window of each
    one's turns: the reports `scan_session` gives on the sessions `read` returns, in order,
    each as soon as its session is read, in memory bounded by the window (not the file).
    `items`: what to scan instead of `reader.stream(path)` (the same kind of stream, say of
    a history's later sessions only).

    Raises ReaderError (a reader's own failure on bad input is one, as in `each_session`).
    """
    assert reader.stream is not None
    scan: _WindowScan | None = None
    was_enabled = gc.isenabled()
    gc.disable()  # as in `scan_file`: the window's turns die young and make no cycles
    try:
        ticks = 0
        for item in reader.stream(path) if items is None else items:
            if item is None:
                if scan is not None:
                    scan.advance()
                ticks += 1
                if not ticks & _COLLECT_TICKS:
                    gc.collect(1)
                continue
            if scan is not None:
                yield ScanReport(scan.session, scan.finish(), scan.prompt, scan.tally.first)
            scan = _WindowScan(item, rules, suggest)
        if scan is not None:
            yield ScanReport(scan.session, scan.finish(), scan.prompt, scan.tally.first)
    except ReaderError:
        raise
    except FileChanged as error:  # cut shorter while it was read: said as such
        raise UnreadablePath.of(path, error) from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            RecursionError) as error:
        raise ReaderError(f"{path}: could not be read as {reader.title}: {error}") from None
    finally:
        if was_enabled:
            gc.enable()


_COLLECT_TICKS = (1 << 10) - 1
"""A young collection every 1,024 of a stream's pauses."""
