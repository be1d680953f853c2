"""Following every session under some folders at once: sessions started later included.

`FolderFollower` keeps one `SessionFollower` per session it has seen change, found by
walking its roots (a Claude Code project folder or `~/.claude/projects` as a whole, Codex's
`sessions/YYYY/MM/DD/` tree where a new day's folder appears, an opencode data folder or
storage tree, a folder of exports). The roots are a list, so the sessions discovered on the
whole machine are followed the same way as one folder.

What was there when watching began is old: a session file that existed then is only read
once it changes, and then only what it held at the start is read first and judged quietly
(`SessionFollower.poll(upto=...)`), so none of its old empty turns is reported and an old
session is never reported as stalled. A file that appears later is a new session, followed
from its first byte. A multi-session source (an opencode database or storage tree) follows
its newest session and every session created after watching began.

Bad input never stops the watch: a file that vanishes, that no reader takes, that is
truncated or replaced, or a folder that cannot be read gives one line in `problems`.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, Suggester
from replay.core.live.completion import DEFAULT_SETTLE, DEFAULT_STALL
from replay.core.live.folder_units import (
    SessionFile,
    SessionSource,
    is_sidechain,
    linked_folder,
    source_reader,
    stat_key,
    stat_now,
)
from replay.core.live.follow import READ_ERRORS, FollowUpdate, SessionFollower
from replay.core.readers import ReaderError
from replay.core.readers.base import Reader
from replay.core.readers.folder import is_candidate

MAX_DEPTH = 6
"""How deep under a root sessions are looked for (`sessions/2026/12/01/x.jsonl` is 4)."""

LINE_SUFFIXES = frozenset({".jsonl", ".ndjson"})
"""Files read record by record: an old one is read lazily, up to its size at the start."""

@dataclass(slots=True)
class SessionUpdate:
    """What one poll found for one session of the folder."""

    key: str
    """The session's place: its file, or `<source>#<session id>`."""
    update: FollowUpdate
    """The follower's update (its `session` names the session: path and id)."""
    started: bool = False
    """The session appeared after watching began, and this is its first update."""


@dataclass(slots=True)
class FolderPoll:
    """What one `FolderFollower.poll` or `tick` found."""

    updates: list[SessionUpdate] = field(default_factory=list)
    """Sessions with news, in the order they were looked at."""
    problems: list[str] = field(default_factory=list)
    """One line per thing that went wrong (a file gone, unreadable, not a transcript)."""


