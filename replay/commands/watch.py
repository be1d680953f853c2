"""`replay watch PATH`: follow a session headlessly, one JSON line per new empty turn."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from replay.commands._common import EXIT_BAD_INPUT, EXIT_OK, say_error
from replay.core.detect import DEFAULT_RULES, EmptyTurn
from replay.core.files import why_missing
from replay.core.follow import FollowUpdate, SessionFollower
from replay.core.readers import ReaderError
from replay.core.safe import json_line, json_path
from replay.core.spool import follow_refusal
from replay.core.suggest import default_suggester

NAME = "watch"
HELP = "follow a growing session and print one JSON line per new empty turn"

EPILOG = """\
Each line is an element of `replay scan --json`'s empty_turns (index from 0, number = the
#N the app shows, id, role, timestamp, reason, evidence, suggestion) plus "path" and
"session_id". A turn is printed once it is
complete: when a later turn exists, or (opencode) when its reply has a completion time; so
an empty last turn waits for what follows it. Stops quietly on Ctrl-C or SIGTERM."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the watch arguments."""
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("path", metavar="PATH",
                        help="session file, directory or database (the file may still be empty)")
    parser.add_argument("--from-start", action="store_true",
                        help="also print the empty turns already there")
    parser.add_argument("--format", metavar="NAME", help="skip detection and read as this format")
    parser.add_argument("--session", metavar="ID",
                        help="for a database, directory or file holding several sessions: the one "
                             "to follow (default: the newest when watching starts)")
    parser.add_argument("--tool-only", action="store_true",
                        help="also count assistant turns that only call tools as empty")


def empty_line(update: FollowUpdate, empty: EmptyTurn) -> bytes:
    """One output line: the scan --json element plus where it comes from."""
    session = update.session
    record = empty.to_json()
    record.update(json_path(session.path if session is not None else None))
    record["session_id"] = session.session_id if session is not None else None
    return json_line(record)


def _print(update: FollowUpdate) -> None:
    if not update.new_empty:
        return
    out = sys.stdout.buffer
    for empty in update.new_empty:
        out.write(empty_line(update, empty))
    out.flush()


def run(args: argparse.Namespace) -> int:
    """Follow until SIGINT or SIGTERM; exit 2 for a path or format that cannot be read."""
    from replay.watching import follow_forever

    refusal = follow_refusal(args.path)
    if refusal:
        say_error(refusal)
        return EXIT_BAD_INPUT
    path = Path(args.path)
    missing = why_missing(path)
    if missing or not (path.is_dir() or path.is_file()):
        say_error(f"{path}: {missing or 'not a file or folder that can be followed'}")
        return EXIT_BAD_INPUT
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=args.tool_only)
    try:
        follower = SessionFollower(path, args.format, rules=rules, suggester=default_suggester(),
                                   session_id=args.session)
        first = follower.poll()
    except ReaderError as error:
        say_error(str(error))
        return EXIT_BAD_INPUT
    except OSError as error:
        say_error(f"{path}: {error.strerror or error}")
        return EXIT_BAD_INPUT
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        if args.from_start:
            _print(first)

        def report(update: FollowUpdate) -> None:
            _print(update)

        follow_forever(follower, report, stop)
    except ReaderError as error:
        say_error(str(error))
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader of our output went away (`| head`): nothing left to say, and nowhere to.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        follower.close()
    return EXIT_OK
