"""`replay sessions`: every agent's sessions on this machine, newest first, with their counts."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timedelta
from typing import Any

from replay.arguments import add_rules, positive_int
from replay.commands._common import EXIT_OK, say_error, stderr_progress, table_console
from replay.core.corpus.pool import default_jobs, local_pool
from replay.core.safe import escape_controls, json_line
from replay.core.session.text import one_line

NAME = "sessions"
HELP = ("list the sessions of Claude Code, Codex, opencode and Gemini CLI found on this "
        "machine, newest first, with turn and empty-turn counts")

EPILOG = """\
Where replay looks (each tool's own override variable first):
  Claude Code  $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects
  Codex        $CODEX_HOME/sessions and archived_sessions, else ~/.codex/...
  opencode     $XDG_DATA_HOME/opencode (opencode.db, storage/), else ~/.local/share/opencode
  Gemini CLI   $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp

Any command that takes a PATH also takes a session id from this list, or the first 6 or
more characters of one that no other session shares."""

_RELATIVE = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_date(text: str) -> datetime:
    """An argparse type: `2026-11-30`, `2026-11-30T14:00`, or `3d`, `12h`, `2w` ago."""
    relative = _RELATIVE.match(text.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        return datetime.now().astimezone() - timedelta(**{_UNITS[unit]: amount})
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a date (2026-11-30, 2026-11-30T14:00) or an age (3d, 12h, 2w), "
            f"got {text!r}") from None
    return moment if moment.tzinfo else moment.astimezone()


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the sessions arguments."""
    from replay.core.discovery import AGENTS

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per session per line")
    parser.add_argument("--agent", metavar="NAME", choices=AGENTS, action="append",
                        help=f"only this agent's sessions (repeatable): {', '.join(AGENTS)}")
    parser.add_argument("--project", metavar="TEXT",
                        help="only sessions whose working directory contains TEXT")
    parser.add_argument("--since", metavar="DATE", type=since_date,
                        help="only sessions written since DATE (2026-11-30, 2026-11-30T14:00, "
                             "or an age: 3d, 12h, 2w)")
    add_rules(parser, tool_only="count assistant turns that only call tools as empty too "
                                "(the config's tool_only_is_empty, as the app counts)",
              missing_replies="count a request that got no reply as a stop too (the "
                              "config's missing_replies, as the app counts)")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="count every session again, neither using nor updating the scan "
                             "cache that scan, report and review share")
    parser.add_argument("--jobs", "-j", type=positive_int, metavar="N", default=None,
                        help="sessions counted at once, one process each (default: the "
                             f"number of cores, {default_jobs()} here)")


def run(args: argparse.Namespace) -> int:
    """List, filter, count and print."""
    from replay.core.discovery import discover, since

    found = discover(agents=args.agent)
    sessions = found.sessions
    if args.project:
        needle = args.project.casefold()
        sessions = [s for s in sessions if needle in (s.project or "").casefold()]
    if args.since is not None:
        sessions = since(sessions, args.since)
    if not sessions:
        what = "no sessions found" if not found.sessions else "no session matches"
        say_error(f"{what} (looked in {found.looked_in})")
        return EXIT_OK
    rows = _counted(sessions, args.jobs or default_jobs(), args.cache,
                    [place.path for place in found.places], rules_of(args), found.sessions)
    progress = stderr_progress("counting turns")
    if progress is not None and not args.json:
        rows = _reporting(rows, len(sessions), progress)
    if args.json:
        for row in rows:
            sys.stdout.buffer.write(json_line(row))
            sys.stdout.flush()
    else:
        print_table(list(rows))
    return EXIT_OK


def _reporting(rows: Any, total: int, progress: Any) -> Any:
    """The rows, saying on stderr how many are counted (the table waits for them all)."""
    for done, row in enumerate(rows, start=1):
        progress(done, total)
        yield row


def rules_of(args: argparse.Namespace) -> Any:
    """The detection rules the counts use: the config's, as the app's list counts with (so
    both lists share the cache's rows), each flag turning its rule on."""
    from replay.config import load_settings
    from replay.core.detection.empty import DEFAULT_RULES

    settings = load_settings().settings
    return DEFAULT_RULES.with_options(
        tool_only_is_empty=bool(getattr(args, "tool_only", False))
        or settings.tool_only_is_empty,
        missing_replies=bool(getattr(args, "missing_replies", False))
        or settings.missing_replies)


