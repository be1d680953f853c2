"""One test per suggestion signal, each on a small session built by hand."""

from __future__ import annotations

import gc
import weakref

from hypothesis import given
from hypothesis import strategies as st

from replay.core.session.model import Kind, Part, Session, Turn
from replay.core.suggest import signals as sig

EMPTY = "<conversation_data>\n\n</conversation_data>"
"""The empty wrapper the case studies show."""


def part(value: str | Part) -> Part:
    """A text part from a string, or the part itself."""
    return value if isinstance(value, Part) else Part(Kind.TEXT, value)


def turn(role: str, *parts: str | Part, time: float | None = None,
         completed: float | None = None, **fields: object) -> Turn:
    """A turn; times are filled in by `build` when left out."""
    made = Turn(id="", role=role, parts=[part(p) for p in parts], time=time,
                completed=completed)
    for name, value in fields.items():
        setattr(made, name, value)
    return made


def build(*turns: Turn, step: float = 10.0, completion: bool = True) -> Session:
    """A session whose untimed turns are `step` seconds apart (assistants complete 5 s later)."""
    session = Session(path="built.json", format="test", session_id="built")
    clock = 1_000_000.0
    for number, item in enumerate(turns):
        if item.time is None:
            item.time = clock
        clock = item.time + step
        if completion and item.role == "assistant" and item.completed is None:
            item.completed = item.time + 5
        item.id = item.id or f"t{number}"
        session.add(item)
    return session


def with_time(item: Turn, time: float) -> Turn:
    """The same turn with a start time."""
    item.time = time
    return item


# ---------------------------------------------------------------- structural


def test_compaction_part_or_agent() -> None:
    session = build(turn("user", "hi"), turn("user", Part(Kind.COMPACTION)),
                    turn("assistant", "x", agent="compaction"))
    assert [sig.compaction(session, i) for i in range(3)] == [False, True, True]


def test_error_name() -> None:
    session = build(turn("assistant", Part(Kind.ERROR, name="MessageAbortedError")),
                    turn("assistant", Part(Kind.ERROR, text="overloaded")),
                    turn("assistant"))
    assert [sig.error_name(session, i) for i in range(3)] == [
        "MessageAbortedError", "overloaded", None]


def test_no_completion_only_where_the_session_records_completion() -> None:
    session = build(turn("assistant", "done"), turn("assistant", Part(Kind.STEP)))
    session.turns[1].completed = None
    untimed = build(turn("assistant", "a"), turn("assistant"), completion=False)
    assert sig.no_completion(session, 1) is True
    assert sig.no_completion(session, 0) is False
    assert sig.no_completion(untimed, 1) is False


def test_reasoning_chars_counts_full_length_and_none_without_reasoning() -> None:
    shortened = Part(Kind.REASONING, "x" * 10, shortened=True, length=1204)
    session = build(turn("assistant", shortened, Part(Kind.REASONING, "abc")),
                    turn("assistant", Part(Kind.REASONING, "")), turn("assistant"))
    assert [sig.reasoning_chars(session, i) for i in range(3)] == [1207, 0, None]


def test_markers_only_and_no_parts() -> None:
    session = build(turn("assistant", Part(Kind.STEP), Part(Kind.SNAPSHOT)),
                    turn("assistant", Part(Kind.STEP), Part(Kind.REASONING, "")),
                    turn("assistant"))
    assert [sig.markers_only(session, i) for i in range(3)] == [True, False, False]
    assert [sig.no_parts(session, i) for i in range(3)] == [False, False, True]


def test_empty_wrapper_name() -> None:
    session = build(turn("user", EMPTY), turn("user", "  "),
                    turn("user", "<local-command-stdout></local-command-stdout>"))
    assert [sig.empty_wrapper(session, i) for i in range(3)] == [
        "conversation_data", None, "local-command-stdout"]


# ---------------------------------------------------------------- temporal


