"""Print the turns around candidate empty turns, for labelling them by reading.

Run: python evaluation/context.py PATH... [--tool-only] [--no-reply] [--around N]

Each candidate is printed with its id, the rules that find it, and N turns either side,
shortened; a person reads that and writes the label and the reason into labels.jsonl.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from replay.core.detection.empty import DEFAULT_RULES, find_empty_turns, is_empty
from replay.core.readers import ReaderError, load_sessions
from replay.core.safe import escape_controls
from replay.core.session.model import Kind, Session, Turn
from replay.core.session.text import one_line


def summary(session: Session, turn: Turn, width: int = 220) -> str:
    """One line per turn: number, role, time, and what it holds."""
    bits: list[str] = []
    for part in session.full_parts(turn):
        if part.kind == Kind.TEXT:
            bits.append(("[synthetic] " if part.synthetic else "") + repr(part.text[:width])[1:-1])
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            bits.append(f"<{part.kind} {part.name} {one_line(part.input or part.text or '', 60)}>")
        elif part.kind == Kind.REASONING:
            bits.append(f"<reasoning {part.text_length} chars: {one_line(part.text, 80)}>")
        else:
            bits.append(f"<{part.kind} {part.name or ''} {one_line(part.text, 60)}>")
    when = (turn.timestamp or "")[5:19]
    done = f" done+{turn.completed - turn.time:.0f}s" if turn.completed and turn.time else ""
    return escape_controls(f"#{turn.index + 1} {turn.role} {when}{done}: {' | '.join(bits)}")


def main() -> None:
    """List candidates with context."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--tool-only", action="store_true")
    parser.add_argument("--around", type=int, default=2)
    args = parser.parse_args()
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=args.tool_only)
    for name in args.paths:
        try:
            sessions = load_sessions(Path(name))
        except ReaderError as error:
            print(f"!! {name}: {error}")
            continue
        for session in sessions:
            for empty in find_empty_turns(session, rules):
                kind = "default" if is_empty(session.turns[empty.index]) else "tool-only"
                print(f"\n=== {name} :: {session.session_id} :: {empty.id} ({kind}, "
                      f"{empty.reason}; {' · '.join(empty.evidence)})")
                low = max(0, empty.index - args.around)
                for turn in session.turns[low : empty.index + args.around + 1]:
                    mark = ">>" if turn.index == empty.index else "  "
                    print(mark, summary(session, turn))


if __name__ == "__main__":
    main()