def _counted(sessions: list[Any], jobs: int, cache: bool = True,
             roots: list[Any] | None = None, rules: Any = None,
             every: list[Any] | None = None) -> Any:
    """Each session's `--json` object, counted as the app's session list counts under
    `rules` (default: the product's), through the rows of the scan cache it shares with the
    app and `scan`, unless `cache` is False; the rows of files gone from `roots` (the
    places looked in, where `every` session was found) are dropped."""
    from replay.core.detection.empty import DEFAULT_RULES
    from replay.core.discovery.counts import count_found

    jobs = min(jobs, len(sessions))
    with local_pool(jobs) as pool:
        for session, counted in count_found(sessions, rules or DEFAULT_RULES, jobs, pool,
                                            cache=cache, warn=say_error, roots=roots or [],
                                            every=every):
            yield row_of(session, counted)


def row_of(session: Any, counted: Any) -> dict[str, Any]:
    """One `replay sessions --json` object: the listing, and the counts of its summary."""
    row = session.to_json()
    summary = counted.summary
    if summary is not None:
        row["title"] = row["title"] or summary.title
        row["session_id"] = row["session_id"] or summary.session_id
        row["turns"] = summary.turns
        row["empty"] = summary.empty
        row["skipped"] = summary.skipped
    else:
        row["turns"] = row["empty"] = row["skipped"] = None
        if counted.error is not None and row["problem"] is None:
            row["problem"] = counted.error
    return row


def _when(value: str | None) -> str:
    if not value:
        return ""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone() \
        .strftime("%Y-%m-%d %H:%M")


def human_size(size: int | None) -> str:
    """`812 B`, `14 KB`, `3.2 MB`, `1.1 GB`."""
    if size is None:
        return ""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} B"


SHORT_ID = 13
"""Characters of an id a narrow table shows: enough to open it by (`replay <prefix>`)."""


def tail(text: str, width: int) -> str:
    """The end of a long path (where the project's own name is), `…` in front."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def print_table(rows: list[dict[str, Any]]) -> None:
    """The sessions as a table; an unreadable one greyed, with its reason as its title.

    Under 150 columns the format, start and size columns are left out and ids shortened to a
    prefix that still opens them (`--json` has everything)."""
    from rich.table import Table
    from rich.text import Text

    console = table_console()
    wide = console.width >= 150
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", expand=True)
    columns = ["agent", "format", "session", "title", "project", "started", "written",
               "size", "turns", "empty"]
    if not wide:
        columns = [name for name in columns if name not in ("format", "started", "size")]
    lines = []
    for row in rows:
        problem = row["problem"]
        style = "dim" if problem else ""
        reason = (problem or "").removeprefix("skipped ").removeprefix(f"{row['path']}: ")
        title = f"unreadable: {reason}" if problem else (row["title"] or "")
        session_id = row["session_id"] or ""
        if not wide and len(session_id) > SHORT_ID:
            session_id = session_id[:SHORT_ID - 1] + "…"
        empty = row["empty"]
        cells = {
            "agent": Text(row["agent"] if wide else row["agent"].split("-")[0], style=style),
            "format": Text(row["format"] or "", style=style),
            "session": Text(escape_controls(session_id), style=style),
            "title": Text(escape_controls(one_line(title, 200)),
                          style="dim italic" if problem else ""),
            "project": Text(escape_controls(tail(row["project"] or "", 36)), style="dim"),
            "started": Text(_when(row["started"]), style=style),
            "written": Text(_when(row["updated"])[0 if wide else 5:], style=style),
            "size": Text(human_size(row["size"]), style=style),
            "turns": Text("" if row["turns"] is None else f"{row['turns']:,}", style=style),
            "empty": Text("" if empty is None else str(empty),
                          style="bold yellow" if empty else "dim"),
        }
        lines.append([cells[name] for name in columns])
    flexible = ("title", "project")
    for number, name in enumerate(columns):
        # Fixed columns keep their whole width; title and project share what is left.
        width = max([len(name)] + [line[number].cell_len for line in lines])
        table.add_column(name, justify="right" if name in ("size", "turns", "empty") else "left",
                         no_wrap=True, overflow="ellipsis",
                         min_width=None if name in flexible else width,
                         ratio=(2 if name == "title" else 1) if name in flexible else None)
    for line in lines:
        table.add_row(*line)
    console.print(table)
