"""`replay watch PATH`: follow a session headlessly, one JSON line per new empty turn."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from replay.arguments import add_format, add_rules, add_timing
from replay.commands._common import EXIT_BAD_INPUT, EXIT_OK, say_error
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, EmptyTurn
from replay.core.files import why_missing
from replay.core.live.folder import FolderFollower, FolderPoll
from replay.core.live.follow import (
    FollowUpdate,
    SessionFollower,
    iso_time,
    turn_brief,
)
from replay.core.readers import ReaderError
from replay.core.readers.spool import follow_refusal
from replay.core.safe import json_line, json_path
from replay.core.suggest import default_suggester

NAME = "watch"
HELP = "follow a growing session: one JSON line per new empty turn, stall and resumption"

EPILOG = """\
One JSON line per event, each with "event", "path" and "session_id":

  empty     an empty turn, once complete: the fields of an element of `replay scan --json`'s
            empty_turns (index from 0, number = the #N the app shows, id, role,
            timestamp, reason, evidence, suggestion); with --missing-replies also a
            request's missing reply (reason no-reply, "placeholder": "#N+", id
            "<request id>+no-reply", index and number of the request)
  retract   a turn printed as empty now shows content, or a missing reply printed
            came after all (index, number, id, role)
  stalled   nothing was written for --stall seconds while a reply was due: "since" (time
            of the last write) and "last_turn" (index, number, id, role, timestamp)
  resumed   writing began again after a stall: "since", "duration" (seconds), "last_turn"

A turn is complete when its format says so: a Claude Code user line at once, an assistant
message once it has a stop reason or another record follows it, opencode on its completion
time or an error, Codex by its own closing records, a user message written as several
records after --settle seconds of quiet. A message still being written (a thinking line
with nothing after it yet) is never printed as empty, however long the pause: if nothing
follows it, that is a stall. Bookkeeping between a reply's lines (queue operations,
attachments, progress, snapshots, system records, Codex token counts) completes nothing. A
session that ended (/exit, a final reply with its stop reason, a Codex task complete, an
opencode completed message) never stalls. On Ctrl-C or SIGTERM the empty turns already
complete are printed first, then watch stops.

A folder (a Claude Code project folder or ~/.claude/projects, ~/.codex/sessions, an
opencode data folder, a folder of exports) is followed as a whole: every line names its
session by "path" and "session_id"; sessions started after watching began are read from
their first line, the ones already there only once written again (then only what is new
is printed, and an old session is never reported as stalled). A file that vanishes, is
truncated or replaced, or a folder that cannot be read is one line on stderr."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the watch arguments."""
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("path", metavar="PATH", nargs="?",
                        help="session file, folder of sessions or database (the file may still "
                             "be empty)")
    # Its own dest: `--local` of the other commands turns into the sessions found, this one
    # into the folders they are written in (sessions started later included).
    parser.add_argument("--local", dest="watch_local", action="store_true",
                        help="follow every session folder found on this machine (Claude Code, "
                             "Codex, opencode, Gemini CLI: see `replay sessions`)")
    parser.add_argument("--from-start", action="store_true",
                        help="also print the empty turns already there")
    add_format(parser)
    parser.add_argument("--session", metavar="ID",
                        help="for a database, directory or file holding several sessions: the one "
                             "to follow (default: a folder follows all its sessions, a file or "
                             "database the newest when watching starts)")
    add_rules(parser, missing_replies="also report a request that got no reply (reason "
                                      "no-reply, the placeholder #N+), once a cancel, an "
                                      "error, an interrupt or the next request shows that none "
                                      "is coming")
    add_timing(parser)


def _line(update: FollowUpdate, event: str, fields: dict[str, Any]) -> bytes:
    session = update.session
    record: dict[str, Any] = {"event": event, **fields}
    record.update(json_path(session.path if session is not None else None))
    record["session_id"] = session.session_id if session is not None else None
    return json_line(record)


def empty_line(update: FollowUpdate, empty: EmptyTurn) -> bytes:
    """One `empty` line: the scan --json element plus where it comes from."""
    return _line(update, "empty", empty.to_json())


def event_lines(update: FollowUpdate) -> list[bytes]:
    """Every line an update gives, in the order things happened."""
    lines: list[bytes] = []
    resumed = update.resumed
    if resumed is not None:
        lines.append(_line(update, "resumed", {
            "since": iso_time(resumed.since), "duration": round(resumed.duration, 3),
            "last_turn": turn_brief(resumed.turn)}))
    for taken in update.retracted:
        lines.append(_line(update, "retract", {
            "index": taken.index, "number": taken.index + 1, "id": taken.id,
            "role": taken.role}))
    lines.extend(empty_line(update, empty) for empty in update.new_empty)
    stalled = update.stalled
    if stalled is not None:
        lines.append(_line(update, "stalled", {
            "since": iso_time(stalled.since), "last_turn": turn_brief(stalled.turn)}))
    return lines


