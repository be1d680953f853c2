"""Issue 27: a big session in the app holds a bounded number of whole turns and of empty-turn
reports, however many turns and empty turns the file has; the reports it works out near the
reviewer are the ones a whole read gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.core.detection.empty import DEFAULT_RULES, describe_empty
from replay.core.index.turn_index import CACHE, TAIL, TurnIndex
from replay.core.readers.base import read_line_session
from replay.core.readers.opencode_run import RunBuilder
from replay.core.suggest import default_suggester
from replay.ui import empty_reports
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until

STEPS = 9_000
"""Turns of the run; one in three is an empty step: 3,000 empty turns (over ALL_AT_ONCE)."""


def write_run(path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for step in range(STEPS):
            message = f"msg_{step:06d}"
            events = [("step_start", {"type": "step-start"})]
            if step % 3:
                events.append(("text", {"type": "text", "text": f"step {step} [/] done"}))
            events.append(("step_finish", {"type": "step-finish", "reason": "stop"}))
            for number, (kind, part) in enumerate(events):
                handle.write(json.dumps({
                    "type": kind, "timestamp": 1_700_000_000_000 + step * 10_000 + number,
                    "sessionID": "ses_big",
                    "part": {"id": f"prt_{step}_{number}", "sessionID": "ses_big",
                             "messageID": message, **part}}) + "\n")
    return path


def whole_turns(turns: TurnIndex) -> int:
    return sum(turns.whole_now(at) is not None for at in range(len(turns)))


async def test_a_big_session_holds_few_whole_turns_and_reports(tmp_path: Path) -> None:
    path = write_run(tmp_path / "big.opencode-run.jsonl")
    app = build_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        turns = screen.session.turns
        assert isinstance(turns, TurnIndex) and len(turns) == STEPS
        empties = screen.navigator.empty_indices
        assert len(empties) == STEPS // 3 > empty_reports.ALL_AT_ONCE
        # Only the reports near the reviewer are worked out ahead, not one per empty turn.
        await wait_until(pilot, lambda: screen.reports.known(empties[0]) is not None)
        await pilot.pause(0.3)
        known = [at for at in empties if screen.reports.known(at) is not None]
        assert len(known) <= empty_reports.AHEAD + empty_reports.BEHIND
        for _ in range(60):
            await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.index == empties[60]
        await pilot.press("G")
        await pilot.press("left")
        await pilot.pause()
        assert whole_turns(turns) <= TAIL + CACHE
        known = [at for at in empties if screen.reports.known(at) is not None]
        assert len(known) <= 4 * (empty_reports.AHEAD + empty_reports.BEHIND)
        # What the app shows for a stop is what a whole read of the file says of it.
        whole = read_line_session(path, RunBuilder(str(path)))
        suggester = default_suggester()
        for at in (empties[0], empties[60], empties[-1]):
            assert screen.reports.report(at) == describe_empty(
                whole, whole.turns[at], DEFAULT_RULES, suggester)


def test_reports_kept_are_bounded(monkeypatch: object) -> None:
    """The cache lets the least recently used reports go past `KEPT`."""
    from replay.core.index.navigation import Navigator
    from replay.core.session.model import Kind, Part, Session, Turn

    session = Session(path="x", format="chat-json")
    for number in range(40):
        session.add(Turn(id=f"t{number}", role="assistant" if number % 2 else "user",
                         parts=[] if number % 2 else [Part(Kind.TEXT, "hi")]))
    navigator = Navigator(session)
    reports = empty_reports.EmptyReports(session, navigator, DEFAULT_RULES, None)
    monkeypatch.setattr(empty_reports, "KEPT", 5)  # type: ignore[attr-defined]
    for at in navigator.empty_indices:
        assert reports.report(at) is not None
    assert sum(reports.known(at) is not None for at in navigator.empty_indices) == 5
    assert reports.known(navigator.empty_indices[-1]) is not None
    assert reports.report(navigator.empty_indices[0]) == describe_empty(
        session, session.turns[navigator.empty_indices[0]], DEFAULT_RULES)


def _big_document(path: Path, name: str) -> Path:
    if name == "swe-agent":
        steps = [{"action": f"open f{number}.py", "observation": f"line {number}\n" * 20,
                  "thought": "" if number % 5 == 2 else f"look at f{number}", "state": "{}"}
                 for number in range(6_000)]
        steps = [dict(step, action="") if not step["thought"] else step for step in steps]
        out = path / "big.traj"
        out.write_text(json.dumps({"history": [{"role": "user", "content": "fix it"}],
                                   "trajectory": steps, "info": {"exit_status": "submitted"}},
                                  indent=1))
        return out
    out = path / "big.chat.json"
    out.write_text(json.dumps({"id": "big", "messages": [
        {"role": "user" if number % 2 == 0 else "assistant",
         "content": "" if number % 4 == 1 else f"message {number} " + "word " * 30}
        for number in range(6_000)]}, indent=2))
    return out


@pytest.mark.parametrize("name", ["swe-agent", "chat-json"])
async def test_a_big_document_opens_on_an_index(tmp_path: Path, name: str) -> None:
    """A JSON document (no line builder) opens on a turn index too; stepping, search and
    `o` read back only what they show."""
    app = build_app(_big_document(tmp_path, name))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert isinstance(screen, ReplayScreen)
        turns = screen.session.turns
        assert isinstance(turns, TurnIndex) and len(turns) >= 6_000
        for key in ("right_square_bracket", "right_square_bracket", "G", "o", "o"):
            await pilot.press(key)
        await pilot.pause()
        hits = screen.searching.hits("message 5999" if name == "chat-json" else "f5999.py")
        assert len(hits) == 1 and turns.id_at(hits[0]) in (
            "m5999", "step-5999"), [turns.id_at(at) for at in hits]
        assert whole_turns(turns) <= TAIL + CACHE
        # Over 1,000 empty turns: only the reports near the reviewer are worked out.
        assert turns.materialised < len(turns) // 4, turns.materialised