class FolderFollower:
    """Follows every session under `roots`; `poll()` says what is new, session by session.

    Args:
        roots: folders (or session files, databases) to follow; the list the discovery of
            the machine's sessions gives works as is.
        from_start: also report the empty turns already there (every session is read now).
        The rest as for `SessionFollower`.
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        format: str | None = None,  # noqa: A002 - the name `--format` uses
        *,
        rules: DetectionRules = DEFAULT_RULES,
        suggester: Suggester | None = None,
        settle: float = DEFAULT_SETTLE,
        stall: float = DEFAULT_STALL,
        clock: Any = time.time,
        from_start: bool = False,
    ) -> None:
        self.roots = [Path(root).absolute() for root in roots]
        self.format = format
        self.rules = rules
        self.suggester = suggester
        self.settle = settle
        self.stall = stall
        self.clock = clock
        self.from_start = from_start
        self.files: dict[Path, SessionFile] = {}
        self.sources: dict[Path, SessionSource] = {}
        self._kinds: dict[Path, Reader | None] = {}
        self._unreadable: set[Path] = set()
        self._missing: set[Path] = set()
        self._said: set[Path] = set()
        """Entries that are no session file, said once."""
        self._started = False

    # -- what is followed ------------------------------------------------------------------

    def _follower(self, path: Path, session_id: str | None = None, *,
                  quiet: bool) -> SessionFollower:
        return SessionFollower(path, self.format, rules=self.rules, suggester=self.suggester,
                               session_id=session_id, settle=self.settle, stall=self.stall,
                               clock=self.clock, quiet_start=quiet)

    def followers(self) -> list[tuple[str, SessionFollower]]:
        """Every session followed so far (those written since watching began), with its key."""
        found = [(str(path), unit.follower) for path, unit in self.files.items()
                 if unit.follower is not None]
        for path, source in self.sources.items():
            found.extend((f"{path}#{sid}", follower) for sid, follower in source.followers.items())
        return found

    def newest(self) -> tuple[str, SessionFollower] | None:
        """The session written last (the one the agent is working in now), if any."""
        best: tuple[float, str, SessionFollower] | None = None
        for key, follower in self.followers():
            if follower.session is None:
                continue
            stamp = follower.last_write
            if best is None or stamp > best[0]:
                best = (stamp, key, follower)
        return None if best is None else (best[1], best[2])

    def follower_of(self, key: str) -> SessionFollower | None:
        """The follower of a session key, if that session is followed."""
        return dict(self.followers()).get(key)

    def open_newest(self) -> SessionUpdate | None:
        """Follow the session written last as a whole (to show it), and say what it holds:
        the update of its first full read (every turn in `new_turns`). None while the
        folder holds no session yet. Call after the first `poll`."""
        candidates: list[tuple[float, str]] = []
        for path, unit in self.files.items():
            if not unit.skipped and unit.stat is not None and unit.stat[1] > 0:
                candidates.append((unit.stat[2] / 1e9, str(path)))
        for key, follower in self.followers():
            if "#" in key and follower.session is not None:
                candidates.append((follower.last_write, key))
        for _stamp, key in sorted(candidates, reverse=True):
            opened = self._open_whole(key)
            if opened is not None:
                return opened
        return None

    def _open_whole(self, key: str) -> SessionUpdate | None:
        unit = self.files.get(Path(key))
        if unit is None:
            follower = self.follower_of(key)
            if follower is None or follower.session is None:
                return None
            update = FollowUpdate(follower.session, new_turns=list(follower.session.turns),
                                  pending=follower.pending, stalled=follower.stalled)
            return SessionUpdate(key, update)
        if unit.follower is not None:
            session = unit.follower.session
            if session is None:
                return None
            update = FollowUpdate(session, new_turns=list(session.turns),
                                  pending=unit.follower.pending, stalled=unit.follower.stalled)
            return SessionUpdate(key, update)
        follower = unit.follower = self._follower(unit.path, quiet=unit.start_stat is not None)
        problems = FolderPoll()
        update = self._guarded(unit, follower.poll, problems)
        unit.look()
        if update is None or update.session is None:
            unit.follower = None if update is None else unit.follower
            return None
        unit.announced = True
        return SessionUpdate(key, update)

    # -- walking the roots -----------------------------------------------------------------

    def _source_at(self, path: Path) -> Reader | None:
        if path not in self._kinds:
            self._kinds[path] = source_reader(path)
        return self._kinds[path]

    def _add_source(self, path: Path, reader: Reader, seen: set[Path]) -> None:
        seen.add(path)
        if path not in self.sources:
            self.sources[path] = SessionSource(path, reader)

    def _walk(self, directory: Path, depth: int, seen: set[Path], found: FolderPoll) -> None:
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except FileNotFoundError:
            return
        except OSError as error:
            if directory not in self._unreadable:
                self._unreadable.add(directory)
                found.problems.append(f"{directory}: cannot be read ({error.strerror or error}); "
                                      "the rest is still watched")
            return
        if directory in self._unreadable:
            self._unreadable.discard(directory)
            found.problems.append(f"{directory}: readable again")
        names = {entry.name for entry in entries}
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or is_sidechain(path, names):
                continue
            try:
                # Linked folders are not followed (a link to a parent would loop).
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                reader = self._source_at(path)
                if reader is not None:
                    self._add_source(path, reader, seen)
                elif depth < MAX_DEPTH:
                    self._walk(path, depth + 1, seen, found)
                continue
            if not is_candidate(path) or linked_folder(path):
                continue
            if path in self.files:
                seen.add(path)
                continue
            status = self._regular(path, found)
            if status is None:
                continue
            if path.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
                reader = self._source_at(path)
                if reader is not None:
                    self._add_source(path, reader, seen)
                continue
            seen.add(path)
            self.files[path] = SessionFile(path, stat_key(status), old=not self._started)

    def _regular(self, path: Path, found: FolderPoll) -> os.stat_result | None:
        """The stat of a regular file (through a link); else None, said once: a FIFO would
        block the reader, a device or socket holds no session, a dangling link nothing."""
        try:
            status = os.stat(path)
        except OSError as error:
            problem = f"skipped {path}: {error.strerror or error}"
        else:
            if stat.S_ISREG(status.st_mode):
                return status
            problem = f"skipped {path}: not a regular file (a FIFO, device or socket)"
        if path not in self._said:
            self._said.add(path)
            found.problems.append(problem)
        return None

    def _scan(self, found: FolderPoll) -> set[Path]:
        """Look through every root; returns the sessions' paths seen."""
        seen: set[Path] = set()
        for root in self.roots:
            if root in self._missing and root.exists():
                self._missing.discard(root)
                found.problems.append(f"{root}: there again; watching it")
            if root.is_dir():
                reader = self._source_at(root)
                if reader is not None:
                    self._add_source(root, reader, seen)
                else:
                    self._walk(root, 0, seen, found)
            elif root.exists():
                seen.add(root)
                if root not in self.files:
                    self.files[root] = SessionFile(root, stat_now(root), old=not self._started)
            elif root not in self._missing:
                self._missing.add(root)
                found.problems.append(f"{root}: not found; watching for it")
        return seen

    def _root_of(self, path: Path) -> Path | None:
        for root in self.roots:
            if path == root or root in path.parents:
                return root
        return None

    def _add_paths(self, paths: list[Path], found: FolderPoll) -> list[SessionFile | SessionSource]:
        """Take in new files and folders the file system named; returns the sessions added.

        A folder is walked (from its depth under its root); a file is added when it is a
        session candidate and no subagent file; a path gone already is left to the walk of
        the idle poll.
        """
        before = set(self.files) | set(self.sources)
        for path in dict.fromkeys(paths):
            root = self._root_of(path)
            if root is None or any(part.startswith(".") for part in
                                   path.relative_to(root).parts):
                continue
            depth = len(path.relative_to(root).parts)
            try:
                is_dir = path.is_dir() and not path.is_symlink()
            except OSError:
                is_dir = False
            if is_dir:
                if depth == 0 or self._inside_session(path):
                    continue
                reader = self._source_at(path)
                if reader is not None:
                    self._add_source(path, reader, set())
                elif depth <= MAX_DEPTH:
                    self._walk(path, depth, set(), found)
                continue
            if (path in self.files or not is_candidate(path) or self._inside_session(path)
                    or path.name.startswith("agent-") or not os.path.lexists(path)
                    or linked_folder(path)):
                continue
            status = self._regular(path, found)
            if status is None:
                continue
            if path.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
                reader = self._source_at(path)
                if reader is not None:
                    self._add_source(path, reader, set())
                continue
            self.files[path] = SessionFile(path, stat_key(status), old=False)
        added = [key for key in [*self.files, *self.sources] if key not in before]
        return [self.files[key] if key in self.files else self.sources[key] for key in added]

    def _inside_session(self, path: Path) -> bool:
        """True under a Claude Code session's own folder (its subagents) or a source."""
        for parent in path.parents:
            if parent in self.roots:
                return False
            if parent in self.sources or parent.name == "subagents" or \
                    parent.with_name(parent.name + ".jsonl").is_file():
                return True
        return False

    def _owner(self, changed: str) -> SessionFile | SessionSource | None:
        """The session a changed path belongs to (its file, a subagent file of it, a part
        of a source); None for a path nothing known holds (a new file or folder)."""
        path = Path(changed)
        unit = self.files.get(path)
        if unit is not None:
            return unit
        for source in self.sources.values():
            if source.owns(changed):
                return source
        for parent in list(path.parents)[:3]:
            unit = self.files.get(parent.with_name(parent.name + ".jsonl"))
            if unit is not None:
                return unit  # `<session>/subagents/agent-x.jsonl`
        return None

    # -- polling ---------------------------------------------------------------------------

    def poll(self, changed: Iterable[str] | None = None, *, final: bool = False) -> FolderPoll:
        """Read what changed and report it, session by session.

        Args:
            changed: paths the file system said changed; only the sessions they belong to
                are read (a path nothing known holds makes the roots be walked again).
                None walks the roots and looks at every session (the idle poll).
            final: the watch is ending: last lines without a newline are read too.
        """
        found = FolderPoll()
        first = not self._started
        files: list[SessionFile]
        sources: list[SessionSource]
        if changed is None or first:
            seen = self._scan(found)
            self._forget_gone(seen, found)
            files = list(self.files.values())
            sources = list(self.sources.values())
            look_all = True
        else:
            changed = list(changed)
            owners = [self._owner(path) for path in changed]
            unknown = [Path(path) for path, owner in zip(changed, owners, strict=True)
                       if owner is None]
            if unknown:
                # Only where the change is (a new file, a new day's folder): walking a tree
                # of thousands of sessions for each new file would cost 100+ ms.
                known = set(owners)
                added = self._add_paths(unknown, found)
                owners = [owner for owner in owners if owner is not None]
                owners.extend(unit for unit in added if unit not in known)
            files = list(dict.fromkeys(o for o in owners if isinstance(o, SessionFile)))
            sources = list(dict.fromkeys(o for o in owners if isinstance(o, SessionSource)))
            look_all = False
        self._started = True
        for unit in files:
            self._poll_file(unit, first, look_all, found, final)
        for source in sources:
            self._poll_source(source, first, found, final)
        return found

    def _forget_gone(self, seen: set[Path], found: FolderPoll) -> None:
        for path in [path for path in self.files if path not in seen]:
            if path.exists():
                continue
            unit = self.files.pop(path)
            if unit.follower is not None:
                unit.follower.close()
                if unit.follower.session is not None:
                    found.problems.append(f"{path}: gone (deleted or moved); "
                                          "the folder is still watched")
        for path in [path for path in self.sources if path not in seen]:
            if not path.exists():
                source = self.sources.pop(path)
                for follower in source.followers.values():
                    follower.close()
                found.problems.append(f"{path}: gone (deleted or moved); "
                                      "the folder is still watched")

    def _poll_file(self, unit: SessionFile, first: bool, look_all: bool, found: FolderPoll,
                   final: bool) -> None:
        if unit.skipped:
            return
        follower = unit.follower
        changed = unit.look()
        if follower is None:
            baseline = unit.baseline
            old = baseline is not None and not self.from_start
            if old and unit.path.suffix.lower() in LINE_SUFFIXES and unit.stat == unit.start_stat:
                return  # an old session, untouched since watching began: not read at all
            follower = unit.follower = self._follower(unit.path, quiet=baseline is not None)
            if old:
                # What it held when watching began: read and judged, never reported.
                upto = baseline if unit.path.suffix.lower() in LINE_SUFFIXES else None
                if self._guarded(unit, lambda: follower.poll(upto=upto), found) is None:
                    return
                if upto is None:
                    return
        elif look_all and not changed:
            return  # nothing written: a stat was enough
        update = self._guarded(unit, lambda: follower.poll(final=final), found)
        if update is None:
            return
        if update.reset and not first:
            found.problems.append(f"{unit.path}: truncated or replaced; read again from its start")
        started = unit.start_stat is None and not unit.announced and update.session is not None
        if started:
            unit.announced = True
        if update.has_news or started:
            found.updates.append(SessionUpdate(str(unit.path), update, started))

    def _guarded(self, unit: SessionFile, call: Any, found: FolderPoll) -> FollowUpdate | None:
        try:
            return call()
        except ReaderError as error:
            unit.skipped = True
            found.problems.append(f"skipped {error}")
        except READ_ERRORS as error:
            found.problems.append(f"{unit.path}: {getattr(error, 'strerror', None) or error}; "
                                  "tried again on its next change")
        return None

    def _poll_source(self, source: SessionSource, first: bool, found: FolderPoll,
                     final: bool) -> None:
        stamp = source.listing_stamp()
        changed = stamp != source.listed
        if changed:
            try:
                ids = source.session_ids()
            except (ReaderError, *READ_ERRORS) as error:
                if not source.failed:
                    source.failed = True
                    found.problems.append(f"{source.path}: {error}; tried again on its next "
                                          "change")
                return
            source.failed = False
            source.listed = stamp
            if source.known is None:
                source.known = set(ids)
                for sid in ids if self.from_start else ids[-1:]:
                    source.followers[sid] = self._follower(source.path, sid,
                                                           quiet=not self.from_start)
            for sid in ids:
                if sid not in source.known:
                    source.known.add(sid)
                    source.new.add(sid)
                    source.followers[sid] = self._follower(source.path, sid, quiet=False)
        if not self.from_start:
            # An older session that gets a message (opencode -c), in a storage tree or a
            # database: followed from now on, and what it held at the start is not reported.
            continued = source.look_at_messages()
            if changed:
                try:
                    continued += source.look_at_database()
                except (ReaderError, *READ_ERRORS) as error:
                    found.problems.append(f"{source.path}: {error}; tried again on its next "
                                          "change")
            for sid in continued:
                if sid in source.known and sid not in source.followers:
                    source.resumed.add(sid)
                    source.followers[sid] = self._follower(source.path, sid, quiet=True)
        for sid, follower in source.followers.items():
            key = f"{source.path}#{sid}"
            was_read = follower.session is not None
            try:
                update = follower.poll(final=final)
            except (ReaderError, *READ_ERRORS) as error:
                found.problems.append(f"{key}: {error}; tried again on its next change")
                continue
            if not was_read and sid in source.resumed:
                there = source.start_messages.get(sid, frozenset())
                update.new_empty = [empty for empty in update.new_empty
                                    if empty.id.split("+", 1)[0] not in there]
            elif not was_read and not self.from_start and sid not in source.new:
                update.new_empty = []  # there before watching began
            started = sid in source.new and update.session is not None
            if started:
                source.new.discard(sid)
            if update.has_news or started:
                found.updates.append(SessionUpdate(key, update, started))

    def tick(self) -> FolderPoll:
        """Judge what only time changes (quiet times, stalls) in every followed session."""
        found = FolderPoll()
        for key, follower in self.followers():
            update = follower.tick()
            if update.has_news:
                found.updates.append(SessionUpdate(key, update))
        return found

    def close(self) -> None:
        """Release open files."""
        for _key, follower in self.followers():
            follower.close()


__all__ = ["FolderFollower", "FolderPoll", "SessionUpdate"]
