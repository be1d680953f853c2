"""`replay label PATH --turn ID --label NAME`: record one annotation without opening the app."""

from __future__ import annotations

import argparse
import sys

from replay.arguments import add_format, add_labels, add_reviewer, add_rules
from replay.commands._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    EXIT_OK,
    load_or_none,
    named_only,
    say_error,
    settings_and_labels_or_none,
)
from replay.core.annotate.annotations import (
    CONFIDENCE,
    AnnotationStore,
    JournalError,
    default_reviewer,
    session_identity,
)
from replay.core.detection.empty import (
    DEFAULT_RULES,
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_empty,
    is_empty,
    missing_reply,
    stop_indices,
)
from replay.core.safe import escape_controls, one_line, show_path
from replay.core.session.labels import LabelSet
from replay.core.session.model import Session, Turn
from replay.core.session.turn_ref import (
    TurnRef,
    TurnReferenceError,
    nearest_empty,
    placeholder_name,
    reference_number,
    resolve_stop,
)

NAME = "label"
HELP = "annotate one turn of a session from the command line"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the label arguments."""
    parser.add_argument("path", metavar="PATH", help="session file, directory or database")
    parser.add_argument("--turn", required=True, metavar="ID",
                        help="the turn's id, or #N for the N-th turn counted from 1 as the app "
                             "shows it (quote it in a shell: '#12'); a bare number is refused; "
                             "'#12+' (or the id scan gives it, ID+no-reply) is the missing reply "
                             "after request #12")
    parser.add_argument("--any-turn", action="store_true",
                        help="allow a turn that is not an empty turn (refused by default)")
    add_rules(parser, "count assistant turns that only call tools as empty (as the app's "
                      "--tool-only)",
              missing_replies="count requests that got no reply as stops, as scan does; the "
                              "stop is the placeholder '#N+' after the request, and a refused "
                              "turn's hint may name one")
    parser.add_argument("--label", required=True, metavar="NAME",
                        help="label name (continue, approval, ... or one from --labels)")
    parser.add_argument("--note", default="", metavar="TEXT", help="free-text note")
    parser.add_argument("--confidence", default="medium", choices=CONFIDENCE,
                        help="how sure you are (default: medium)")
    add_reviewer(parser)
    parser.add_argument("--annotations", metavar="FILE",
                        help="journal to append to (default: one per session in the user "
                             "data directory)")
    add_labels(parser)
    parser.add_argument("--session", metavar="ID",
                        help="for a path holding several sessions: the session the turn is in")
    add_format(parser)


def _resolve(session: Session, reference: str) -> TurnRef:
    """`resolve_stop` on one session: `#N+` names a missing reply wherever the rule finds one."""
    return resolve_stop(session.turns, reference,
                        lambda index: missing_reply(session, index) is not None)


def find_turn(
    sessions: list[Session], reference: str, path: str
) -> tuple[Session, TurnRef] | str:
    """The session and turn (or missing reply) named by `#N`, `#N+` or an id, or a one-line
    reason it cannot be found."""
    shown_path = one_line(path)
    if len(sessions) == 1:
        session = sessions[0]
        try:
            return session, _resolve(session, reference)
        except TurnReferenceError as error:
            return f"{shown_path}: {error}"
    if reference_number(reference.strip().removesuffix("+")) is not None:
        return (f"{shown_path} holds {len(sessions)} sessions: name the turn by its id, "
                f"not {escape_controls(reference.strip())}")
    found: list[tuple[Session, TurnRef]] = []
    refusal = ""
    for session in sessions:
        try:
            found.append((session, _resolve(session, reference)))
        except TurnReferenceError as error:
            refusal = str(error)
    if not found:
        total = sum(len(session.turns) for session in sessions)
        held = f"{len(sessions)} session{'s' if len(sessions) != 1 else ''}, {total:,} turns"
        return f"{shown_path} ({held}): {refusal or 'no turns'}"
    if len(found) > 1:
        ids = ", ".join(escape_controls(session_identity(session)) for session, _ in found)
        return (f"turn id {escape_controls(reference.strip())!r} appears in {len(found)} "
                f"sessions ({ids}); add --session ID")
    return found[0]


def not_empty_refusal(session: Session, turn: Turn, rules: DetectionRules) -> str | None:
    """Why labelling `turn` needs --any-turn (it is not an empty turn), or None when it is one."""
    if is_empty(turn, rules):
        return None
    shown = f"#{turn.index + 1} ({escape_controls(turn.id)}, {turn.role}) is not an empty turn"
    if missing_reply(session, turn.index) is not None:
        # A script that took `number` from `scan --json --missing-replies` names the request;
        # the stop it meant is the placeholder after it.
        return (f"{shown}; it is a request that got no reply: name the missing reply "
                f"'{placeholder_name(turn.index)}'; pass --any-turn to label the request itself")
    nearest = nearest_empty(stop_indices(session, rules), turn.index)
    if nearest is None:
        hint = "the session has no empty turn"
    elif rules.missing_replies and not is_empty(session.turns[nearest], rules):
        hint = f"the nearest stop is the missing reply {placeholder_name(nearest)}"
    else:
        hint = f"the nearest empty turn is #{nearest + 1}"
    return f"{shown}; {hint}; pass --any-turn to label it anyway"


def suggester_or_none(labels: LabelSet) -> Suggester | None:
    """The suggester for the label set (imported only when a label is saved)."""
    from replay.core.suggest import suggester_for

    return suggester_for(labels)


def _name(ref: TurnRef) -> str:
    return placeholder_name(ref.index) if ref.placeholder else f"#{ref.index + 1}"


def _state(turn: Turn, empty: EmptyTurn | None) -> str:
    """`user, empty: blank-text`, `assistant, missing reply (no-reply)` or `user, not an empty
    turn`."""
    if empty is None:
        return f"{turn.role}, not an empty turn"
    what = "missing reply (no-reply)" if empty.is_placeholder else f"empty: {empty.reason}"
    return f"{empty.role}, {what}"


def run(args: argparse.Namespace) -> int:
    """Append one annotation to the session's journal and say what was saved."""
    inputs = settings_and_labels_or_none(args)
    if inputs is None:
        return EXIT_BAD_INPUT
    settings, labels = inputs
    label = labels.get(args.label)
    if label is None:
        known = ", ".join(labels.names)
        say_error(f"unknown label {escape_controls(args.label)!r}; labels: {known}")
        return EXIT_BAD_INPUT
    sessions = load_or_none(args.path, args.format, only=named_only(args))
    if sessions is None:
        return EXIT_BAD_INPUT
    if args.session is not None:
        sessions = [s for s in sessions if args.session in (s.session_id, session_identity(s))]
        if not sessions:
            say_error(f"no session {escape_controls(args.session)!r} in {args.path}")
            return EXIT_BAD_INPUT
    found = find_turn(sessions, args.turn, args.path)
    if isinstance(found, str):
        say_error(found)
        return EXIT_BAD_INPUT
    session, ref = found
    turn = session.turns[ref.index]
    rules = DEFAULT_RULES.with_options(tool_only_is_empty=args.tool_only,
                                       missing_replies=ref.placeholder or args.missing_replies)
    refusal = None if args.any_turn or ref.placeholder \
        else not_empty_refusal(session, turn, rules)
    if refusal:
        say_error(refusal)
        return EXIT_BAD_INPUT
    empty = describe_empty(session, turn, rules, suggester_or_none(labels)) \
        if ref.placeholder or is_empty(turn, rules) else None
    reviewer = default_reviewer(args.reviewer or settings.reviewer)
    store = AnnotationStore.for_session(session, reviewer, args.annotations)
    turn_id = empty.id if empty is not None else turn.id
    try:
        for warning in store.load():
            say_error(f"warning: {warning}")
        # The suggestion the label was made against, as the app records it, so `agree
        # --suggester` counts headless labels too (never blind: the CLI does not hide it).
        saved = store.commit(turn_id, turn.index, label.name, args.note, args.confidence,
                             suggestion=(empty.suggestion or "") if empty else "",
                             rule=(empty.suggestion_rule or "") if empty else "")
    except JournalError as error:
        say_error(f"{error}; the annotation was not saved")
        return EXIT_FAILURE
    print(escape_controls(
        f"saved {saved.label} ({saved.confidence}) on {_name(ref)} {turn_id} "
        f"({_state(turn, empty)}) by {reviewer} in {show_path(store.journal.path)}"
    ))
    sys.stdout.flush()
    return EXIT_OK