def test_median_gap_is_computed_once_and_dropped_with_the_session() -> None:
    session = build(turn("user", "a"), turn("assistant", "b"), turn("user", "c"),
                    turn("user", EMPTY, time=1_000_000.0 + 20 + 3600))
    assert sig.median_gap(session, 3) == 10.0
    session.turns[0].time = 0.0  # cached: a changed turn does not alter the figure
    assert sig.median_gap(session, 3) == 10.0
    assert session in sig._STATS
    alive = weakref.ref(session)
    del session
    gc.collect()
    assert alive() is None  # the cache does not keep a closed session in memory


def test_session_stats_refresh_after_the_session_grows() -> None:
    session = build(*[turn("user", "a") for _ in range(10)])
    assert sig.session_stats(session).turns == 10
    for _ in range(60):
        session.add(turn("user", "b", time=0.0))
    assert sig.session_stats(session).turns == 70


def test_gap_before_counts_from_the_previous_completion() -> None:
    session = build(turn("user", "go"), turn("assistant", "ok", time=1_000_010.0,
                                                 completed=1_000_040.0),
                    turn("user", EMPTY, time=1_000_100.0))
    assert sig.gap_before(session, 2) == 60.0
    assert sig.gap_before(session, 0) is None


def test_gap_after_reaches_the_next_timed_turn() -> None:
    session = build(turn("assistant", time=1000.0, completed=1010.0),
                    turn("user", "again", time=1910.0), turn("user", EMPTY))
    session.turns[2].time = None
    assert sig.gap_after(session, 0) == 900.0
    assert sig.gap_after(session, 2) is None


# ---------------------------------------------------------------- neighbours


def test_previous_ending_plan_question_and_tool_endings() -> None:
    plan = "Root cause: torch cu130.\n\nPlan:\n1. revert torch\n2. relaunch 5t+3d"
    session = build(
        turn("user", "undo it"), turn("assistant", plan), turn("user", EMPTY),
        turn("assistant", "Shall I also clean the cache?**"), turn("user", EMPTY),
        turn("assistant", "Let me check.", Part(Kind.TOOL_CALL, name="bash")), turn("user", EMPTY),
        turn("assistant", "Done. Let me know if anything else is needed."), turn("user", EMPTY),
    )
    assert sig.previous_ending(session, 2) == sig.Ending(1, plan=True, question=False)
    assert sig.previous_ending(session, 4) == sig.Ending(3, plan=False, question=True)
    assert sig.previous_ending(session, 6) is None
    assert sig.previous_ending(session, 8) is None


def test_previous_ending_reads_the_whole_text_of_a_shortened_turn() -> None:
    whole = "x" * 2000 + "\nNext, I will relaunch the run."
    session = build(turn("assistant", Part(Kind.TEXT, whole[:400], shortened=True,
                                           length=len(whole))), turn("user", EMPTY))
    session.loader = lambda t: [Part(Kind.TEXT, whole)]
    assert sig.previous_ending(session, 1) == sig.Ending(0, plan=True, question=False)


def test_next_summary_measures_length_headings_and_harness_flag() -> None:
    dump = "## Goal\nrun\n## Progress\n" + "- item\n" * 300 + "## Next steps\n1. go"
    session = build(turn("assistant", "a" * 100), turn("assistant", "b" * 100),
                    turn("user", EMPTY), turn("assistant", Part(Kind.STEP)),
                    turn("assistant", dump), turn("user", EMPTY),
                    turn("assistant", "short", is_summary=True),
                    turn("user", EMPTY), turn("user", "a new instruction"),
                    turn("assistant", dump))
    found = sig.next_summary(session, 2)
    assert found is not None
    assert (found.index, found.headings, found.harness) == (4, 3, False)
    assert round(found.ratio) == 21
    assert sig.next_summary(session, 5) == sig.Summary(6, 5 / 100, 0, True)
    assert sig.next_summary(session, 7) is None


