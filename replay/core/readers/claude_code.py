"""Claude Code JSONL: one session file, or a project directory of them, with subagent sidechains.

Layout (`~/.claude/projects/<encoded cwd>/`): `<sessionId>.jsonl` per session; subagents in
`<sessionId>/subagents/agent-<id>.jsonl` (+ `.meta.json`) in newer versions and in
`agent-<id>.jsonl` beside the sessions in older ones. Records are read by
`claude_code_builder.ClaudeCodeBuilder`; this module finds files and links sidechains.
"""

from __future__ import annotations

import gc
import os
import re
import stat
import time
from collections.abc import Container, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

import orjson

from replay.core.readers import known
from replay.core.readers.base import (
    HEAD_BYTES,
    LineBuilder,
    Mapper,
    Progress,
    Reader,
    SessionEntry,
    UnreadablePath,
    read_line_session,
)
from replay.core.readers.claude_code_builder import NAME, ClaudeCodeBuilder, index_turns
from replay.core.readers.top_members import LONG_LINE, line_spans, member_string, members
from replay.core.session.model import Session, parse_time

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

_EVENT_TYPES = frozenset({
    "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment",
    "permission-mode", "last-prompt",
})
"""Bookkeeping record types known from real files (newer ones are accepted too)."""

_TYPE_BYTES = re.compile(
    rb'"type"\s*:\s*"(?:user|assistant|system|summary|file-history-snapshot|queue-operation'
    rb'|progress|attachment|permission-mode|last-prompt)"'
)

_SNIFF_FILES = 20
"""How many files of a directory are looked at to recognise it."""


def _looks_like_record(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if not isinstance(kind, str):
        return False
    if kind in ("user", "assistant"):
        message = value.get("message")
        return (isinstance(message, dict) and "role" in message
                and any(key in value for key in ("sessionId", "uuid", "parentUuid")))
    if kind == "summary":
        return "leafUuid" in value
    if kind == "file-history-snapshot":
        return "snapshot" in value and "messageId" in value
    return "sessionId" in value and ("uuid" in value or kind in _EVENT_TYPES)


def _looks_like_cut_record(line: bytes, start: int = 0, end: int | None = None) -> bool:
    """For a first line longer than the head: judge by the keys it starts with (of
    `line[start:end]`, not copied)."""
    end = len(line) if end is None else end
    return (line.find(b'"sessionId"', start, end) >= 0
            and (line.find(b'"uuid"', start, end) >= 0
                 or line.find(b'"parentUuid"', start, end) >= 0)
            and _TYPE_BYTES.search(line, start, end) is not None)


def sniff_content(head: bytes) -> bool:
    """True when one of the first lines is a Claude Code record."""
    spans = line_spans(head, 20)
    for index, (start, end) in enumerate(spans[:20]):
        if head[start:start + 1] != b"{":
            continue
        cut = index == len(spans) - 1 and len(head) >= HEAD_BYTES
        if end - start > LONG_LINE and _not_a_record(head, start, end, cut):
            continue  # (a document on one line, told without parsing it whole)
        line = head[start:end]
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            if cut and _looks_like_cut_record(line):
                return True
            continue
        if _looks_like_record(value):
            return True
    return False


def _not_a_record(head: bytes, start: int, end: int, cut: bool) -> bool:
    """True when the long line `head[start:end]` is surely passed over by `sniff_content`:
    an object with no top-level `type` string is no record, and a line that will not parse
    is passed over unless it is the head's cut last line that looks like a record's start
    (`top_members`: judged without parsing the line whole)."""
    found = members(head, start, end)
    if found is None or member_string(found.get("type")) is not None:
        return False  # (parsed whole, as ever)
    # Not a record if it parses; if it does not (a value msgspec does not check that
    # deep), passed over too unless the cut-line test says otherwise.
    return not (cut and _looks_like_cut_record(head, start, end))


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False  # a symbolic link loop, say: not a session file (listed as skipped)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _session_files(directory: Path) -> list[Path]:
    # scandir: a directory entry knows whether it is a file, without a stat per file.
    try:
        with os.scandir(directory) as entries:
            names = sorted(entry.name for entry in entries
                           if entry.name.endswith(".jsonl") and _is_file(entry))
    except OSError:
        return []
    # Names sort as their paths do (one folder), and strings sort far faster than paths.
    return [directory / name for name in names]


def _other_files(directory: Path) -> bool:
    """True when the folder also holds transcripts of other formats (a mixed folder)."""
    from replay.core.readers import ReaderError, detect_reader

    try:
        # Names sort as their paths do (one folder), far faster than 10,000 paths.
        entries = [directory / name for name in sorted(os.listdir(directory))[:200]]
    except OSError:
        return False
    for entry in entries:
        if entry.suffix == ".jsonl" or entry.name.endswith(".meta.json") or not entry.is_file():
            continue
        try:
            detect_reader(entry)
        except ReaderError:
            continue
        return True
    return False


def _head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES)


