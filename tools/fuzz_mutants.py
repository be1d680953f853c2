"""A mutation fuzz over real transcripts: every file of ../shared/realdata (and the samples),
mutated many ways, read by every reader, by detection and by the scan of a folder.

    .venv/bin/python tools/fuzz_mutants.py [--per-file N] [--seed S] [--show K] [--keep DIR]

Each mutant is written under its original name (readers take facts from names) into a fresh
folder and read four ways: `load_sessions(path)` (detection), `load_sessions(path, format=r)`
for every reader `r`, `scan_task` (what `replay scan FILE` runs) and a scan of a folder that
holds the mutant beside a good session (the good one must still be reported). Each session
read is then put through the empty-turn scan with the suggester and the CSV export rows.

Each mutant is also cut shorter while it is read (`cut while scanned`, `cut while fed`): in a
forked child, the file is truncated to a third once the first window of a whole document has
been read (or its first record fed to the builder), read windows being 512 bytes, and
`scan_task` and the app's indexed read run on. A child killed by a signal (SIGBUS: a mapped
file cut under the reader) is a death; an error must be one line.

Anything raised other than `ReaderError` is a traceback a user would see; a mutant that
takes longer than `--timeout` seconds is a hang. The summary counts both, grouped by the
raising frame, and exits 1 when there is any.

Mutations (seeded, so a run is repeatable): deep nesting (1,000 and 100,000 levels) in a
record, a lone surrogate escape and raw invalid UTF-8 in a string, a field of a record
given a value of each wrong type, a key dropped, a record truncated, the file cut short, a
byte flipped, a record repeated, records reordered, a NUL byte, a BOM, CRLF line ends.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import textwrap
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from replay.core.corpus.encoded import write_json_line  # noqa: E402
from replay.core.corpus.scan import scan_session  # noqa: E402
from replay.core.corpus.tasks import SessionTask, plan, scan_task  # noqa: E402
from replay.core.detection.empty import DEFAULT_RULES  # noqa: E402
from replay.core.index.turn_index import TurnIndex  # noqa: E402
from replay.core.publish.export import export_rows  # noqa: E402
from replay.core.readers import (  # noqa: E402
    ReaderError,
    all_readers,
    detect_reader,
    json_stream,
    load_sessions,
    read_entry,
)
from replay.core.readers.base import EMPTY_FILE, iter_lines  # noqa: E402
from replay.core.session.labels import DEFAULT_LABELS  # noqa: E402

try:
    from replay.core.readers import file_window  # noqa: E402
except ImportError:  # a tree from before the windows (documents were mapped)
    file_window = None  # type: ignore[assignment]
from replay.core.suggest import default_suggester  # noqa: E402

REALDATA = REPO.parent / "shared" / "realdata"
SAMPLES = REPO / "sample_sessions"

WRONG_VALUES: list[Any] = [None, 0, -1, 2**70, 1e308, True, "", "x", [], [None], {}, {"a": 1},
                           [[[]]], "\ud800"]
"""Values of every JSON type a field may be given instead of its own."""


class Hang(Exception):
    """A mutant took longer than the time allowed."""


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang


LIMITS = {"cpu": 20.0, "wall": 600.0}
"""A trial's limits: CPU seconds (what a loaded, shared machine does not stretch) and wall
seconds (a read blocked for ever uses no CPU)."""


def _limit(on: bool) -> None:
    """Start (or stop) the current process's limits: SIGPROF after `cpu` seconds of its CPU,
    SIGALRM after `wall` seconds; either raises Hang."""
    signal.setitimer(signal.ITIMER_PROF, LIMITS["cpu"] if on else 0)
    signal.setitimer(signal.ITIMER_REAL, LIMITS["wall"] if on else 0)


# --- mutations -------------------------------------------------------------------------------

class Parsed:
    """A file read as JSON values (`parse`): its records, one a line, or one document; what
    the mutations of its values find in it and write back."""

    __slots__ = ("lines", "values")

    def __init__(self, values: list[Any], lines: bool) -> None:
        self.values = values
        """The records (`lines`), or the one document."""
        self.lines = lines

    def containers(self) -> list[Any]:
        """Every dict and list inside the values, outer ones first."""
        return [container for value in self.values for _, container in _containers(value)]

    def dicts(self, *, empty: bool = True) -> list[dict[str, Any]]:
        """Every dict inside the values (`empty`: also those with no key)."""
        return [c for c in self.containers() if isinstance(c, dict) and (empty or c)]

    def strings(self) -> list[tuple[Any, Any]]:
        """Every (container, key) that holds a non-empty string."""
        return [found for value in self.values for found in _strings(value)]

    def dump(self, marker: str | None = None, put: bytes = b"", count: int = -1) -> bytes:
        """The values written back (ASCII JSON); `marker`'s text (the first `count` times)
        replaced by the bytes `put`, which JSON could not hold."""
        if self.lines:
            text = b"".join(json.dumps(v, ensure_ascii=True).encode() + b"\n"
                            for v in self.values)
        else:
            text = json.dumps(self.values[0], ensure_ascii=True).encode()
        return text if marker is None else text.replace(marker.encode(), put, count)


def parse(data: bytes) -> Parsed | None:
    """The file as JSON values: one document, else its lines; None if neither."""
    try:
        return Parsed([json.loads(data)], False)
    except ValueError:
        pass
    values = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except ValueError:
            return None
    return Parsed(values, True) if values else None


def _containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, dict-or-list) inside a JSON value."""
    if isinstance(value, dict):
        yield path, value
        for key, child in value.items():
            yield from _containers(child, (*path, key))
    elif isinstance(value, list):
        yield path, value
        for index, child in enumerate(value):
            yield from _containers(child, (*path, index))