def test_count_headings_knows_markdown_bold_and_section_names() -> None:
    text = "# Title\n**Progress**\nGoal:\nbody text\nNext steps\n  ### deep\nnot # heading"
    assert sig.count_headings(text) == 5


def test_repeated_instruction_finds_the_earlier_message() -> None:
    order = "Kill the training for now, deploy with z-lab ddtree up to 16 draft len on pro6000"
    session = build(turn("user", order), turn("assistant", "Killed it."),
                    turn("assistant", EMPTY), turn("user", EMPTY),
                    turn("user", "kill the training for now and deploy z-lab ddtree, "
                                 "up to 16 draft len on pro6000"),
                    turn("user", "continue"), turn("user", EMPTY), turn("user", "continue"))
    found = sig.repeated_instruction(session, 2)
    assert found is not None
    assert (found.index, found.earlier) == (4, 0)
    assert found.similarity >= 0.8
    assert sig.repeated_instruction(session, 6) is None  # "continue" is no instruction


def test_similarity_bounds() -> None:
    assert sig.similarity("deploy the model now", "deploy the model now") == 1.0
    assert sig.similarity("", "x") == 0.0
    assert sig.similarity("revert torch to cu128", "write the README for the CLI") < 0.2


def test_empty_partner_of_the_other_role() -> None:
    session = build(turn("assistant", "x"), turn("assistant", EMPTY), turn("user", EMPTY),
                    turn("user", EMPTY), turn("assistant", "y"))
    assert [sig.empty_partner(session, i) for i in range(5)] == [None, 2, 1, None, None]


def test_position_first_and_last() -> None:
    session = build(turn("system", "be nice"), turn("user", EMPTY), turn("assistant", "hi"),
                    turn("assistant"))
    assert [sig.position(session, i) for i in range(4)] == ["first", "first", None, "last"]


def test_next_user_continues() -> None:
    session = build(turn("user", EMPTY), turn("assistant", "recap"),
                    turn("user", Part(Kind.TEXT, "synthetic file", synthetic=True),
                         Part(Kind.TEXT, "Continue.")),
                    turn("user", EMPTY), turn("user", "continue with the revert"))
    assert sig.next_user_continues(session, 0) == "continue"
    assert sig.next_user_continues(session, 3) is None
    assert sig.bare_continuation("  Go on!! ") == "go on"
    assert sig.bare_continuation("keep going please, now") is None


def test_next_user_confused() -> None:
    session = build(turn("assistant", ""), turn("user", "Hello?? are you still there"),
                    turn("assistant", ""), turn("user", "what happened to the tests?"),
                    turn("assistant", ""), turn("user", "hi, please add a test"))
    assert [sig.next_user_confused(session, i) for i in (0, 2, 4)] == [
        "Hello??", "what happened", None]


def test_command_before() -> None:
    session = build(
        turn("user", "<command-name>/clear</command-name>\n<command-args></command-args>"),
        turn("user", "<local-command-stdout></local-command-stdout>"),
        turn("user", "/compact"), turn("user", EMPTY),
        turn("user", "fix it"), turn("assistant", "ok"), turn("user", EMPTY),
        turn("user", "/compact"), turn("assistant", "compacted"), turn("user", EMPTY))
    assert [sig.command_before(session, i) for i in (1, 3, 6, 9)] == [
        "clear", "compact", None, None]


def test_read_signals_gathers_every_signal() -> None:
    session = build(turn("assistant", "Plan: I'll revert torch."),
                    turn("user", EMPTY, time=1_000_000.0 + 3600))
    found = sig.read_signals(session, 1)
    assert (found.role, found.wrapper, found.position, found.error) == (
        "user", "conversation_data", "last", None)
    assert found.gap_before == 3595.0
    assert found.facts()["gap_before"] == "60 min"


# ---------------------------------------------------------------- issue 14 signals

INTERRUPT = "[Request interrupted by user]"


