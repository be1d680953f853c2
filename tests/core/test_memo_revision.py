"""The suggester's memo and turns rewritten after they settled (`suggest/memo.py`,
`Session.revision`): a followed Gemini recording writes an earlier message again, and the
suggestion for the empty turn before it follows the new text, not the memo's old answer."""

from __future__ import annotations

import json
from pathlib import Path

from replay.core.detection.empty import describe_empty
from replay.core.live.follow import SessionFollower
from replay.core.suggest import suggester_for
from replay.core.suggest.memo import memo_of

REQUEST = "please fix the failing login test in tests/test_auth.py"


def _message(number: int, kind: str, content: str) -> str:
    return json.dumps({"id": f"m{number}", "type": kind, "content": content,
                       "timestamp": f"2026-03-01T10:{number // 60:02d}:{number % 60:02d}Z"})


def _recording(path: Path) -> Path:
    """A request, an empty reply, the same request again (a repeat: breakdown), then enough
    turns that the repeat is settled and its answer kept in the memo."""
    lines = [json.dumps({"sessionId": "s", "projectHash": "p"}),
             _message(0, "user", REQUEST), _message(1, "gemini", ""),
             _message(2, "user", REQUEST)]
    for number in range(3, 80):
        lines.append(_message(number, "gemini" if number % 2 else "user",
                              f"reply number {number} about the change"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_settled_message_written_again_changes_the_suggestion(tmp_path: Path) -> None:
    path = _recording(tmp_path / "session.jsonl")
    suggester = suggester_for()
    follower = SessionFollower(path, "gemini", suggester=suggester)
    update = follower.poll()
    session = update.session
    assert session is not None
    turns = session.turns
    before = describe_empty(session, turns[1], suggester=suggester)
    assert before.suggestion == "breakdown" and before.suggestion_rule == "repeat-next"
    assert ("repeat", 1) in memo_of(session).answers._new  # kept: the turns after settled
    # Gemini CLI writes message m2 again (the person edited it before sending):
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(_message(2, "user", "thanks, I see the problem now") + "\n")
    update = follower.poll()
    assert update.session is session and session.turns is turns  # rewritten in place
    assert [part.text for part in turns[2].parts] == ["thanks, I see the problem now"]
    after = describe_empty(session, turns[1], suggester=suggester)
    assert after.suggestion_rule != "repeat-next", after
    assert "repeats" not in " ".join(after.suggestion_reasons)


def test_the_builder_says_when_an_earlier_message_is_written_again(tmp_path: Path) -> None:
    """Past the follower's re-checked window too (a message 500 turns back): the Gemini
    builder bumps the session's revision itself; rewriting the last message does not."""
    from replay.core.readers.base import iter_lines
    from replay.core.readers.gemini import GeminiBuilder

    lines = [_message(number, "user" if number % 2 else "gemini", f"t{number}")
             for number in range(600)]
    lines += [_message(599, "user", "last, written again"), _message(50, "gemini", "again")]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    builder = GeminiBuilder(str(path))
    revisions = []
    with open(path, "rb") as handle:
        for line, offset, lineno in iter_lines(handle):
            builder.feed(line, offset, lineno)
            revisions.append(builder.session.revision)
    assert revisions[-3:] == [0, 0, 1]
    memo = memo_of(builder.session)
    assert memo.revision == 1
