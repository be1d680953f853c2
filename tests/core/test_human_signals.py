"""Signals around a person's empty turn and around a reply the person stopped (suggest.human),
and the suggestions they lead to on the formats where people leave empty prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import load_sessions
from replay.core.session.model import NOT_SENT, Kind, Part
from replay.core.suggest import default_suggester, read_signals, suggest
from replay.core.suggest.human import bare_continuation, next_act, person_abort, reply_reading
from tests.core.test_signals import build, turn


def _unsent() -> object:
    return turn("user", "", note=NOT_SENT)


@pytest.mark.parametrize(("after", "kind"), [
    (["."], "go-on"), (["continue"], "go-on"), (["/undo"], "undo"), (["/add x.py"], "command"),
    (["!ls"], "shell"), (["fix the import"], "request"), ([], "leave"),
])
def test_what_the_person_did_after_an_unsent_prompt(after: list[str], kind: str) -> None:
    session = build(turn("user", "hi"), turn("assistant", "hello"), _unsent(),
                    *[turn("user", text) for text in after])
    act = next_act(session, 2)
    assert act is not None and act.kind == kind


def test_blank_after_blank_is_counted_and_skipped() -> None:
    session = build(_unsent(), _unsent(), _unsent(), turn("system", "^C again to exit"))
    act = next_act(session, 0)
    assert act is not None and (act.kind, act.blanks) == ("leave", 2)
    assert act.describe() == ("the person left after 2 more empty prompts: nothing more was "
                              "typed in this session")


def test_a_prompt_that_was_sent_has_no_next_act() -> None:
    session = build(turn("user", ""), turn("user", "/undo"))
    assert next_act(session, 0) is None


def test_a_dot_is_a_bare_go_on() -> None:
    assert bare_continuation(".") == "." and bare_continuation(" … ") == "…"
    assert bare_continuation(". then run it") is None


@pytest.mark.parametrize(("reply", "kind"), [
    ("Peço desculpas pelo erro. Vou corrigir isso instalando-o novamente.", "carries-on"),
    ("Sorry, the install failed; retrying with --save.", "carries-on"),
    ("Let me continue with step 2.", "carries-on"),
    ("It looks like your message was empty. What would you like me to do?", "asks"),
    ("Welcome back! To recap where we left off: the parser is done.", "restarts"),
    ("Here is the table you asked for.", None),
])
def test_how_the_next_reply_read_an_empty_message(reply: str, kind: str | None) -> None:
    session = build(turn("user", "install express"), turn("assistant", "done"),
                    turn("user", ""), turn("assistant", reply))
    found = reply_reading(session, 2)
    assert (found.kind if found else None) == kind


def test_the_reading_is_only_of_the_reply_before_the_person_speaks() -> None:
    session = build(turn("user", ""), turn("user", "are you there"),
                    turn("assistant", "Sorry, continuing."))
    assert reply_reading(session, 0) is None


def test_person_abort_names_only_stops() -> None:
    session = build(turn("assistant", Part(Kind.ERROR, name="MessageAbortedError")),
                    turn("assistant", Part(Kind.ERROR, name="overloaded")),
                    turn("user", Part(Kind.ERROR, name="KeyboardInterrupt")))
    assert [person_abort(session, i) for i in range(3)] == ["MessageAbortedError", None, None]


def test_a_stop_long_into_the_reply_or_followed_by_nothing_stays_an_artifact() -> None:
    slow = build(turn("user", "do it"),
                 turn("assistant", Part(Kind.ERROR, name="MessageAbortedError"),
                      time=1_000_010.0, completed=1_000_010.0 + 120),
                 turn("user", "try another way"))
    assert suggest(slow, 1).label == "artifact"
    later = build(turn("user", "do it"),
                  turn("assistant", Part(Kind.ERROR, name="MessageAbortedError")),
                  turn("user", "new day, new task", time=1_000_020.0 + 3 * 3600))
    assert suggest(later, 1).label == "artifact"
    quick = build(turn("user", "do it"),
                  turn("assistant", Part(Kind.ERROR, name="MessageAbortedError")),
                  turn("user", "wait, use the other table"))
    found = suggest(quick, 1)
    assert (found.label, found.rule) == ("breakdown", "stopped-then-redirected")
    assert found.reasons[0] == "the person stopped the reply 5 s in (MessageAbortedError)"


SPECSTORY = """_**User (2025-10-26 20:00Z)**_

install express and start the server

---

_**Agent (model m 2025-10-26 20:00Z)**_

Installed. Should I also add a start script?

---

_**User (2025-10-26 20:01Z)**_



---

_**Agent (model m 2025-10-26 20:01Z)**_

Sorry, the install did not finish; running it again with --save.

---

_**User (2025-10-26 23:30Z)**_



---

_**Agent (model m 2025-10-26 23:30Z)**_

Welcome back. To recap where we left off: the server runs on port 3000.
"""


def test_empty_prompts_of_a_specstory_file_say_gap_question_and_reading(tmp_path: Path) -> None:
    path = tmp_path / "history.md"
    path.write_text(SPECSTORY, encoding="utf-8")
    (session,) = load_sessions(path)
    found = {e.index: e for e in find_empty_turns(session, suggester=default_suggester())}
    quick = found[2]
    assert quick.suggestion == "approval"  # a question was open: the reply acted on it
    assert quick.suggestion_reasons == [
        "the previous assistant turn asks a question", "the person said nothing",
        "the reply #4 carries on with the work (“Sorry, the install did not finish; running it "
        "again with --s…”)"]
    late = found[4]
    assert late.suggestion == "resumption"
    assert late.suggestion_reasons[0].startswith("gap before: 3.5 h")
    assert late.suggestion_reasons[1:] == [
        "the reply #6 starts over (“Welcome back. To recap where we left off: the server runs "
        "on…”)"]


def test_an_aider_blank_before_undo_reads_as_a_second_look(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("# aider chat started at 2025-01-01 10:00:00\n\n#### rename it  \n\nDone."
                    "\n\n> Applied edit to a.py  \n> Commit 1a2b3c4 rename  \n\n#### <blank>  \n"
                    "\n#### /undo  \n> Removed: 1a2b3c4 rename  \n", encoding="utf-8")
    (session,) = load_sessions(path)
    (empty,) = find_empty_turns(session, suggester=default_suggester())
    assert (empty.suggestion, empty.suggestion_rule) == ("reflect", "unsent-then-undo")
    assert empty.evidence[0] == "not sent to the model"
    assert read_signals(session, empty.index).not_sent


@pytest.mark.parametrize(("text", "repeats", "kind"), [
    ("no, use the other table", False, "a correction"),
    ("Actually keep the old name", False, "a correction"),
    ("also add a test for it", False, "more detail or a new direction"),
    ("rename the module to core", True, "the same request again"),
])
def test_what_the_message_after_a_stop_does(text: str, repeats: bool, kind: str) -> None:
    from replay.core.suggest.human import redirect_kind

    assert redirect_kind(text, repeats) == kind


def test_a_stop_then_the_same_request_says_so() -> None:
    ask = "rename the scheduler module to core and update every import"
    session = build(turn("user", ask),
                    turn("assistant", Part(Kind.ERROR, name="MessageAbortedError")),
                    turn("user", ask + " please"))
    found = suggest(session, 1)
    assert found.label == "breakdown"
    assert found.reasons[1].endswith(": the same request again")