def _is_session_file(path: Path) -> bool:
    try:
        head = _head(path)
    except OSError:
        return False
    # An empty file has nothing to sniff; Claude Code leaves such files in project folders.
    return sniff_content(head) if head.strip() else path.suffix == ".jsonl"


def sniff(path: Path, head: bytes) -> bool:
    """A file whose first lines are Claude Code records, or a folder of such files."""
    if path.is_dir():
        if _other_files(path):
            return False  # a mixed folder is the folder reader's, which reads every file
        # Lazily: a folder of 10,000 sessions is recognised by its first files, not a stat
        # of every one.
        files = (file for file in _session_files(path) if file.stat().st_size > 0)
        return any(_is_session_file(file) for file in islice(files, _SNIFF_FILES))
    if not head.strip():
        return path.suffix == ".jsonl"
    return sniff_content(head)


@dataclass(slots=True)
class _Read:
    """A session together with the builder that read it (which knows its subagent links)."""

    session: Session
    builder: ClaudeCodeBuilder


def _agent_id_from_name(path: Path) -> str | None:
    stem = path.name.removesuffix(".jsonl")
    return stem.removeprefix("agent-") if stem.startswith("agent-") else None


def _apply_agent_meta(path: Path, read: _Read) -> None:
    meta_path = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    try:
        meta = orjson.loads(meta_path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    if not isinstance(meta, dict):
        return
    description, agent_type = meta.get("description"), meta.get("agentType")
    if isinstance(description, str) and description:
        read.session.title = description
    if isinstance(agent_type, str) and agent_type:
        read.session.meta["agentType"] = agent_type


def _read_file(path: Path, progress: Progress | None = None) -> _Read:
    builder = ClaudeCodeBuilder(str(path))
    read_line_session(path, builder, progress)
    return _finish_file(path, builder)


def _finish_file(path: Path, builder: ClaudeCodeBuilder) -> _Read:
    """What the file's name and its `.meta.json` say, once every line was fed."""
    session = builder.session
    if session.session_id is None and _UUID.fullmatch(path.stem):
        # Claude Code names a session file after its session id.
        session.session_id = path.stem
    read = _Read(session, builder)
    agent_id = _agent_id_from_name(path)
    if agent_id is not None:
        if builder.agent_id is None:
            builder.agent_id = agent_id
            session.meta.setdefault("agentId", agent_id)
        _apply_agent_meta(path, read)
    return read


def _read_or_note(path: Path, progress: Progress | None = None) -> _Read:
    """Read a file of a directory; one unreadable file must not hide the others."""
    try:
        return _read_file(path, progress)
    except (UnreadablePath, OSError) as error:
        session = Session(path=str(path), format=NAME)
        session.warn(f"could not be read: {error}")
        return _Read(session, ClaudeCodeBuilder(str(path)))


def _nested_agent_files(session_path: Path) -> list[Path]:
    """Subagent files of the newer layout: `<session>/subagents/agent-<id>.jsonl`."""
    folder = session_path.parent / session_path.name.removesuffix(".jsonl") / "subagents"
    if not folder.is_dir():
        return []
    return [file for file in _session_files(folder) if file.name.startswith("agent-")]


def subagent_files(session_path: Path, session_id: str | None = None,
                   known: Container[Path] = ()) -> list[Path]:
    """The subagent files of a session file, in the order that decides ties between owners.

    Newer versions write them to `<session>/subagents/`; older ones beside the session as
    `agent-<id>.jsonl`, which count when their records name `session_id` (by default the
    one in the file's name). Files in `known` count without that check: a follower already
    reads them, and one being rewritten may be empty for a moment.
    """
    files = _nested_agent_files(session_path)
    if _agent_id_from_name(session_path) is not None:
        return files  # a subagent's own file: its subagents are only ever nested
    if session_id is None and _UUID.fullmatch(session_path.stem):
        session_id = session_path.stem
    if not session_id:
        return files
    loose = _loose_agents(session_path.parent)
    found = set(loose.owners.get(session_id, ()))
    for file in loose.unsized:
        try:
            if file.stat().st_size > 0 and _first_session_id(file) == session_id:
                found.add(file)
        except OSError:
            continue  # gone since the folder was listed
    if known:
        found.update(file for file in loose.every if file in known)
    files.extend(file for file in sorted(found) if file not in files)
    return files


@dataclass(slots=True)
class _LooseAgents:
    """The `agent-*.jsonl` files beside the sessions of a folder, grouped by the session id
    their first records name: listed once per folder, not once per session."""

    stamp: int
    """The folder's modification time (ns) when it was listed."""
    owners: dict[str | None, list[Path]]
    """Session id -> its agent files."""
    unsized: list[Path]
    """Agent files that were empty when listed: looked at again on each call."""
    every: list[Path]
    """Every agent file of the folder."""


_LOOSE_CACHE: dict[Path, _LooseAgents] = {}
_LOOSE_CACHE_SIZE = 16
_SETTLED_NS = 100_000_000
"""A folder listing is reused only when the folder had not changed for this long before it
was taken: file times move in coarse clock ticks, so a file created just after a listing
within the same tick would leave the folder's time as it was."""


def _loose_agents(directory: Path) -> _LooseAgents:
    """The loose agent files of a folder, from a listing reused while the folder is unchanged."""
    try:
        stamp = os.stat(directory).st_mtime_ns
    except OSError:
        return _LooseAgents(0, {}, [], [])
    cached = _LOOSE_CACHE.get(directory)
    if cached is not None and cached.stamp == stamp:
        return cached
    owners: dict[str | None, list[Path]] = {}
    unsized: list[Path] = []
    every = [file for file in _session_files(directory) if file.name.startswith("agent-")]
    for file in every:
        try:
            size = file.stat().st_size
        except OSError:
            continue
        if size == 0:
            unsized.append(file)
        else:
            owners.setdefault(_first_session_id(file), []).append(file)
    loose = _LooseAgents(stamp, owners, unsized, every)
    if time.time_ns() - stamp > _SETTLED_NS:
        if len(_LOOSE_CACHE) >= _LOOSE_CACHE_SIZE:
            del _LOOSE_CACHE[next(iter(_LOOSE_CACHE))]
        _LOOSE_CACHE[directory] = loose
    return loose


def _first_session_id(path: Path) -> str | None:
    return _head_facts(path, lines=5)[0]


def _head_facts(path: Path, lines: int = 40) -> tuple[str | None, float | None]:
    """The first session id and the first timestamp among a file's first records."""
    try:
        head = _head(path)
    except OSError:
        return None, None
    return _facts_of(head, lines)


def _facts_of(head: bytes, lines: int = 40) -> tuple[str | None, float | None]:
    """The first session id and the first timestamp among the first records of a head."""
    session_id: str | None = None
    started: float | None = None
    for line in head.split(b"\n", lines)[:lines]:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        if session_id is None and isinstance(value.get("sessionId"), str):
            session_id = value["sessionId"]
        if started is None:
            started = parse_time(value.get("timestamp"))[1]
        if session_id is not None and started is not None:
            break
    return session_id, started


def glance(file: Path) -> tuple[str | None, float | None] | None:
    """A file's first session id and start time, or None when it is no session file
    (module level, so that a process pool can run it on the files of a folder)."""
    try:
        head = _head(file)
    except OSError:
        return None
    # One read of each file's head both recognises it and dates it.
    return _facts_of(head) if not head.strip() or sniff_content(head) else None


def _revived(value: object) -> tuple[str | None, float | None] | None:
    """A kept `glance` (JSON) as `glance` gave it; ValueError for anything else."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 2 and \
            (value[0] is None or isinstance(value[0], str)) and \
            (value[1] is None or isinstance(value[1], float)):
        return value[0], value[1]
    raise ValueError(value)


def list_sessions(path: Path, mapper: Mapper = map) -> list[SessionEntry]:
    """The session files of a project folder, with their first timestamp, none of them read;
    subagent files beside their session are read with it, as `read` does.

    `mapper` runs `glance` over the folder's files: a process pool's `map` reads their
    heads in the workers, so this process only walks the folder.
    """
    if not path.is_dir():
        return [SessionEntry(key=path.name, path=path, own_file=True,
                             started=_head_facts(path)[1])]
    candidates = _session_files(path)
    # (each file's glance kept by a caller that keeps file facts: `known.mapped`)
    glanced = known.mapped(mapper, glance, candidates, "glance/claude-code", _revived)
    facts = {file: found for file, found in zip(candidates, glanced, strict=True)
             if found is not None}
    files = list(facts)
    main_ids = {facts[file][0] for file in files if not file.name.startswith("agent-")}
    entries = []
    for file in files:
        session_id, started = facts[file]
        if file.name.startswith("agent-") and session_id in main_ids:
            continue
        entries.append(SessionEntry(key=file.name, path=file, own_file=True, started=started))
    return entries + _skipped_files(path, files) + _other_folders(path)


def _other_folders(directory: Path) -> list[SessionEntry]:
    """The transcripts in a project folder's subfolders that are no session's own folder
    (`<id>/` beside `<id>.jsonl` holds its subagents): a Codex rollout or a chat export
    kept in `sub/` of a folder of Claude Code sessions is listed, never silently dropped.

    Each is listed as the folder reader lists it; a subfolder whose files hold several
    sessions each (a chat dataset) is one line saying to scan it by itself."""
    from replay.core.readers import folder

    try:
        with os.scandir(directory) as scanned:
            # The entry knows whether it is a folder: no stat per session file.
            entries = [(entry.name, _is_folder(entry)) for entry in scanned]
    except OSError:
        return []
    names = {name for name, _ in entries}
    found: list[SessionEntry] = []
    for name in sorted(name for name, is_folder in entries if is_folder):
        sub = directory / name
        if name.startswith(".") or f"{name}.jsonl" in names or not folder.sniff(sub, b""):
            continue
        listed = folder.list_sessions(sub)
        if listed is None:
            found.append(SessionEntry(
                key=name, path=sub, own_file=True,
                problem=f"skipped {sub}: its files hold several sessions each; "
                        "scan that folder by itself"))
            continue
        found.extend(replace(entry, key=f"{name}/{entry.key}") for entry in listed)
    return found


def _skipped_files(directory: Path, sessions: Iterable[Path]) -> list[SessionEntry]:
    """The `.jsonl` files of a project folder not read as sessions, each with the reason:
    listed, so that an unreadable or foreign file is said, never silently dropped."""
    from replay.core.files import kind_of, why_missing

    kept = set(sessions)
    skipped: list[SessionEntry] = []
    try:
        names = sorted(entry.name for entry in os.scandir(directory)
                       if entry.name.endswith(".jsonl"))
    except OSError:
        return []
    for name in names:
        file = directory / name
        if file in kept:
            continue
        problem = why_missing(file)
        if problem is None:
            mode = os.stat(file).st_mode
            if stat.S_ISDIR(mode):
                continue
            problem = None if stat.S_ISREG(mode) else f"a {kind_of(mode)}, not a session file"
        if problem is None:
            try:
                _head(file)
            except OSError as error:
                problem = error.strerror or str(error)
        if problem is None:
            # Transcripts of several tools gathered in one folder: a Codex or opencode file
            # beside Claude Code sessions is read by its own reader, not skipped.
            other = _other_reader(file)
            if other is not None:
                skipped.append(SessionEntry(key=name, path=file, own_file=True, format=other))
                continue
            problem = "not a Claude Code session file"
        skipped.append(SessionEntry(key=name, path=file, own_file=True,
                                    problem=f"skipped {file}: {problem}"))
    return skipped


def _other_reader(file: Path) -> str | None:
    """The name of the reader of another format that takes `file`, or None."""
    from replay.core.readers import ReaderError, detect_reader

    try:
        reader = detect_reader(file)
    except (ReaderError, OSError):
        return None
    return None if reader.name == NAME else reader.name


def _started(session: Session) -> tuple[bool, float, str]:
    started = session.started
    return started is None, started or 0.0, session.path


def _link(main: _Read, agents: Iterable[_Read]) -> None:
    """Hang each subagent under the session whose Agent/Task call started it."""
    family = [main, *agents]
    for agent in family[1:]:
        owner, call = main, None
        for candidate in family:
            if candidate is agent:
                continue
            builder = candidate.builder
            call = builder.agent_calls.get(agent.builder.agent_id or "")
            if call is None and agent.builder.first_prompt is not None:
                call = builder.prompt_calls.get(agent.builder.first_prompt)
            if call is not None:
                owner = candidate
                break
        agent.session.parent_call = call
        owner.session.sidechains.append(agent.session)
    for member in family:
        member.session.sidechains.sort(key=_started)


def _read_session_file(path: Path, progress: Progress | None) -> Session:
    return _attach_agents(path, _read_file(path, progress))


def complete(path: Path, builder: LineBuilder) -> Session:
    """Finish a session whose lines were fed to `builder` elsewhere (the app reads big files
    progressively): file-name facts and the subagent sessions beside or below it."""
    assert isinstance(builder, ClaudeCodeBuilder)
    return _attach_agents(path, _finish_file(path, builder))


def complete_alone(path: Path, builder: LineBuilder) -> Session:
    """`complete` without reading the subagent files: the file-name facts only."""
    assert isinstance(builder, ClaudeCodeBuilder)
    return _finish_file(path, builder).session


def _attach_agents(path: Path, main: _Read) -> Session:
    files = subagent_files(path, main.session.session_id)
    _link(main, [_read_or_note(file) for file in files])
    return main.session


def link_subagents(path: Path, builder: LineBuilder,
                   agents: Iterable[tuple[Path, LineBuilder]]) -> Session:
    """Hang subagent sessions under the session `builder` read from `path`, anew each call.

    For callers that keep feeding the builders themselves (a follower): `agents` pairs each
    file of `subagent_files` with the builder reading it, in that order. Earlier links of
    these sessions are replaced, so a grown subagent can be linked again. Returns the main
    session.
    """
    assert isinstance(builder, ClaudeCodeBuilder)
    session = builder.session
    if session.session_id is None and _UUID.fullmatch(path.stem):
        session.session_id = path.stem  # Claude Code names a session file after its session
    reads: list[_Read] = []
    for file, agent in agents:
        assert isinstance(agent, ClaudeCodeBuilder)
        read = _finish_file(file, agent)
        read.session.sidechains = []
        reads.append(read)
    session.sidechains = []
    _link(_Read(session, builder), reads)
    return session


def _directory_progress(progress: Progress | None, done: int, total: int) -> Progress | None:
    if progress is None:
        return None

    def report(bytes_done: int, _file_total: int) -> None:
        progress(done + bytes_done, total)

    return report


def _read_directory(directory: Path, progress: Progress | None) -> list[Session]:
    files = [file for file in _session_files(directory) if _is_session_file(file)]
    total = sum(os.path.getsize(file) for file in files)
    done = 0
    mains: list[_Read] = []
    loose: list[_Read] = []
    for file in files:
        read = _read_or_note(file, _directory_progress(progress, done, total))
        done += os.path.getsize(file)
        (loose if file.name.startswith("agent-") else mains).append(read)
    by_id = {read.session.session_id: read for read in mains if read.session.session_id}
    agents_of: dict[int, list[_Read]] = {id(read): [] for read in mains}
    for read in mains:
        files_of_agents = _nested_agent_files(Path(read.session.path))
        agents_of[id(read)].extend(_read_or_note(file) for file in files_of_agents)
    orphans: list[Session] = []
    for read in loose:
        parent = by_id.get(read.session.session_id)
        if parent is None:
            orphans.append(read.session)
        else:
            agents_of[id(parent)].append(read)
    for read in mains:
        _link(read, agents_of[id(read)])
    sessions = [read.session for read in mains] + orphans
    sessions.sort(key=_started)
    if progress is not None:
        progress(total, total)
    return sessions


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector off the objects made while reading.

    A big session is hundreds of thousands of small objects without reference cycles. The
    collector would walk them again and again as they are made, and once more when it is
    switched back on, for nothing: together about 15% of the read. Freezing and unfreezing
    moves them straight to the oldest generation, which is only walked on a full collection.

    Not when objects are frozen already: the app freezes the session on screen, and an
    unfreeze here (a session read in the background for the session list) would hand it back
    to the collector, to be walked by every full collection while the reviewer steps.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """One session for a file (with its subagents), or one per session file of a folder."""
    with _collector_paused():
        if path.is_dir():
            return _read_directory(path, progress)
        return [_read_session_file(path, progress)]


READER = Reader(
    name=NAME,
    title="Claude Code JSONL",
    sniff=sniff,
    read=read,
    builder=ClaudeCodeBuilder,
    single_session=True,
    windowed=True,
    index_turns=index_turns,
    complete=complete,
    complete_alone=complete_alone,
    list_sessions=list_sessions,
    maps_listing=True,
    priority=20,
    directories=True,
)
