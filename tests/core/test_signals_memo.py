"""The signals' memo (`suggest.memo`) gives the answers of a walk over the turns, at a bounded
cost per empty turn.

On a file of mostly empty turns (a ShareGPT export with a blank reply every other message)
each empty turn used to walk up to 500 turns back for earlier user messages, and
`silent_rounds` asked the same again for each empty reply before it. The memo keeps those
answers about settled turns. These tests compare every signal with a reference written the
walking way (what the signals computed before the memo), on generated sessions of many empty
turns, read in order, backwards, one turn cold and while the session grows.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from replay.core.detection.empty import is_empty
from replay.core.session.model import Kind, Part, Session, Turn
from replay.core.suggest import memo
from replay.core.suggest import signals as sig
from replay.core.suggest.rules import suggest_from

# ---------------------------------------------------------------- the walking reference


def _next_user_walk(session: Session, index: int) -> Turn | None:
    for turn in session.turns[index + 1 : index + 1 + sig.WINDOW]:
        if turn.role == "user" and sig._has_words(turn):
            return turn
    return None


def _words(session: Session, turn: Turn) -> str:
    return sig._words_of(session, turn, full=False)


def repeated_walk(session: Session, index: int) -> sig.Repeat | None:
    """`repeated_instruction` as it was: a walk back over up to 500 turns, every time."""
    following = _next_user_walk(session, index)
    if following is None:
        return None
    text = _words(session, following)
    if len(text.split()) < sig.REPEAT_MIN_WORDS:
        return None
    best: sig.Repeat | None = None
    seen = 0
    for position in range(index - 1, max(-1, index - 1 - sig.USER_LOOKBACK_TURNS), -1):
        turn = session.turns[position]
        if turn.role != "user" or not sig._has_words(turn):
            continue
        seen += 1
        earlier = _words(session, turn)
        if len(earlier.split()) >= sig.REPEAT_MIN_WORDS:
            score = sig.similarity(text, earlier, sig.REPEAT_THRESHOLD)
            if score >= sig.REPEAT_THRESHOLD and (best is None or score > best.similarity):
                best = sig.Repeat(following.index, position, score)
        if seen >= sig.USER_LOOKBACK:
            break
    return best


def reaction_walk(session: Session, index: int) -> sig.Reaction | None:
    following = _next_user_walk(session, index)
    if following is None:
        return None
    text = _words(session, following)
    kind = sig._reaction_of(text)
    if kind is None:
        return None
    quote = " ".join(text.split())
    return sig.Reaction(kind, quote[:60] + ("…" if len(quote) > 60 else ""))


def silent_rounds_walk(session: Session, index: int) -> int:
    def answered_badly(position: int) -> bool:
        found = reaction_walk(session, position)
        return (found is not None and found.kind == "no-reply") or \
            repeated_walk(session, position) is not None

    def shows_nothing(turn: Turn) -> bool:
        return turn.role == "assistant" and is_empty(turn)

    if not shows_nothing(session.turns[index]) or not answered_badly(index):
        return 0
    count, seen_user = 1, 0
    for position in range(index - 1, max(-1, index - 1 - sig.WINDOW), -1):
        turn = session.turns[position]
        if turn.role == "user" and sig._has_words(turn):
            seen_user += 1
            if seen_user > 1:
                break
            continue
        if shows_nothing(turn):
            if not answered_badly(position):
                break
            count += 1
            seen_user = 0
        elif turn.role == "assistant":
            break
    return count


def next_message_walk(session: Session, index: int) -> sig.NextMessage | None:
    following = _next_user_walk(session, index)
    if following is None:
        return None
    turn = session.turns[index]
    end = turn.completed if turn.completed is not None else turn.time
    after = following.time - end if following.time is not None and end is not None else None
    return sig.NextMessage(following.index, _words(session, following), after)


REFERENCE: dict[str, Callable[[Session, int], object]] = {
    "repeat": repeated_walk,
    "reaction": reaction_walk,
    "silent_rounds": silent_rounds_walk,
    "next": next_message_walk,
}
"""Signal field -> its walking reference."""


# ---------------------------------------------------------------- generated sessions

PROMPTS = (
    "please fix the failing test in the parser module",
    "please fix the failing test in the parser module now",
    "add a flag for dry runs to the deploy command",
    "why is the build red again on the main branch",
    "rename the config loader and update every caller of it",
    "continue", "ok", "yes please", "go on",
    "no reply?", "hello? are you still there?", "you didn't answer", "???",
    "WHY IS NOTHING HAPPENING HERE AT ALL", "what happened", "seriously, again?",
    "<local-command-stdout></local-command-stdout>", "[Request interrupted by user]",
    "不 回答 了 吗 ？", "где ответ на мой вопрос сейчас",
)
REPLIES = ("Done: the test passes now.", "I'll update the callers next.\n1. a\n2. b",
           "Here is the plan: first the parser, then the tests.", "Which file do you mean?")


def generated(seed: int, turns: int = 2400, empty_share: float = 0.6,
              silent_share: float = 0.2) -> Session:
    """A chat of `turns` turns, most replies empty, prompts drawn from a few (so repeats,
    complaints and go-ons come again and again), `silent_share` of the prompts empty."""
    rng = random.Random(seed)
    session = Session(path=f"generated-{seed}.json", format="test", session_id=str(seed))
    clock = 1_000_000.0
    role = "user"
    for number in range(turns):
        clock += rng.choice((3.0, 20.0, 90.0, 4000.0))
        if role == "user":
            roll = rng.random()
            parts = ([] if roll < silent_share / 2 else [Part(Kind.TEXT, "")]
                     if roll < silent_share else [Part(Kind.TEXT, rng.choice(PROMPTS))])
            turn = Turn(id=f"u{number}", role="user", parts=parts, time=clock)
        else:
            parts = ([] if rng.random() < empty_share else
                     [Part(Kind.TEXT, rng.choice(REPLIES))])
            if rng.random() < 0.1:
                parts.append(Part(Kind.REASONING, "thinking it over"))
            turn = Turn(id=f"a{number}", role="assistant", parts=parts, time=clock,
                        completed=clock + 2 if rng.random() < 0.8 else None)
        session.add(turn)
        # Now and then two replies, or two prompts, in a row.
        role = ("assistant" if role == "user" else "user") if rng.random() < 0.85 else role
    return session


def _empties(session: Session) -> list[int]:
    return [turn.index for turn in session.turns if is_empty(turn)]


def _signals(session: Session, index: int) -> sig.Signals:
    return sig.read_signals(session, index)


def _check_against_reference(session: Session, index: int, found: sig.Signals) -> None:
    for field, reference in REFERENCE.items():
        assert getattr(found, field) == reference(session, index), (field, index)


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_signal_in_order_equals_the_walk(seed: int) -> None:
    session = generated(seed)
    empties = _empties(session)
    assert len(empties) > 500
    rounds = []
    for index in empties:
        found = _signals(session, index)
        _check_against_reference(session, index, found)
        rounds.append(found.silent_rounds)
    # The generated sessions do hold what the memo keeps: repeats and silent rounds.
    assert max(rounds) >= 3
    assert sum(1 for index in empties if _signals(session, index).repeat) > 50


def test_the_lookback_ends_where_the_walk_ended() -> None:
    """Prompts with words far apart: the earlier messages compared are cut at 500 turns
    back, and at the tenth, exactly as the walk cut them."""
    session = generated(9, turns=8000, silent_share=0.985)
    empties = _empties(session)
    repeats = 0
    for index in empties:
        found = _signals(session, index)
        _check_against_reference(session, index, found)
        repeats += found.repeat is not None
    assert repeats > 5
    # Some repeat found by the walk reaches far back (more than half the lookback).
    assert any(found.repeat.index - found.repeat.earlier > sig.USER_LOOKBACK_TURNS // 2
               for found in (_signals(session, index) for index in empties) if found.repeat)


def test_backwards_and_cold_reads_equal_warm_ones() -> None:
    session = generated(4)
    empties = _empties(session)
    warm = {index: _signals(session, index) for index in empties}
    memo.forget(session)
    backwards = {index: _signals(session, index) for index in reversed(empties)}
    assert backwards == warm
    for index in empties[::37]:
        memo.forget(session)
        assert _signals(session, index) == warm[index]


def test_suggestions_equal_the_walks_on_a_session_that_grows() -> None:
    """A followed session: its last turns may still change, so nothing about them is kept;
    each empty turn is asked about as soon as it arrives and again at the end."""
    whole = generated(5, turns=900)
    growing = Session(path=whole.path, format=whole.format, session_id=whole.session_id)
    asked = {}
    for turn in whole.turns:
        growing.add(Turn(turn.id, turn.role, list(turn.parts), time=turn.time,
                         completed=turn.completed))
        index = len(growing.turns) - 1
        for back in (index, index - 3, index - 45):
            if back >= 0 and is_empty(growing.turns[back]):
                found = _signals(growing, back)
                _check_against_reference(growing, back, found)
                asked[back] = found
    for index in _empties(growing):
        found = _signals(growing, index)
        _check_against_reference(growing, index, found)
        assert suggest_from(found) == suggest_from(sig.read_signals(whole, index))


def test_replaced_turns_start_a_new_memo() -> None:
    session = generated(6, turns=400)
    empties = _empties(session)
    before = [_signals(session, index) for index in empties]
    session.turns = list(reversed(session.turns))
    for position, turn in enumerate(session.turns):
        turn.index = position
    for index in _empties(session):
        _check_against_reference(session, index, _signals(session, index))
    assert before  # (the old answers were about other turns: none of them is reused)


def test_the_cost_per_empty_turn_does_not_grow_with_the_lookback(monkeypatch) -> None:
    """The turns looked at per empty turn: the walk read up to 500 back for each, and for
    each empty reply before it again; with the memo, a few dozen (its look ahead, the new
    turns since the last one, the earlier messages compared)."""
    looked = [0]
    has_words = sig._has_words

    def counted(turn: Turn) -> bool:
        looked[0] += 1
        return has_words(turn)

    monkeypatch.setattr(sig, "_has_words", counted)
    session = generated(7, turns=6000, empty_share=0.9, silent_share=0.97)
    empties = _empties(session)
    for index in empties:
        _signals(session, index)
    per_empty = looked[0] / len(empties)
    assert per_empty < 60, per_empty
    looked[0] = 0
    for index in empties[2000:2200]:
        repeated_walk(session, index)
        silent_rounds_walk(session, index)
    assert looked[0] / 200 > 3 * per_empty  # the walk, for comparison


def test_kept_answers_are_bounded() -> None:
    session = generated(8, turns=30_000, empty_share=0.9)
    for index in _empties(session):
        _signals(session, index)
    kept = memo.memo_of(session)
    assert len(kept.answers) <= 2 * memo.GENERATION
    assert kept.users.end - kept.users.start <= 3 * memo.USER_LOG_SPAN + sig.USER_LOOKBACK_TURNS


def test_facts_put_in_words_when_read_are_the_facts() -> None:
    """`suggest_from` reads the facts a rule's reasons name, each made when first read."""
    session = generated(10, turns=600)
    for index in _empties(session):
        found = _signals(session, index)
        facts = found.facts()
        lazy = found.lazy_facts()
        assert {name: lazy[name] for name in facts} == facts
        with pytest.raises(KeyError):
            lazy["no-such-fact"]


def test_settled_signals_are_replaced_as_dataclasses_replace_does() -> None:
    from dataclasses import replace

    session = generated(11, turns=400)
    stats = sig.SessionStats(turns=400, median_gap=42.0, median_text=17.0,
                             records_completion=True)
    for index in _empties(session):
        found = _signals(session, index)
        summary = found.summary
        if summary is not None:
            summary = replace(summary, ratio=summary.chars / 17.0)
        expected = replace(found, median_gap=42.0, summary=summary,
                           no_completion=found.unfinished)
        assert found.settled(stats) == expected
