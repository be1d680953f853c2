"""One test per suggestion rule: a session built so that the rule fires and wins."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers.specstory import EXPORT_CUT
from replay.core.session.labels import DEFAULT_LABELS
from replay.core.session.model import NOT_SENT, Kind, Part, Session
from replay.core.suggest import RULES, default_suggester, read_signals, suggest, suggester_for
from replay.core.suggest.rules import first_rule
from tests.core.test_signals import EMPTY, build, turn

ORDER = "Kill the training for now and deploy the baseline with draft length 16 on the box"
DUMP = ("## Goal\nDeploy.\n## Constraints\n- 8 GPUs\n## Progress\n" + "- step done\n" * 120
        + "## Next steps\n1. restart\n2. verify")

Case = tuple[Session, int, "frozenset[str] | None"]


def _work() -> list:
    """A few ordinary turns so medians are meaningful."""
    return [turn("user", "please look at the failing job"),
            turn("assistant", "Looked at it: the job fails on import."),
            turn("assistant", "Fixed the import and reran it."),
            turn("assistant", "All green now.")]


def _unsent() -> object:
    return turn("user", "", note=NOT_SENT)


def unsent_then_go_on() -> Case:
    return build(*_work(), _unsent(), turn("user", ".")), 4, None


def unsent_then_undo() -> Case:
    return build(*_work(), _unsent(), _unsent(), turn("user", "/undo")), 4, None


def unsent_then_repeat() -> Case:
    return build(turn("user", ORDER), *_work()[1:], _unsent(), turn("user", ORDER + " now")), \
        4, None


def unsent() -> Case:
    return build(*_work(), _unsent(), turn("user", "/add bar.py")), 4, None


def compaction() -> Case:
    return build(*_work(), turn("user", Part(Kind.COMPACTION)), turn("assistant", DUMP,
                                                                  is_summary=True)), 4, None


def harness_summary_follows() -> Case:
    session = build(*_work(), turn("user", EMPTY), turn("assistant", "short", is_summary=True))
    return session, 4, None


def clear_command() -> Case:
    return build(*_work(), turn("user", "<command-name>/clear</command-name>"),
                 turn("user", "<local-command-stdout></local-command-stdout>")), 5, None


def other_command() -> Case:
    return build(*_work(), turn("user", "<command-name>/permissions</command-name>"),
                 turn("user", "<local-command-stdout></local-command-stdout>"),
                 turn("user", "now run the linter")), 5, None


def cut_off_then_upset() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.STEP),
                                Part(Kind.ERROR, name="MessageAbortedError")),
                 turn("user", "?????")), 4, None


def no_reply_then_upset() -> Case:
    return build(*_work(), turn("user", ORDER), turn("system", "Request cancelled."),
                 turn("user", "¿¿¿otra vez??? sin respuesta")), 4, None


def no_reply() -> Case:
    return build(*_work(), turn("user", ORDER), turn("system", "Request cancelled."),
                 turn("user", ORDER)), 4, None


def interrupted() -> Case:
    return build(*_work(), turn("user", ORDER), turn("assistant", "\n\n"),
                 turn("user", "[Request interrupted by user]"), turn("user", ORDER)), 5, None


def bash_output() -> Case:
    return build(*_work(), turn("user", "<bash-input>code .</bash-input>"),
                 turn("user", "<bash-stdout></bash-stdout><bash-stderr></bash-stderr>"),
                 turn("user", "now run the linter")), 5, None


def stopped_then_redirected() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.STEP),
                                Part(Kind.ERROR, name="MessageAbortedError")),
                 turn("user", ORDER)), 4, None


def aborted() -> Case:
    """Stopped, and nothing said after: the trace of an abort."""
    return build(*_work(), turn("assistant", Part(Kind.STEP),
                                Part(Kind.ERROR, name="MessageAbortedError"))), 4, None


def export_cut() -> Case:
    return build(*_work(), turn("assistant", note=EXPORT_CUT)), 4, None


def in_flight_last() -> Case:
    session = build(*_work(), turn("assistant", Part(Kind.STEP)))
    session.turns[-1].completed = None
    return session, 4, None


def never_completed() -> Case:
    session = build(*_work(), turn("assistant", Part(Kind.STEP)), turn("user", "hello?"))
    session.turns[4].completed = None
    return session, 4, None


def silent_rounds() -> Case:
    ask = "why is the login page blank on mobile"
    return build(turn("user", ask), *_work()[1:],
                 turn("assistant", Part(Kind.REASONING, "checking css " * 10)),
                 turn("user", "no reply? " + ask),
                 turn("assistant", Part(Kind.REASONING, "checking css " * 10)),
                 turn("user", "no reply again. " + ask)), 6, None


def stalled() -> Case:
    return build(*_work(), turn("assistant", time=1_000_100.0, completed=1_000_100.0 + 4.6 * 3600),
                 turn("user", "retry", time=1_000_103.0 + 4.6 * 3600)), 4, None


def reasoned() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.REASONING, "weighing two fixes " * 20)),
                 turn("assistant", "Went with the second fix.")), 4, None


def working() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.TOOL_CALL, name="bash", input="pytest")),
                 turn("assistant", "Tests pass.")), 4, None


def empty_pair() -> Case:
    return build(turn("user", ORDER), *_work()[1:], turn("assistant", EMPTY), turn("user", EMPTY),
                 turn("assistant", DUMP), turn("user", ORDER)), 4, None


def repeated() -> Case:
    return build(turn("user", ORDER), *_work()[1:], turn("user", EMPTY),
                 turn("assistant", "Working on it."), turn("user", ORDER + " now")), 4, None


def confused() -> Case:
    session = build(*_work(), turn("assistant", ""), turn("user", "hello? are you still there?"))
    return session, 4, None


def plan_stated() -> Case:
    return build(*_work(), turn("assistant", "Root cause found.\nPlan:\n1. revert torch\n"
                                             "2. relaunch from scratch"),
                 turn("user", EMPTY), turn("assistant", DUMP), turn("user", "continue")), 5, None


def context_dump() -> Case:
    return build(*_work(), turn("user", EMPTY), turn("assistant", DUMP)), 4, None


def reply_asks() -> Case:
    return build(*_work(), turn("user", ""),
                 turn("assistant", "Your message seems to be empty. What would you like me to "
                                   "do next?")), 4, None


def question_asked() -> Case:
    return build(*_work(), turn("assistant", "Done. Should I also update the docs?"),
                 turn("user", EMPTY), turn("assistant", "Updated the docs.")), 5, None


def long_break() -> Case:
    return build(*_work(), turn("user", EMPTY, time=1_000_030.0 + 3 * 3600),
                 turn("assistant", "Picking up where we left off.")), 4, None


def reply_carries_on() -> Case:
    return build(*_work(), turn("user", ""),
                 turn("assistant", "Sorry, the install failed; fixing the import and retrying.")), \
        4, None


def continue_next() -> Case:
    return build(*_work(), turn("user", EMPTY), turn("assistant", "Next I ran the tests."),
                 turn("user", "go on")), 4, None


def encrypted_reasoning() -> Case:
    session = build(*_work(), turn("assistant", Part(Kind.REASONING, "", hidden=1024)),
                    turn("user", "go on"))
    return session, 4, None


def upset_next() -> Case:
    return build(*_work(), turn("user", EMPTY), turn("assistant", "Carrying on."),
                 turn("user", "¿otra vez? no funciona")), 4, None


def hidden_reasoning() -> Case:
    session = build(*_work(), turn("assistant", Part(Kind.REASONING, "")), turn("user", "go on"))
    return session, 4, None


def reply_died() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.STEP), Part(Kind.STEP)),
                 turn("user", "run the tests again", time=1_000_040.0 + 7200)), 4, None


def assistant_nothing() -> Case:
    return build(*_work(), turn("assistant", Part(Kind.STEP)),
                 turn("assistant", "Carrying on.")), 4, None


def user_nothing() -> Case:
    return build(*_work(), turn("user", EMPTY), turn("assistant", "Carrying on.")), 4, None


def nothing_fits() -> Case:
    session, index, _ = user_nothing()
    return session, index, frozenset({"other", "approval"})


CASES: tuple[Callable[[], Case], ...] = (
    unsent_then_go_on, unsent_then_undo, unsent_then_repeat, unsent,
    compaction, harness_summary_follows, clear_command, cut_off_then_upset, no_reply_then_upset,
    no_reply, interrupted,
    other_command, bash_output, stopped_then_redirected, aborted, export_cut, in_flight_last,
    never_completed, silent_rounds, stalled,
    reasoned, working, empty_pair, repeated, confused, upset_next, long_break, plan_stated,
    context_dump, reply_asks, question_asked, reply_carries_on, continue_next,
    encrypted_reasoning, hidden_reasoning, reply_died, assistant_nothing, user_nothing,
    nothing_fits,
)
"""One case per rule, in the order of `RULES`."""


def test_every_rule_has_a_case() -> None:
    assert len(CASES) == len(RULES)


@pytest.mark.parametrize("position", range(len(CASES)), ids=[case.__name__ for case in CASES])
def test_rule_fires_and_wins(position: int) -> None:
    session, index, labels = CASES[position]()
    assert first_rule(read_signals(session, index), labels) is RULES[position]
    found = suggest(session, index, labels)
    assert found is not None
    assert (found.label, found.confidence) == (RULES[position].label, RULES[position].confidence)
    assert found.reasons and all(reason and "{" not in reason for reason in found.reasons)


def test_reasons_are_plain_words_with_figures() -> None:
    session, index, _ = context_dump()
    found = suggest(session, index)
    assert found is not None
    assert found.reasons == [
        "the reply #6 is 45x the median length with 4 headings: a context dump"]
    session, index, _ = aborted()
    assert suggest(session, index).reasons == ["error: MessageAbortedError"]


def test_labels_outside_the_active_set_are_skipped() -> None:
    session, index, _ = compaction()
    assert suggest(session, index, {"continue", "other"}).label == "continue"
    assert suggest(session, index, set()) is None
    assert suggest(session, index, DEFAULT_LABELS).label == "context-reset"


def test_default_suggester_feeds_detection() -> None:
    session, _, _ = plan_stated()
    suggester = default_suggester()
    assert suggester is not None
    empties = find_empty_turns(session, suggester=suggester)
    assert [(e.index, e.suggestion, e.suggestion_confidence) for e in empties] == [
        (5, "approval", "medium")]
    limited = find_empty_turns(session, suggester=suggester_for({"continue"}))
    assert [e.suggestion for e in limited] == ["continue"]


def test_a_tool_step_after_encrypted_reasoning_is_thinking_not_work() -> None:
    # Claude Code keeps only the signature of a thinking block before a tool call: the model
    # reasoned (as with readable reasoning, `reasoned-silently`), so "working" must not win.
    session = build(*_work(), turn("assistant", Part(Kind.REASONING, "", hidden=616),
                                   Part(Kind.TOOL_CALL, name="bash", input="git status")),
                    turn("assistant", "Clean tree."))
    found = suggest(session, 4)
    assert found is not None and (found.label, found.rule) == ("thinking", "encrypted-reasoning")