def test_interrupt_markers_are_never_a_persons_words_in_the_repeat_check() -> None:
    # Two interrupts in different places: before, the second marker "repeated" the first.
    session = build(turn("user", "refactor the parser into two modules please"),
                    turn("assistant", "\n\n"), turn("user", INTERRUPT),
                    turn("user", "write the changelog entry for version two"),
                    turn("assistant", "\n\n"), turn("user", INTERRUPT + " for tool use"[:0]),
                    turn("user", "now add type hints to the lexer module"))
    assert sig.repeated_instruction(session, 4) is None
    found = sig.interrupted(session, 4)
    assert found is not None and (found.marker, found.kind, found.resent) == (5, "interrupted",
                                                                               None)


def test_the_repeat_reported_is_the_resent_request() -> None:
    ask = "refactor the parser into two modules please"
    session = build(turn("user", ask), turn("assistant", "\n\n"),
                    turn("user", "[Request interrupted by user for tool use]"),
                    turn("user", ask))
    found = sig.interrupted(session, 1)
    assert found is not None
    assert (found.kind, found.resent) == ("interrupted for tool use", 3)
    repeat = sig.repeated_instruction(session, 1)
    assert repeat is not None and (repeat.index, repeat.earlier) == (3, 0)
    assert sig.next_message(session, 1).index == 3  # type: ignore[union-attr]


def test_harness_wrappers_are_one_table() -> None:
    session = build(turn("user", "<bash-input>code .</bash-input>"),
                    turn("user", "<bash-stdout></bash-stdout><bash-stderr></bash-stderr>"),
                    turn("user", "<local-command-stdout></local-command-stdout>"),
                    turn("user", EMPTY))
    assert [sig.harness_wrapper(session, i) for i in range(1, 4)] == [
        "the output of a bash-mode command", "the output of a local /command", None]


def test_reaction_in_several_languages_and_by_punctuation() -> None:
    cases = {
        "???": "question-marks", "？？？？": "question-marks", "hm ???": "question-marks",
        "¿otra vez? no funciona": "frustration", "блин, опять": "frustration",
        "WHY IS THIS STILL BROKEN": "frustration", "搞什么": "frustration",
        "no reply again": "no-reply", "sin respuesta": "no-reply", "нет ответа": "no-reply",
        "没有回复": "no-reply", "pas de réponse ?": "no-reply",
        "please run the tests again": None, "what about the docs?": None,
        "Is the API stable? Can we ship?": None,
    }
    got = {}
    for text, _ in cases.items():
        session = build(turn("assistant", ""), turn("user", text))
        found = sig.reaction(session, 0)
        got[text] = found.kind if found else None
    assert got == cases


def test_silent_rounds_count_only_answered_empty_replies() -> None:
    ask = "why is the login page blank on mobile"
    thought = Part(Kind.REASONING, "checking css " * 10)
    session = build(turn("user", ask), turn("assistant", thought),
                    turn("user", "no reply? " + ask), turn("assistant", thought),
                    turn("user", "still no answer. " + ask), turn("assistant", thought),
                    turn("user", "thanks, and the header?"))
    assert [sig.silent_rounds(session, i) for i in (1, 3, 5)] == [1, 2, 0]


def test_stall_duration_and_next_message() -> None:
    session = build(turn("user", "build it"),
                    turn("assistant", time=1_000_100.0, completed=1_000_100.0 + 4.6 * 3600),
                    turn("user", "retry", time=1_000_103.0 + 4.6 * 3600))
    assert sig.open_for(session, 1) == 4.6 * 3600
    following = sig.next_message(session, 1)
    assert following is not None and (following.text, following.after) == ("retry", 3.0)
    from replay.core.detection.empty import evidence_for
    assert "open for 4.6 h before it completed with nothing" in evidence_for(
        session, session.turns[1])


