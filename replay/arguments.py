"""The arguments several commands (and the app) take, each defined once: the same flag has
the same name, type and help wherever it appears. Light to import: the app parser uses it."""

from __future__ import annotations

import argparse

from replay.core.live.completion import DEFAULT_SETTLE, DEFAULT_STALL

PATHS_HELP = "session files, directories or databases"
FORMAT_HELP = "skip detection and read as this format"
REVIEWER_HELP = "name recorded with annotations (default: config, then login name)"
LABELS_HELP = "TOML file with the label set to use"
THEME_HELP = "colour theme for this run"
BLIND_HELP = ("blind review: hide the suggestion and other reviewers' labels until you "
              "save{}")
COUNT_TOOL_ONLY = "also count assistant turns that only call tools as empty"
COUNT_MISSING = "also count a request that got no reply at all (reason no-reply)"


def whole_number(text: str) -> int:
    """An argparse type for any whole number."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type for a count of at least 1."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def seconds(text: str) -> float:
    """A non-negative number of seconds, for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def add_timing(parser: argparse.ArgumentParser, when: str = "", verb: str = "reported") -> None:
    """`--stall` and `--settle` (`when`: the condition they apply under, as `with --follow: `;
    `verb`: what becomes of a stall)."""
    parser.add_argument("--stall", metavar="SECONDS", type=seconds, default=DEFAULT_STALL,
                        help=f"{when}silence, while a reply is due, {verb} as a stall "
                             f"(default {DEFAULT_STALL:g})")
    parser.add_argument("--settle", metavar="SECONDS", type=seconds, default=DEFAULT_SETTLE,
                        help=f"{when}quiet time that completes a user message written as "
                             f"several records (default {DEFAULT_SETTLE:g})")


def add_paths(parser: argparse.ArgumentParser, local: bool = False) -> None:
    """One or more PATHs, as `scan`, `report` and `review` take them; with `local`, also
    `--local` (every session found on this machine), and then PATH may be left out."""
    parser.add_argument("paths", nargs="*" if local else "+", metavar="PATH",
                        help=PATHS_HELP + " (or session ids)" if local else PATHS_HELP)
    if local:
        parser.add_argument("--local", action="store_true",
                            help="also every session found on this machine (Claude Code, "
                                 "Codex, opencode, Gemini CLI: see `replay sessions`)")


def settle_paths(args: argparse.Namespace) -> str | None:
    """Turn the session ids among the PATHs of any command into the paths that hold them
    (and `--local` into every discovered session's path); None when done, else the one
    line saying why not (an id no session has, or a prefix several share).

    Every command and the app go through this after parsing, so every PATH takes an id.
    A path that exists always wins over an id; nothing is discovered unless needed.
    `args.sessions` gets the discovered session of each path given as an id (by path).
    """
    paths = getattr(args, "paths", None)
    path = getattr(args, "path", None)
    texts = list(paths) if isinstance(paths, list) else [path] if isinstance(path, str) else []
    args.sessions = {}
    args.only = {}
    if not texts and not getattr(args, "local", False):
        return "give at least one PATH (or session id), or --local" \
            if isinstance(paths, list) else None
    if texts and all(_plainly_path(text) for text in texts) and not getattr(args, "local", False):
        return None
    from replay.core.discovery.resolve import SessionNotFound, resolve_paths

    try:
        resolved = resolve_paths(texts)
    except SessionNotFound as error:
        return str(error)
    args.sessions = {text: session for text, session in resolved if session is not None}
    for session in args.sessions.values():
        if not session.entry.own_file:  # one session of a database: only that one is meant
            args.only.setdefault(str(session.path), set()).add(session.entry.key)
    settled = [text for text, _ in resolved]
    if getattr(args, "local", False):
        from replay.core.discovery.local import local_paths

        found, problems = local_paths()
        args.local_problems = problems
        settled.extend(found)
        if not settled:
            from replay.core.discovery import looked_in

            return f"--local: no sessions found on this machine (looked in {looked_in()})"
    if isinstance(paths, list):
        args.paths = list(dict.fromkeys(settled))
    elif settled:
        args.path = settled[0]
    return None


def _plainly_path(text: str) -> bool:
    """True for text that needs no discovery: it exists, or cannot be an id."""
    import os

    if text == "-" or os.path.lexists(text):
        return True  # the common case, decided without importing discovery
    from replay.core.discovery.resolve import looks_like_id

    return not looks_like_id(text)


def add_format(parser: argparse.ArgumentParser, text: str = FORMAT_HELP) -> None:
    """`--format NAME`."""
    parser.add_argument("--format", metavar="NAME", help=text)


def add_reviewer(parser: argparse.ArgumentParser, text: str = REVIEWER_HELP) -> None:
    """`--reviewer NAME`."""
    parser.add_argument("--reviewer", metavar="NAME", help=text)


def add_labels(parser: argparse.ArgumentParser, text: str = LABELS_HELP) -> None:
    """`--labels FILE`."""
    parser.add_argument("--labels", metavar="FILE", help=text)


def add_theme(parser: argparse.ArgumentParser, text: str = THEME_HELP) -> None:
    """`--theme NAME`."""
    parser.add_argument("--theme", metavar="NAME", help=text)


def add_blind(parser: argparse.ArgumentParser, own: bool = False) -> None:
    """`--blind` (`own`: "until you save your own", as the app words it)."""
    parser.add_argument("--blind", action="store_true",
                        help=BLIND_HELP.format(" your own" if own else ""))


def add_rules(parser: argparse.ArgumentParser, tool_only: str = COUNT_TOOL_ONLY,
              missing_replies: str | None = COUNT_MISSING) -> None:
    """`--tool-only` and (unless `missing_replies` is None) `--missing-replies`: the options
    of the detection rules, worded for what the command does with them."""
    parser.add_argument("--tool-only", action="store_true", help=tool_only)
    if missing_replies is not None:
        parser.add_argument("--missing-replies", action="store_true", help=missing_replies)