def _strings(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) that holds a string."""
    for _, container in _containers(value):
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, child in items:
            if isinstance(child, str) and child:
                yield container, key


def _marked(rng: random.Random, data: bytes, marker: str, counts: list[int],
            mark: Callable[[str], str]) -> Parsed | None:
    """The file parsed with a few of its strings (as many as one of `counts`, at random)
    given `marker` by `mark` (`Parsed.dump(marker, ...)` then writes what JSON cannot hold in
    its place); None when it is not JSON or holds no string."""
    parsed = parse(data)
    found = [] if parsed is None else parsed.strings()
    if parsed is None or not found:
        return None
    for container, key in rng.sample(found, min(len(found), rng.choice(counts))):
        container[key] = mark(container[key])
    return parsed


def _nest(depth: int) -> Callable[[random.Random, bytes], bytes | None]:
    def mutate(rng: random.Random, data: bytes) -> bytes | None:
        parsed = parse(data)
        if parsed is None:
            # Text formats: a deeply nested JSON line in the middle.
            lines = data.splitlines(keepends=True)
            at = rng.randrange(len(lines) + 1)
            return b"".join([*lines[:at], b"[" * depth + b"]" * depth + b"\n", *lines[at:]])
        dicts = parsed.dicts()
        if not dicts:
            return None
        marker = "\u0000NEST\u0000"
        rng.choice(dicts)["nested"] = marker
        return parsed.dump(json.dumps(marker), b"[" * depth + b"]" * depth, 1)
    mutate.__name__ = f"nest{depth}"
    return mutate


def lone_surrogate(rng: random.Random, data: bytes) -> bytes | None:
    parsed = parse(data)
    if parsed is None:
        return data + b"\n\\ud800 lone\n"
    found = parsed.strings()
    if not found:
        return None
    container, key = rng.choice(found)
    container[key] = container[key][:3] + rng.choice(["\ud800", "\udfff", "\udc80x"])
    return parsed.dump()


def invalid_utf8(rng: random.Random, data: bytes) -> bytes | None:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"\xed\xa0\x80", b"\xff\xfe", b"\xc3", b"\x80\x80"]) + data[at:]


def wrong_type(rng: random.Random, data: bytes) -> bytes | None:
    parsed = parse(data)
    if parsed is None:
        return None
    fields = [(c, k) for c in parsed.containers()
              for k in (c.keys() if isinstance(c, dict) else range(len(c)))]
    if not fields:
        return None
    for _ in range(rng.choice([1, 1, 2, 5])):
        container, key = rng.choice(fields)
        try:
            container[key] = rng.choice(WRONG_VALUES)
        except (KeyError, IndexError):
            continue
    return parsed.dump()


def drop_key(rng: random.Random, data: bytes) -> bytes | None:
    parsed = parse(data)
    dicts = [] if parsed is None else parsed.dicts(empty=False)
    if parsed is None or not dicts:
        return None
    chosen = rng.choice(dicts)
    del chosen[rng.choice(list(chosen))]
    return parsed.dump()


def retype_record(rng: random.Random, data: bytes) -> bytes | None:
    parsed = parse(data)
    if parsed is None:
        return None
    values = parsed.values
    if parsed.lines:
        values[rng.randrange(len(values))] = rng.choice(WRONG_VALUES)
    else:
        lists = [c for c in parsed.containers() if isinstance(c, list) and c]
        if not lists:
            return None
        chosen = rng.choice(lists)
        chosen[rng.randrange(len(chosen))] = rng.choice(WRONG_VALUES)
    return parsed.dump()


def cut(rng: random.Random, data: bytes) -> bytes | None:
    return data[:rng.randrange(len(data))] if data else None


def cut_line(rng: random.Random, data: bytes) -> bytes | None:
    lines = data.splitlines(keepends=True)
    if not lines:
        return None
    at = rng.randrange(len(lines))
    lines[at] = lines[at][:rng.randrange(len(lines[at]) + 1)] + b"\n"
    return b"".join(lines)


def flip(rng: random.Random, data: bytes) -> bytes | None:
    if not data:
        return None
    out = bytearray(data)
    for _ in range(rng.choice([1, 3, 20])):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def repeat(rng: random.Random, data: bytes) -> bytes | None:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data + data
    at = rng.randrange(len(lines))
    return b"".join([*lines[:at + 1], *[lines[at]] * rng.choice([2, 50]), *lines[at + 1:]])


def shuffle(rng: random.Random, data: bytes) -> bytes | None:
    lines = data.splitlines(keepends=True)
    if len(lines) < 3:
        return None
    rng.shuffle(lines)
    return b"".join(lines)


def nul(rng: random.Random, data: bytes) -> bytes | None:
    at = rng.randrange(len(data) + 1)
    return data[:at] + b"\x00" + data[at:]


def bom_crlf(rng: random.Random, data: bytes) -> bytes | None:
    return rng.choice([b"\xef\xbb\xbf" + data, data.replace(b"\n", b"\r\n"),
                       data.replace(b"\n", b"\r")])


TRICKY = ["]}],[{", "\\\"", "\"}]\n[{\"", "[/]", "[link=x]", "\x1b]0;x\x07", "\\", "{", "]"]
"""Text a byte-level record splitter may take for structure: brackets and escaped quotes."""


def pretty(rng: random.Random, data: bytes) -> bytes | None:
    """Strings given brackets and escaped quotes, the document pretty-printed (records that
    start mid-line and run over many lines), sometimes with CRLF or a BOM."""
    parsed = parse(data)
    if parsed is None:
        return None
    found = parsed.strings()
    for container, key in rng.sample(found, min(len(found), rng.choice([1, 5, 50]))):
        container[key] = container[key] + rng.choice(TRICKY)
    if parsed.lines:
        text = parsed.dump()
    else:
        text = json.dumps(parsed.values[0], indent=rng.choice([1, 2, "\t"]),
                          ensure_ascii=rng.random() < 0.5).encode()
    roll = rng.random()
    if roll < 0.2:
        text = text.replace(b"\n", b"\r\n")
    elif roll < 0.3:
        text = b"\xef\xbb\xbf" + text
    return text


def invalid_utf8_in_string(rng: random.Random, data: bytes) -> bytes | None:
    """Raw invalid UTF-8 inside one string of one record (often of a record a lean feed
    skips: its warnings must still equal the full reader's)."""
    marker = "QAINVALIDUTF8MARKER"
    parsed = _marked(rng, data, marker, [1, 1, 3], lambda text: text[:5] + marker)
    if parsed is None:
        return None
    return parsed.dump(marker, rng.choice([b"\xff", b"\xed\xa0\x80", b"\xc3(", b"\x80abc",
                                           b"\xe2\x82"]))


NUMBER = re.compile(rb"(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=\s*[,\]}])")
"""A number token in JSON text (after a colon, bracket or comma)."""

HUGE_NUMBERS = [b"1e999", b"-1e999", b"1" + b"0" * 5000, b"-" + b"9" * 400, b"NaN",
                b"Infinity", b"-Infinity", b"-0", b"1.0e-400", b"123456789012345678901234567890",
                b"18446744073709551616", b"1.7976931348623157e309", b"0.0000000000000001e-330"]
"""Number tokens no 64-bit value holds, or that JSON does not allow (NaN, Infinity)."""


def huge_number(rng: random.Random, data: bytes) -> bytes | None:
    """A number of a record (a time, a count, an index) written as one no float or int64
    holds: 1e999, 5,000 digits, NaN, Infinity; or a string field given such a number."""
    found = list(NUMBER.finditer(data))
    if not found or rng.random() < 0.3:
        marker = "QAHUGENUMBERMARKER"
        parsed = _marked(rng, data, marker, [1, 3], lambda _: marker)
        if parsed is None:
            return None
        return parsed.dump(f'"{marker}"', rng.choice(HUGE_NUMBERS))
    out = data
    for match in sorted(rng.sample(found, min(len(found), rng.choice([1, 1, 4, 40]))),
                        key=lambda m: -m.start()):
        out = out[:match.start()] + rng.choice(HUGE_NUMBERS) + out[match.end():]
    return out


def duplicate_key(rng: random.Random, data: bytes) -> bytes | None:
    """A key of a record written twice, the second (or the first) time with a value of
    another type: parsers keep one of them, and readers must not trust which."""
    parsed = parse(data)
    dicts = [] if parsed is None else parsed.dicts(empty=False)
    if parsed is None or not dicts:
        return None
    marker = "QADUPKEYMARKER"
    for chosen in rng.sample(dicts, min(len(dicts), rng.choice([1, 1, 5]))):
        key = rng.choice(list(chosen))
        value = rng.choice(WRONG_VALUES)
        if rng.random() < 0.5:  # the duplicate before the key's own place
            items = [(marker + key, value), *chosen.items()]
            chosen.clear()
            chosen.update(items)
        else:
            chosen[marker + key] = value
    return parsed.dump(marker)


STRUCTURE = b'{}[],:"\n'


def cut_structural(rng: random.Random, data: bytes) -> bytes | None:
    """The file cut just before or just after a structural byte (a brace, bracket, comma,
    colon, quote or line end) of a kind chosen first, so every kind of boundary is hit."""
    kinds = [k for k in STRUCTURE if k in data]
    if not kinds:
        return None
    kind = rng.choice(kinds)
    places = [i for i, b in enumerate(data) if b == kind]
    at = rng.choice(places) + rng.choice([0, 1])
    return data[:at]


def nest_value(rng: random.Random, data: bytes) -> bytes | None:
    """A field's own value (the message, the content, a part) replaced by arrays or objects
    nested 300, 1,000 or 100,000 deep."""
    parsed = parse(data)
    if parsed is None:
        return None
    fields = [(c, k) for c in parsed.dicts() for k in c]
    if not fields:
        return None
    container, key = rng.choice(fields)
    marker = "QANESTMARKER"
    container[key] = marker
    depth = rng.choice([300, 1000, 100_000])
    nested = (b"[" * depth + b"]" * depth if rng.random() < 0.5
              else b'{"a":' * depth + b"1" + b"}" * depth)
    return parsed.dump(f'"{marker}"', nested, 1)


def nul_in_string(rng: random.Random, data: bytes) -> bytes | None:
    """NUL inside strings: as the escape (valid JSON) or raw (not valid)."""
    marker = "QANULMARKER"
    parsed = _marked(rng, data, marker, [1, 3, 30], lambda text: text[:4] + marker + text[4:])
    if parsed is None:
        return None
    return parsed.dump(marker, rng.choice([b"\\u0000", b"\x00"]))


def encoded(rng: random.Random, data: bytes) -> bytes | None:
    """The whole file in another encoding (UTF-16 with its BOM, UTF-8 BOM and CRLF
    together), as an editor on another system may save it."""
    choice = rng.randrange(3)
    if choice == 0:
        try:
            return b"\xff\xfe" + data.decode("utf-8").encode("utf-16-le")
        except UnicodeDecodeError:
            return None
    if choice == 1:
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    return data.replace(b"\n", b"\r\n").rstrip(b"\r\n")  # no line end at the end


MUTATIONS: list[Callable[[random.Random, bytes], bytes | None]] = [
    _nest(1000), _nest(100_000), lone_surrogate, invalid_utf8, wrong_type, wrong_type,
    wrong_type, drop_key, retype_record, cut, cut_line, flip, repeat, shuffle, nul, bom_crlf,
    pretty, invalid_utf8_in_string, huge_number, duplicate_key, cut_structural,
    cut_structural, nest_value, nul_in_string, encoded,
]


# --- running -------------------------------------------------------------------------------

def _consume(sessions: list[Any]) -> None:
    """What a scan and an export do with each session read."""
    suggester = default_suggester()
    for session in sessions:
        report = scan_session(session, DEFAULT_RULES, suggester)
        report.to_json()
        export_rows(session, [], DEFAULT_LABELS, all_empty=True, suggester=suggester)


def _frame(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
    return f"{type(error).__name__} at {where}"


def trials(path: Path, good: Path) -> Iterator[tuple[str, Callable[[], object]]]:
    """The ways one mutant file is read (name, call)."""
    yield "detect", lambda: _consume(load_sessions(path))
    for reader in all_readers():
        yield f"as {reader.name}", lambda name=reader.name: _consume(load_sessions(path, name))
    yield "scan_task", lambda: scan_task(SessionTask(str(path)))

    def folder_scan() -> None:
        tasks = plan(path.parent)
        results = [scan_task(task) for task in tasks]
        paths = {report["path"] for result in results for report in result.reports}
        if str(good) not in paths:
            raise AssertionError(f"folder scan lost the good session beside {path.name}")
    yield "folder", folder_scan
    yield "indexed", lambda: _same_turns(load_sessions(path), load_sessions(path, indexed=True))
    yield "read_entry indexed", lambda: _entries_read_back(path)
    yield "app index = whole", lambda: _same_app_index(path)
    yield "scan windowed = whole", lambda: _same_scan(path)
    for change in CHANGES:
        yield f"changed {change.__name__}", lambda change=change: _changed(path, change)
    for when in ("scanned", "fed"):
        yield f"cut while {when}", lambda when=when: _cut_trial(path, when)
    for command in CLI_COMMANDS:
        yield f"cli {command[0]}", lambda command=command: _in_child(
            lambda: _cli(path, command))
    if APP_TRIAL["every"] and APP_TRIAL["count"] % APP_TRIAL["every"] == 0:
        yield "app", lambda: _in_child(lambda: _app(path))
    APP_TRIAL["count"] += 1


# --- the new paths: indexed reads, read-back, windowed scan against the whole one ------------

class Mismatch(Exception):
    """Two ways of reading the same file gave different answers (or a command's output was
    wrong). Its first line is the kind of failure (what the summary groups by); the lines
    after it, the evidence: the command run, the offending line."""

    def __init__(self, kind: str, *evidence: str) -> None:
        super().__init__("\n".join([kind, *evidence]))

    @property
    def kind(self) -> str:
        """The first line: what failed, without the evidence."""
        return str(self).partition("\n")[0]

    @property
    def evidence(self) -> str:
        """The lines after the first: the command, the offending line ("" if none)."""
        return str(self).partition("\n")[2]


def _turn_facts(turn: Any) -> tuple[Any, ...]:
    parts = tuple((p.kind, p.text, p.name, p.input, p.output, p.status, p.call_id)
                  for p in turn.parts)
    return (turn.id, turn.role, turn.time, turn.completed, turn.is_meta, turn.is_summary,
            parts)


def _same_turns(whole: list[Any], indexed: list[Any]) -> None:
    """Every turn read back through the index equals the whole reader's."""
    if len(whole) != len(indexed):
        raise Mismatch(f"{len(whole)} sessions whole, {len(indexed)} indexed")
    for one, other in zip(whole, indexed, strict=True):
        if len(one.turns) != len(other.turns):
            raise Mismatch(f"{len(one.turns)} turns whole, {len(other.turns)} indexed")
        for number in range(len(one.turns)):
            if _turn_facts(one.turns[number]) != _turn_facts(other.turns[number]):
                raise Mismatch(f"turn {number} differs read back through the index")
        if (one.warnings, one.skipped) != (other.warnings, other.skipped):
            raise Mismatch("warnings or skipped differ indexed")
        _consume([other])


def _same_app_index(path: Path) -> None:
    """A line-based file read as the app reads it (its builder's turns in a `TurnIndex`, fed
    line by line) answers turn for turn as the whole read."""
    try:
        reader = detect_reader(path)
        whole = load_sessions(path, reader.name)
    except ReaderError:
        return  # unreadable whole: the other trials check its error line
    if reader.builder is None or reader.index_turns is None or len(whole) != 1:
        return
    builder = reader.builder(str(path))
    reader.index_turns(builder)
    fed = False
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
            fed = True
    builder.finish()
    if not fed:  # as the app says it (`ReplayApp`'s line loader)
        builder.session.warn(EMPTY_FILE, skipped=False)
    session = reader.complete(path, builder) if reader.complete is not None else builder.session
    _same_turns(whole, [session])


def _entries_read_back(path: Path) -> None:
    """What the app does: the folder's entries read with `indexed=True`, every turn read back
    (twice: once past the cache)."""
    for task in plan(path.parent):
        if task.entry is None or Path(task.entry.path).name != path.name:
            continue
        reader = detect_reader(Path(task.entry.path))
        session = read_entry(reader, task.entry, indexed=True)
        for turn in session.turns:
            _turn_facts(turn)
        for number in reversed(range(len(session.turns))):
            _turn_facts(session.turns[number])


def _same_scan(path: Path) -> None:
    """`scan --json` of the file alone (windowed, fed or streamed) equals the scan of the
    sessions a whole read gives."""
    result = scan_task(SessionTask(str(path)))
    try:
        sessions = load_sessions(path)
    except ReaderError:
        return  # unreadable whole: the task's error line is checked by the other trials
    if result.error is not None:
        raise Mismatch(f"windowed scan failed where the whole read did not: {result.error}")
    suggester = default_suggester()
    whole = [scan_session(s, DEFAULT_RULES, suggester).to_json() for s in sessions]
    windowed = [json.loads(_json_line(report)) for report in result.reports]
    whole = [json.loads(_json_line(report)) for report in whole]
    if json.dumps(whole, sort_keys=True) != json.dumps(windowed, sort_keys=True):
        fields = sorted({k for a, b in zip(whole, windowed, strict=False)
                         for k in set(a) | set(b) if a.get(k) != b.get(k)})
        raise Mismatch(f"scan differs windowed vs whole ({len(whole)}/{len(windowed)}"
                       f" reports; fields {fields})")


def _json_line(report: Any) -> bytes:
    """A report as `scan --json` writes it (its empty turns may be an `EncodedList`)."""
    pieces: list[bytes] = []
    write_json_line(report, pieces.append)
    return b"".join(pieces)


def truncate_half(path: Path) -> None:
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.truncate(len(data) // 2)


def truncate_empty(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)


def rewrite_shifted(path: Path) -> None:
    """Rewritten in place, every byte moved on by some: spans now fall mid-record."""
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(b" \n{\"x\": [\"]\", \"\\\"\"]}\n" + data[: max(len(data) - 30, 0)])
        handle.truncate()


def rewrite_garbage(path: Path) -> None:
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(bytes((b * 7 + 3) % 256 for b in data))


def append_more(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(path.read_bytes()[:4096] + b"\n{\"type\": \"user\"}\n")


def replaced(path: Path) -> None:
    """Replaced by a new file (an editor's save): the index's open descriptor keeps the old."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_bytes(b"[]")
    fresh.replace(path)


CHANGES: list[Callable[[Path], None]] = [truncate_half, truncate_empty, rewrite_shifted,
                                         rewrite_garbage, append_more, replaced]


def _changed(path: Path, change: Callable[[Path], None]) -> None:
    """The app holds the file's index (one turn already read back, so the file is open),
    the file changes, and every turn is read back: no exception, the same count of turns."""
    backup = path.read_bytes()
    try:
        sessions = load_sessions(path, indexed=True)
        for task in plan(path.parent):
            if task.entry is not None and Path(task.entry.path).name == path.name:
                reader = detect_reader(Path(task.entry.path))
                sessions.append(read_entry(reader, task.entry, indexed=True))
        for session in sessions:
            if len(session.turns):
                _turn_facts(session.turns[0])
        counts = [len(s.turns) for s in sessions]
        change(path)
        for session in sessions:
            for turn in session.turns:
                _turn_facts(turn)
            _consume([session])
            if isinstance(session.turns, TurnIndex):
                session.turns.lines_with("the")
        if counts != [len(s.turns) for s in sessions]:
            raise Mismatch("turn count changed after the file changed")
    finally:
        path.write_bytes(backup)


# --- cut shorter while it is read ------------------------------------------------------------

class Died(Exception):
    """A trial's child process was killed by a signal (SIGBUS: a mapped file cut shorter)."""


class ChildError(Exception):
    """A trial's child process raised (its frame is the message)."""


CUT_STATS: collections.Counter[str] = collections.Counter()
"""Cut trials: how many cut the file while it was read, and how many of those said so."""

CUT_MISSED: list[str] = []
"""Cut trials whose scan did not say the file changed: the trial, what the scan had read
of the file when it was cut and after, and what the scan said (for the summary)."""

CURRENT_TRIAL = {"name": ""}
"""The trial running now (source file, mutation, trial), for CUT_MISSED."""


def _in_child(call: Callable[[], str]) -> None:
    """Run `call` in a forked child, so that a signal kills the child, not the fuzz: its
    death is `Died`, its exception `ChildError` (or `Mismatch`); what it returns is counted
    in CUT_STATS. The parent's alarm (a hang) kills the child."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        _limit(True)  # a fork does not inherit the timers: its own CPU is counted anew
        code, said = 0, ""
        try:
            said = call()
        except Hang:
            code = 5
        except Mismatch as error:
            code, said = 4, str(error)
        except BaseException as error:  # noqa: BLE001 - the parent counts it
            code, said = 3, _frame(error)
        os.write(write_end, said.encode("utf-8", "replace"))
        os._exit(code)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            said = pipe.read().decode()
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    if os.WIFSIGNALED(status):
        raise Died(f"killed by {signal.Signals(os.WTERMSIG(status)).name}")
    code = os.WEXITSTATUS(status)
    if code == 5:
        raise Hang
    if code == 4:
        if said.startswith(CUT_NEITHER):
            CUT_STATS["cut"] += 1
            CUT_MISSED.append(f"{CURRENT_TRIAL['name']}: {said}")
        raise Mismatch(said)
    if code == 3:
        raise ChildError(said)
    outcome, _, detail = said.partition("|")
    CUT_STATS.update(outcome.split())
    if "cut" in outcome.split() and "said" not in outcome.split():
        CUT_MISSED.append(f"{CURRENT_TRIAL['name']}: {detail}")


def _cut_trial(path: Path, when: str) -> None:
    """`_cut_while_read` in a child; the file is put back whatever became of the child."""
    backup = path.read_bytes()
    CUT_STATS["trials"] += 1
    try:
        _in_child(lambda: _cut_while_read(path, when))
    finally:
        path.write_bytes(backup)


def _plain_reports(reports: Any) -> list[str]:
    """A scan's reports as JSON text, whether kept in memory or spilled to disk."""
    return [json.dumps(report, sort_keys=True, default=str) for report in (reports or [])]


CUT_NEITHER = ("a scan of a file cut while it was read said nothing and gave neither the "
               "uncut nor the cut file's result")
"""The start of the `Mismatch` of a silent cut scan that read something no file held."""


def _outcome(result: Any) -> tuple[str | None, list[str]]:
    """What a scan gave, to compare: its error and its reports as JSON text."""
    return result.error, _plain_reports(result.reports)


def _cut_while_read(path: Path, when: str) -> str:
    """(In a child.) The file is cut to a third once the first window of a streamed document
    is read (`scanned`) or its first record fed (`fed`); then `scan_task` and the app's
    indexed read. Returns "cut" when the file was cut, "said" when the scan said it changed.

    A scan that cut the file and did not say so is then compared with scans of the uncut
    and of the cut file, made with the hook off (a hook left on cuts those too, and the
    comparison would be of two cut scans): one that gives neither is a `Mismatch`."""
    cut: list[int] = []
    """The size the file was cut to, once it was."""
    armed = [True]
    """False while the comparison scans run: no cut, nothing counted."""
    # What the scan had read when the file was cut, and what it read after: bytes read
    # through the windows (`scanned`) or records fed (`fed`). A scan that read nothing after
    # the cut had the whole file already and has nothing to say.
    seen = {"before": 0, "after": 0, "size": path.stat().st_size}

    def truncate() -> None:
        if armed[0] and not cut:
            cut.append(path.stat().st_size // 3)
            os.truncate(path, cut[0])

    def count(amount: int) -> None:
        if armed[0]:
            seen["after" if cut else "before"] += amount

    if file_window is None and when == "scanned":  # a tree from before the windows
        import orjson  # noqa: PLC0415

        loads = orjson.loads

        def hooked_loads(data: Any, *rest: Any) -> Any:
            value = loads(data, *rest)
            if isinstance(data, memoryview):
                truncate()
            return value
        orjson.loads = hooked_loads
    elif when == "scanned":
        file_window.WINDOW_BYTES = 512
        read = file_window.WindowFile.read

        def hooked_read(self: Any, offset: int, length: int) -> bytes:
            data = read(self, offset, length)
            count(len(data))
            truncate()
            return data
        file_window.WindowFile.read = hooked_read  # type: ignore[method-assign]
    else:
        if file_window is not None:
            file_window.WINDOW_BYTES = 512
        records = json_stream.Elements.records

        def hooked_records(self: Any) -> Iterator[Any]:
            for item in records(self):
                count(1)
                yield item
                truncate()
        json_stream.Elements.records = hooked_records  # type: ignore[method-assign]
    backup = path.read_bytes()
    result = scan_task(SessionTask(str(path)))
    if result.error is not None and "\n" in result.error:
        raise Mismatch("a scan error of more than one line",
                       f"error: {_cut_repr(result.error.encode())}")
    outcome = ["cut"] if cut else []
    if cut and result.error is not None and "file changed while it was read" in result.error:
        outcome.append("said")
    unit = "bytes" if when == "scanned" else "records"
    detail = (f"{seen['size']} bytes; {seen['before']} {unit} read before the cut, "
              f"{seen['after']} after; scan: "
              + (f"error {result.error!r}" if result.error is not None else
                 f"{len(_plain_reports(result.reports))} report(s)"))
    path.write_bytes(backup)
    if "cut" in outcome and "said" not in outcome:
        # Did the scan report the whole file anyway (it read all of it before the cut), or
        # the file as cut (it read only what was left)? Anything else it made up.
        armed[0] = False
        try:
            whole = _outcome(scan_task(SessionTask(str(path))))
            os.truncate(path, cut[0])
            short = _outcome(scan_task(SessionTask(str(path))))
        finally:
            path.write_bytes(backup)
            armed[0] = True
        silent = _outcome(result)
        if silent == whole == short:
            detail += "; the same as the uncut file's scan, which the cut file's is too"
        elif silent == whole:
            detail += "; the same as the uncut file's scan"
        elif silent == short:
            detail += "; the same as the cut file's scan"
        else:
            raise Mismatch(f"{CUT_NEITHER}: {detail}")
    cut.clear()  # the app's indexed read is cut while it reads in turn
    try:
        _consume(load_sessions(path, indexed=True))
    except ReaderError as error:
        if "\n" in str(error):
            raise Mismatch("a load error of more than one line",
                           f"error: {_cut_repr(str(error).encode())}") from None
    return " ".join(outcome) + "|" + detail


# --- the commands and the app, as a user runs them ---------------------------------------------

CLI_COMMANDS: list[tuple[str, ...]] = [
    ("scan",), ("scan", "--json"), ("report", "--no-cache", "--html", "{out}.html"),
    ("export", "--all-empty", "--as", "csv", "-o", "{out}.csv"),
    ("export", "--all-empty", "--as", "html", "-o", "{out}.html"),
    ("export", "--all-empty", "--as", "md", "-o", "{out}.md"),
    ("watch", "--from-start"),
]
"""Commands run on each mutant (in a child, output to a file): no traceback, no raw control
byte from the transcript on the terminal, no line of stderr that is not one of ours. `watch`
runs for `WATCH_SECONDS`, then gets the interrupt a user's Ctrl-C sends."""

WATCH_SECONDS = 1.5

DEAF_SECONDS = 30.0
"""How long `watch` may go on after its Ctrl-C before the trial says where it is (the main
thread's frames) and presses Ctrl-C again, as a user would."""


def _interrupt_watch(main: int, stuck: list[str], done: threading.Event) -> None:
    """(A thread of the `watch` child.) Ctrl-C after `WATCH_SECONDS`; if the command is still
    running `DEAF_SECONDS` later, note where its main thread is and press Ctrl-C again."""
    if done.wait(WATCH_SECONDS):
        return
    os.kill(os.getpid(), signal.SIGINT)
    while not done.wait(DEAF_SECONDS):
        frame = sys._current_frames().get(main)
        where = traceback.extract_stack(frame)[-3:] if frame is not None else []
        stuck.append(" < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}"
                                for f in reversed(where)) or "?")
        os.kill(os.getpid(), signal.SIGINT)

APP_TRIAL = {"every": 1, "count": 0}
"""The app is run on every `every`-th mutant (0: never)."""

CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _cli(path: Path, command: tuple[str, ...]) -> str:
    """(In a child.) `replay COMMAND PATH` with stdout and stderr in files; checks them."""
    from replay.cli import main as cli_main  # noqa: PLC0415

    out = tempfile.mkdtemp(prefix="fuzz-cli-")
    argv = [part.replace("{out}", f"{out}/x") for part in command]
    argv.insert(1, str(path)) if argv[0] == "export" else argv.append(str(path))
    with open(f"{out}/stdout", "wb") as stdout, open(f"{out}/stderr", "wb") as stderr:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(stdout.fileno(), 1)
        os.dup2(stderr.fileno(), 2)
        stuck: list[str] = []
        if argv[0] == "watch":
            done = threading.Event()
            threading.Thread(target=_interrupt_watch, daemon=True,
                             args=(threading.get_ident(), stuck, done)).start()
            try:
                status = cli_main(argv)
            except KeyboardInterrupt:
                status = 130  # what the shell reports for Ctrl-C; said nothing: fine
            done.set()
        else:
            status = cli_main(argv)
        sys.stdout.flush()
        sys.stderr.flush()
    said = Path(f"{out}/stderr").read_bytes()
    shown = Path(f"{out}/stdout").read_bytes()
    shutil.rmtree(out, ignore_errors=True)
    ran = " ".join(["replay", *argv])
    if stuck:
        raise Mismatch(f"{command[0]}: still running {DEAF_SECONDS:g} s after Ctrl-C, at "
                       f"{stuck[0]} ({len(stuck)} more Ctrl-C)", ran)
    for name, output in (("stderr", said), ("stdout", shown)):
        if b"Traceback" in output:
            at = output.index(b"Traceback")
            raise Mismatch(f"{command[0]}: a traceback on the terminal", ran,
                           f"{name}: {_cut_repr(output[at:])}")
    for line in said.splitlines():
        if not line.startswith(b"replay: "):
            raise Mismatch(f"{command[0]}: a line on stderr that is not one of ours", ran,
                           f"stderr line: {_cut_repr(line)}")
    if command[0] != "export":
        for name, output in (("stderr", said), ("stdout", shown)):
            for line in output.splitlines():
                if CONTROL.search(line):
                    raise Mismatch(f"{command[0]}: a raw control byte reaches the terminal",
                                   ran, f"{name} line: {_cut_repr(line)}")
    if status not in (0, 1, 2, 130):
        raise Mismatch(f"{command[0]}: exit status {status}", ran,
                       f"stderr: {_cut_repr(said)}")
    return ""


EVIDENCE_CHARS = 300
"""How much of an offending line a failure keeps (its repr, cut)."""


def _cut_repr(line: bytes) -> str:
    """`line`'s repr, cut to `EVIDENCE_CHARS` characters (the cut said)."""
    shown = repr(line)
    if len(shown) <= EVIDENCE_CHARS:
        return shown
    return f"{shown[:EVIDENCE_CHARS]}... ({len(line):,} bytes)"


APP_KEYS = ["right", "right", "left", "right_square_bracket", "left_square_bracket", "o",
            "end", "home", "v", "escape", "slash", "t", "h", "e", "enter", "n", "escape",
            "right", "right", "right"]
"""What a user presses on a session: steps, jumps between empty turns, unfold, the raw
view, a search."""


def _app(path: Path) -> str:
    """(In a child.) The app, headless, opens the file and is stepped through: any exception
    of the app is a ChildError; an exit must say one line."""
    import asyncio  # noqa: PLC0415

    from replay.config import Settings  # noqa: PLC0415
    from replay.ui.app import make_app  # noqa: PLC0415

    try:
        reader = detect_reader(path)
    except ReaderError:
        return ""  # the launch's one line (scan's trials check it)
    journal = tempfile.mkdtemp(prefix="fuzz-app-")
    settings = Settings(animations=False, idle_cap=0.02, speed=16.0)
    app = make_app(path, settings=settings, format=reader.name, cache=False,
                   annotations=Path(journal) / "annotations.jsonl")

    async def drive() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(1500):  # 30 s at most, then the parent's alarm
                if app.return_code is not None or (
                        app.replay_screen is not None and not app.replay_screen.indexing):
                    break
                if app.replay_screen is None and len(app.screen_stack) > 1:
                    await pilot.press("enter")  # a list of sessions: open the first
                await pilot.pause(0.02)
            if app.return_code is None:
                for key in APP_KEYS:
                    await pilot.press(key)
                await pilot.pause()
    asyncio.run(drive())
    shutil.rmtree(journal, ignore_errors=True)
    message = str(getattr(app, "_exit_renderables", "") or "")
    if "\n" in message.strip():
        raise Mismatch("the app's exit message is more than one line",
                       f"message: {_cut_repr(message.encode())}")
    return ""


GENERATED = ("chat-json", "chat-jsonl", "sharegpt", "aider", "opencode-run", "swe-agent",
             "mini-swe-agent")
"""Formats with no real file: small ones made from real records (`bench/bench_hostile.py`)."""


def sources(generated: Path | None = None) -> list[Path]:
    found = [p for p in sorted(REALDATA.rglob("*")) if p.is_file() and p.name != "SOURCES.md"]
    found += [p for p in sorted(SAMPLES.iterdir()) if p.is_file() and p.suffix != ".md"]
    if generated is not None:
        sys.path.insert(0, str(REPO / "bench"))
        from bench_hostile import FORMATS  # noqa: PLC0415 - only with --generated

        for name in GENERATED:
            suffix, make = FORMATS[name]
            out = generated / f"gen-{name}{suffix}"
            make(12_000, out)
            found.append(out)
    return found


def _trial(call: Callable[[], object], timeout: float, wall: float) -> tuple[str, str] | None:
    """Run one trial within the limits: None if it passed (or said a `ReaderError`), else
    the kind of failure (what the summary groups by) and its evidence ("" if none)."""
    _limit(True)
    try:
        call()
    except ReaderError:
        return None
    except Mismatch as error:
        kind = "".join("N" if c.isdigit() else c for c in error.kind[:90])
        return f"mismatch: {kind}", error.evidence
    except Hang:
        return f"hang > {timeout:g} s CPU or {wall:g} s", ""
    except Died as error:
        return f"died: {error}", ""
    except ChildError as error:
        return str(error), ""
    except BaseException as error:  # noqa: BLE001 - counting them is the point
        if isinstance(error, KeyboardInterrupt):
            raise
        return _frame(error), ""
    finally:
        _limit(False)
    return None


def keep_mutant(folder: Path, number: int, mutation: str, name: str, data: bytes) -> Path:
    """The bytes of a mutant that failed, kept in `folder` (`--keep`) under a name that says
    which it was and ends as its source's did (readers take facts from names): a failure
    can be rerun on it alone, which `--only` cannot do (it draws other mutants)."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{number:04d}-{mutation}" / name
    if not kept.exists():
        kept.parent.mkdir(exist_ok=True)
        kept.write_bytes(data)
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-file", type=int, default=len(MUTATIONS) * 2)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="CPU seconds a trial may take (a hang past them)")
    parser.add_argument("--wall", type=float, default=600.0,
                        help="wall seconds a trial may take (a read blocked for ever)")
    parser.add_argument("--show", type=int, default=3, help="examples shown per failure kind")
    parser.add_argument("--generated", action="store_true",
                        help="also small files of the formats with no real file")
    parser.add_argument("--shard", default="1/1",
                        help="K/N: only the K-th of N equal shares of the files (runs at once)")
    parser.add_argument("--only", default="", help="only the source files whose name has this")
    parser.add_argument("--app-every", type=int, default=1,
                        help="run the app (headless, stepped through) on every N-th mutant; "
                             "0: never")
    parser.add_argument("--keep", metavar="DIR", default="",
                        help="copy each mutant that fails into DIR (to rerun it alone)")
    parser.add_argument("--whole-index", action="store_true",
                        help="turn indexes keep their default 64 whole turns (else one, so "
                             "every turn of a small file is read back from its bytes)")
    args = parser.parse_args()
    APP_TRIAL["every"] = args.app_every
    # Imported once here, not in each trial's forked child (seconds of CPU a mutant).
    import replay.cli  # noqa: F401, PLC0415
    import replay.commands.export  # noqa: F401, PLC0415
    import replay.commands.report  # noqa: F401, PLC0415
    import replay.commands.scan  # noqa: F401, PLC0415
    if args.app_every:
        import replay.ui.app  # noqa: F401, PLC0415
        import replay.ui.screens.replay_screen  # noqa: F401, PLC0415
    if not args.whole_index:
        TurnIndex.__init__.__kwdefaults__.update(tail=1, cache=1)
    generated = tempfile.TemporaryDirectory(prefix="fuzz-gen-") if args.generated else None
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    LIMITS.update(cpu=args.timeout, wall=args.wall)
    rng = random.Random(args.seed)
    failures: dict[str, list[str]] = collections.defaultdict(list)
    mutants = runs = 0
    started = time.monotonic()
    files = [f for f in sources(Path(generated.name) if generated is not None else None)
             if args.only in f.name]
    shard, shards = (int(part) for part in args.shard.split("/"))
    files = files[shard - 1::shards]
    good_source = SAMPLES / "refactor.claude-code.jsonl"
    next_kind = 0
    for number_of_file, source in enumerate(files, start=1):
        print(f"[{number_of_file}/{len(files)}] {source.name[-60:]}: "
              f"{sum(len(v) for v in failures.values())} failures so far "
              f"({mutants} mutants, {runs} reads, {time.monotonic() - started:.0f} s)",
              flush=True)
        for kind, where in failures.items():
            print(f"    so far {len(where)} x {kind}: {where[0]}", flush=True)
        data = source.read_bytes()
        # `per_file` mutants of this file, the kinds taken in turn from where the last file's
        # left off (so every kind runs, not only the first `per_file`); a kind that does
        # not apply to the file (None) gives way to the next, up to two rounds of the kinds.
        kept = 0
        for _attempt in range(2 * len(MUTATIONS)):
            if kept >= args.per_file:
                break
            mutate = MUTATIONS[next_kind % len(MUTATIONS)]
            next_kind += 1
            mutant = mutate(rng, data)
            if mutant is None:
                continue
            kept += 1
            mutants += 1
            with tempfile.TemporaryDirectory(prefix="fuzz-") as directory:
                folder = Path(directory) / "d"
                folder.mkdir()
                good = folder / "good-session.jsonl"
                shutil.copyfile(good_source, good)
                path = folder / source.name
                path.write_bytes(mutant)
                for name, call in trials(path, good):
                    runs += 1
                    CURRENT_TRIAL["name"] = f"{source.name} {mutate.__name__} {name}"
                    failed = _trial(call, args.timeout, args.wall)
                    if failed is None:
                        continue
                    kind, evidence = failed
                    where = f"{source.name} {mutate.__name__} {name}"
                    if args.keep:
                        kept = keep_mutant(Path(args.keep), mutants, mutate.__name__,
                                           source.name, mutant)
                        where += f" (kept: {kept})"
                    if evidence:
                        where += "\n" + textwrap.indent(evidence, " " * 14)
                    failures[kind].append(where)
    total = sum(len(v) for v in failures.values())
    print(f"{len(files)} files x {args.per_file} mutations = {mutants} mutants, {runs} reads, "
          f"{time.monotonic() - started:.0f} s: {total} failures")
    print(f"  cut while read: {CUT_STATS['trials']} trials, {CUT_STATS['cut']} reads cut the "
          f"file, {CUT_STATS['said']} scans of them said 'file changed while it was read'")
    for missed in CUT_MISSED:
        print(f"    did not say so: {missed}")
    for kind, where in sorted(failures.items(), key=lambda item: -len(item[1])):
        print(f"  {len(where):5d}  {kind}")
        for example in where[:args.show]:
            print(f"           {example}")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