def test_encrypted_reasoning_is_not_empty_reasoning() -> None:
    from replay.core.detection.empty import evidence_for

    session = build(turn("user", "go"), turn("assistant", Part(Kind.REASONING, "", hidden=1024)),
                    turn("assistant", Part(Kind.REASONING, "")))
    assert sig.reasoning_hidden(session, 1) == 1024
    assert "reasoning: encrypted (1.0 KB)" in evidence_for(session, session.turns[1])
    assert "reasoning: empty" in evidence_for(session, session.turns[2])


def test_claude_signed_thinking_and_codex_encrypted_content_keep_their_size(tmp_path) -> None:
    import json

    from replay.core.readers import load_sessions

    claude = tmp_path / "s.jsonl"
    base = {"sessionId": "s1", "type": "assistant", "timestamp": "2026-01-01T10:00:00Z"}
    claude.write_text("\n".join(json.dumps(record) for record in (
        {**base, "type": "user", "uuid": "u1",
         "message": {"role": "user", "content": "think about it"}},
        {**base, "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "", "signature": "x" * 2048}],
            "stop_reason": "end_turn"}},
        {**base, "uuid": "a2", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "redacted_thinking", "data": "y" * 512}], "stop_reason": "end_turn"}},
    )) + "\n")
    turns = load_sessions(claude)[0].turns
    assert [p.hidden for t in turns[1:] for p in t.parts] == [2048, 512]
    codex = tmp_path / "rollout.jsonl"
    codex.write_text("\n".join(json.dumps(record) for record in (
        {"timestamp": "2026-01-01T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "c1", "timestamp": "2026-01-01T10:00:00.000Z"}},
        {"timestamp": "2026-01-01T10:00:01.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "hi"}]}},
        {"timestamp": "2026-01-01T10:00:02.000Z", "type": "response_item",
         "payload": {"type": "reasoning", "summary": [], "content": None,
                     "encrypted_content": "z" * 1500}},
    )) + "\n")
    parts = [p for t in load_sessions(codex)[0].turns for p in t.parts
             if p.kind == Kind.REASONING]
    assert [p.hidden for p in parts] == [1500]


def test_missing_reply_only_with_the_option() -> None:
    from replay.core.detection.empty import DEFAULT_RULES, find_empty_turns, missing_reply

    ask = "summarise the failing tests"
    session = build(turn("user", ask), turn("system", "Request cancelled."),
                    turn("user", ask), turn("assistant", "Two tests fail."),
                    turn("user", "<command-name>/exit</command-name>"),
                    turn("user", "<local-command-stdout>See ya!</local-command-stdout>"))
    assert find_empty_turns(session) == []
    rules = DEFAULT_RULES.with_options(missing_replies=True)
    found = find_empty_turns(session, rules)
    assert [(e.index, e.reason) for e in found] == [(0, "no-reply")]
    assert found[0].evidence[:3] == ["no reply", "info: Request cancelled.",
                                     "next request #3 20 s later, word for word the same"]
    assert missing_reply(session, 2) is None  # answered
    assert missing_reply(session, 4) is None  # the harness's record of /exit is no request


def test_navigator_drops_a_missing_reply_once_the_reply_arrives() -> None:
    from replay.core.detection.empty import DEFAULT_RULES
    from replay.core.index.navigation import Navigator

    session = build(turn("user", "hello there, build it"))
    navigator = Navigator(session, DEFAULT_RULES.with_options(missing_replies=True))
    assert navigator.empty_indices == [0]
    session.add(Turn(id="a", role="assistant", parts=[Part(Kind.TEXT, "Built.")],
                     time=1_000_020.0, completed=1_000_025.0))
    assert navigator.refresh() == []
    assert navigator.empty_indices == []


@given(st.lists(st.one_of(st.integers(-10**6, 10**6), st.floats(0, 1e6)), min_size=1))
def test_the_session_median_is_the_statistics_median(values: list[float]) -> None:
    import statistics

    from replay.core.suggest.signals import _median

    found, expected = _median(values), statistics.median(values)
    assert found == expected and type(found) is type(expected)
