"""Command line: `replay [PATH]` opens the app; `replay COMMAND ...` runs a headless command."""

from __future__ import annotations

import gc

# The collector is paused while the modules every run needs are imported (they make
# thousands of objects and no garbage cycles: the collections their count set off were a
# tenth of a headless command's start-up), and while a command's own are (`main`).
_COLLECTING = gc.isenabled()
gc.disable()

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import TextIO, TypeVar  # noqa: E402

from replay import __version__  # noqa: E402
from replay.arguments import (  # noqa: E402
    add_blind,
    add_format,
    add_labels,
    add_reviewer,
    add_rules,
    add_theme,
    add_timing,
    settle_paths,
)
from replay.commands import command_module, command_modules, command_names  # noqa: E402

if _COLLECTING:
    gc.enable()

T = TypeVar("T")

_FREED_AT_EXIT = frozenset({"scan"})
"""Commands that only read and print: nothing of theirs waits for a collection at exit."""

DESCRIPTION = """\
Step through an AI coding-agent transcript, stop at every empty turn, see the turns
before and after side by side, and record what each silence meant."""


def formats_text() -> str:
    """The transcript formats, from the reader registry: each `--format` name and what it
    reads (shown only in the help: listing them imports every reader)."""
    from replay.core.readers import all_readers

    readers = sorted(all_readers(), key=lambda reader: reader.priority)
    width = max(len(reader.name) for reader in readers)
    lines = ["transcript formats (detected from the content; --format NAME skips detection):"]
    lines += [f"  {reader.name:<{width}}  {reader.title}" for reader in readers]
    return "\n".join(lines)


def _command_epilog() -> str:
    lines = ["commands (replay COMMAND --help for each):"]
    for name, module in command_modules().items():
        lines.append(f"  {name:<8} {module.HELP}")
    lines.append("")
    lines.append("With no PATH, replay lists every session it finds on this machine (Claude "
                 "Code, Codex,")
    lines.append("opencode, Gemini CLI in their standard folders; `replay sessions` prints "
                 "the same list);")
    lines.append("with none found, it opens a bundled sample session. Wherever a PATH is "
                 "taken, a session")
    lines.append("id from that list, or its first 6+ characters, works too.")
    return "\n".join(lines)


class _AppParser(argparse.ArgumentParser):
    """Lists the commands in its help, importing their modules only when help is shown."""

    def format_help(self) -> str:
        self.description = f"{DESCRIPTION}\n\n{formats_text()}"
        self.epilog = _command_epilog()
        return super().format_help()


def app_parser() -> argparse.ArgumentParser:
    """The parser for opening the app."""
    parser = _AppParser(
        prog="replay",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="session file, directory or database, or a session id (default: the "
                             "list of sessions found on this machine)")
    add_format(parser)
    parser.add_argument("--follow", action="store_true",
                        help="keep reading as the file grows; stop at new empty turns")
    parser.add_argument("--local", dest="follow_local", action="store_true",
                        help="with --follow: every session folder found on this machine, "
                             "showing the session written last and moving to new ones")
    add_timing(parser, "with --follow: ", "shown")
    add_reviewer(parser)
    parser.add_argument("--annotations", metavar="FILE",
                        help="annotation journal to use (default: in the user data directory)")
    add_labels(parser)
    add_theme(parser, "colour theme for this run (one picked in the app is remembered)")
    add_rules(parser, "also stop at assistant turns that only call tools",
              "also stop at a request that got no reply at all (shown as a placeholder turn)")
    add_blind(parser, own=True)
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="the session list counts every session again instead of reading "
                             "the counts of unchanged ones from the scan cache, and keeps "
                             "nothing")
    parser.add_argument("--version", action="version", version=f"replay {__version__}")
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser for one headless command."""
    module = command_module(name)
    parser = argparse.ArgumentParser(prog=f"replay {name}", description=module.HELP)
    module.configure(parser)
    return parser


def _closed_pipe() -> int:
    """The reader of our output went away (`| head`): exit 0 quietly, as `cat` would.

    Standard output is pointed at /dev/null so the flush at exit does not fail again.
    """
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def _settled(args: argparse.Namespace) -> int | None:
    """Session ids among the PATHs replaced by their paths (`settle_paths`); the exit status
    after one line on stderr when that fails, else None."""
    from replay.core.safe import escape_controls

    problem = settle_paths(args)
    if problem is not None:
        print(f"replay: {escape_controls(problem)}", file=sys.stderr)
        return 2
    for line in getattr(args, "local_problems", ()):
        print(f"replay: {escape_controls(line)}", file=sys.stderr)
    return None


def _without_collections(work: Callable[[], T]) -> T:
    """`work()` with the garbage collector paused (importing a command's modules)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return work()
    finally:
        if enabled:
            gc.enable()


def _warning_line(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
    """`warnings.showwarning` of a run: a warning (a library's, say) is one line of ours,
    `replay: warning: ...`, escaped, not Python's two lines of source and text."""
    from replay.core.safe import one_line

    try:
        print(f"replay: warning: {one_line(f'{category.__name__}: {message}')}",
              file=sys.stderr if file is None else file, flush=True)
    except (OSError, ValueError):  # (stderr closed: a warning is not worth a traceback)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `replay` console script.

    The one owner of a closed pipe (`replay share S -o - | head`): whatever a command was
    writing, and however (a Rich table, JSON lines, a page streamed), the run ends quietly
    with exit 0, as `cat` does; commands let the `BrokenPipeError` come up to here.

    And of what reaches stderr besides a command's own lines: a Python warning is said as
    one line of ours (`_warning_line`).
    """
    warnings.showwarning = _warning_line
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in command_names():
            name = arguments[0]
            args = _without_collections(lambda: command_parser(name).parse_args(arguments[1:]))
            problem = _settled(args)
            if problem is not None:
                return problem
            status = int(command_module(name).run(args))
            sys.stdout.flush()  # here, not at exit: a closed pipe met then is one too
            if argv is None and name in _FREED_AT_EXIT:
                # The process ends now and the system frees what is left: the collections
                # of the interpreter's shutdown need not walk it (a tenth of a scan's
                # start-up, again at its end). Only as the process's own entry point: a
                # caller in a longer-lived process keeps collecting.
                gc.freeze()
            return status
        args = app_parser().parse_args(arguments)
        problem = _settled(args)
        if problem is not None:
            return problem
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _closed_pipe()
    from replay.ui.launch import launch

    return launch(args)