def _print(update: FollowUpdate, *, empties: bool = True) -> None:
    if not empties:
        update.new_empty = []
    lines = event_lines(update)
    if not lines:
        return
    out = sys.stdout.buffer
    out.write(b"".join(lines))
    out.flush()


def _print_folder(news: FolderPoll) -> None:
    for problem in news.problems:
        say_error(problem)
    lines = [line for item in news.updates for line in event_lines(item.update)]
    if lines:
        out = sys.stdout.buffer
        out.write(b"".join(lines))
        out.flush()


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    _stop_when_the_reader_leaves(stop)
    return stop


def _stop_when_the_reader_leaves(stop: threading.Event) -> None:
    """Set `stop` when standard output is a pipe whose reader went away (`watch | head -1`).

    A follower writes only when something happens, so a closed pipe would otherwise go
    unnoticed for as long as the session is quiet (as `tail -f | head` did before it learnt
    to look). Polling the pipe's write end for nothing reports only its error.
    """
    import select
    import stat

    try:
        descriptor = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(descriptor).st_mode):
            return  # a file or a terminal: nothing to notice
    except (OSError, ValueError):
        return
    poller = select.poll()
    poller.register(descriptor, 0)  # POLLERR and POLLHUP are reported whatever is asked

    def wait() -> None:
        try:
            while not poller.poll():
                pass
        except OSError:
            return
        stop.set()

    threading.Thread(target=wait, name="watch-reader", daemon=True).start()


def watch_folders(roots: list[Path], args: argparse.Namespace, rules: DetectionRules) -> int:
    """Follow every session under `roots` (folders, or the sessions the machine holds)."""
    from replay.watching import follow_folder_forever

    folder = FolderFollower(roots, args.format, rules=rules, suggester=default_suggester(),
                            settle=args.settle, stall=args.stall, from_start=args.from_start)
    stop = _stop_on_signals()
    try:
        _print_folder(folder.poll())
        follow_folder_forever(folder, _print_folder, stop)
        # Stopped: what was written since the last wake-up may complete an empty turn.
        _print_folder(folder.poll())
    finally:
        folder.close()
    return EXIT_OK


def _watch_local(args: argparse.Namespace, rules: DetectionRules) -> int:
    """`watch --local`: every folder the machine's agents write sessions in (and PATH)."""
    from replay.core.discovery import discovery_roots, looked_in

    roots = discovery_roots()
    if args.path is not None:
        roots.insert(0, Path(args.path))
    if not roots:
        say_error(f"--local: no session folder found on this machine (looked in {looked_in()})")
        return EXIT_BAD_INPUT
    return watch_folders(roots, args, rules)


def run(args: argparse.Namespace) -> int:
    """Follow until SIGINT or SIGTERM; exit 2 for a path or format that cannot be read."""
    from replay.watching import follow_forever

    rules = DEFAULT_RULES.with_options(tool_only_is_empty=args.tool_only,
                                       missing_replies=args.missing_replies)
    if args.watch_local:
        return _watch_local(args, rules)
    if args.path is None:
        say_error("give a PATH (a session file, a folder or a database), or --local")
        return EXIT_BAD_INPUT
    refusal = follow_refusal(args.path)
    if refusal:
        say_error(refusal)
        return EXIT_BAD_INPUT
    path = Path(args.path)
    missing = why_missing(path)
    if missing or not (path.is_dir() or path.is_file()):
        say_error(f"{path}: {missing or 'not a file or folder that can be followed'}")
        return EXIT_BAD_INPUT
    if path.is_dir() and args.session is None:
        return watch_folders([path], args, rules)
    try:
        follower = SessionFollower(path, args.format, rules=rules, suggester=default_suggester(),
                                   session_id=args.session, settle=args.settle,
                                   stall=args.stall)
        first = follower.poll()
    except ReaderError as error:
        say_error(str(error))
        return EXIT_BAD_INPUT
    except OSError as error:
        say_error(f"{path}: {error.strerror or error}")
        return EXIT_BAD_INPUT
    stop = _stop_on_signals()
    try:
        _print(first, empties=args.from_start)
        follow_forever(follower, _print, stop)
        # Stopped: what was written since the last wake-up may complete an empty turn.
        _print(follower.poll())
    except ReaderError as error:
        say_error(str(error))
        return EXIT_BAD_INPUT
    finally:
        follower.close()
    return EXIT_OK
