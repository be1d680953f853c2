"""A reply that never came: one name (`#N+`, `<id>+no-reply`) for scan, label, export, `:`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.annotate.annotations import Annotation
from replay.core.annotate.journal import Journal
from replay.core.detection.empty import (
    DEFAULT_RULES,
    find_empty_turns,
    missing_reply,
    no_reply_headline,
)
from replay.core.publish.export import export_rows
from replay.core.readers import load_sessions
from replay.core.session.labels import DEFAULT_LABELS
from replay.core.session.turn_ref import (
    TurnRef,
    TurnReferenceError,
    placeholder_id,
    placeholder_request,
    resolve_stop,
)
from tests.ui.test_missing_reply import gemini_session

RULES = DEFAULT_RULES.with_options(missing_replies=True)


@pytest.fixture
def gemini(tmp_path: Path) -> Path:
    return gemini_session(tmp_path / "g.json")


def test_the_missing_reply_is_described_after_its_request(gemini: Path) -> None:
    session = load_sessions(gemini)[0]
    [found] = find_empty_turns(session, RULES)
    assert (found.index, found.id, found.role, found.reason) == (2, "3+no-reply", "assistant",
                                                                 "no-reply")
    record = found.to_json()
    assert (record["index"], record["number"], record["placeholder"]) == (2, 3, "#3+")
    reply = missing_reply(session, 2)
    assert reply is not None and reply.event_index == 3
    assert no_reply_headline(session, 2, reply) == "no reply — info: Request cancelled. 3 s later"


def test_an_empty_turn_keeps_its_own_id_and_no_placeholder_field(tmp_path: Path) -> None:
    chat = tmp_path / "c.json"
    chat.write_text(json.dumps({"messages": [
        {"role": "user", "content": "hi", "id": "u1"},
        {"role": "assistant", "content": "", "id": "a1"}]}))
    [found] = find_empty_turns(load_sessions(chat)[0], RULES)
    assert found.id == "a1" and found.role == "assistant" and "placeholder" not in found.to_json()


def test_live_a_request_with_nothing_after_it_is_waiting_not_missing(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "build it"}]}))
    session = load_sessions(path)[0]
    assert missing_reply(session, 0) is not None  # a finished file: nothing came
    assert missing_reply(session, 0, live=True) is None  # a growing file: it may still come


def test_names_resolve_to_the_placeholder_or_the_turn(gemini: Path) -> None:
    session = load_sessions(gemini)[0]
    turns = session.turns

    def has(index: int) -> bool:
        return missing_reply(session, index) is not None

    assert resolve_stop(turns, "#3+", has) == TurnRef(2, placeholder=True)
    assert resolve_stop(turns, "3+no-reply", has) == TurnRef(2, placeholder=True)
    assert resolve_stop(turns, "#3", has) == TurnRef(2)
    assert resolve_stop(turns, "3", has) == TurnRef(2)  # the id "3"
    with pytest.raises(TurnReferenceError, match=r"#5\+ names the missing reply after #5"):
        resolve_stop(turns, "#5+", has)
    with pytest.raises(TurnReferenceError, match="out of range"):
        resolve_stop(turns, "#99+", has)
    assert placeholder_request(placeholder_id("msg_1")) == "msg_1"
    assert placeholder_request("msg_1") is None and placeholder_request("+no-reply") is None


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_label_export_and_scan_agree_on_the_placeholder(
    gemini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "j.jsonl"
    status, out, err = _run(capsys, "label", str(gemini), "--turn", "#3+", "--label",
                            "artifact", "--reviewer", "ana", "--annotations", str(journal))
    assert status == 0, err
    assert out.startswith("saved artifact (medium) on #3+ 3+no-reply (assistant, missing "
                          "reply (no-reply)) by ana")
    [record] = Journal(journal).load().records
    assert (record["turn_id"], record["turn_index"]) == ("3+no-reply", 2)
    # The suggestion it was made against is recorded, as the app records it.
    assert (record["suggestion"], record["rule"]) == ("artifact", "no-reply")
    # The request itself is not an empty turn: #3 is refused and points at nothing else.
    status, _, err = _run(capsys, "label", str(gemini), "--turn", "#3", "--label", "artifact",
                          "--annotations", str(journal))
    assert status == 2 and "#3 (3, user) is not an empty turn" in err
    status, out, _ = _run(capsys, "scan", "--json", "--missing-replies", str(gemini))
    [entry] = orjson.loads(out)["empty_turns"]
    assert (entry["id"], entry["placeholder"], entry["number"]) == ("3+no-reply", "#3+", 3)
    status, out, _ = _run(capsys, "export", str(gemini), "--annotations", str(journal))
    [row] = list(csv.DictReader(io.StringIO(out)))
    assert (row["turn_id"], row["turn_index"], row["role"], row["empty_reason"],
            row["label"]) == ("3+no-reply", "2", "assistant", "no-reply", "artifact")
    assert row["before_excerpt"] == "#3 user: summarise the failing tests"
    assert row["after_excerpt"] == "#4 system: Request cancelled."
    status, out, _ = _run(capsys, "export", str(gemini), "--format", "md", "--annotations",
                          str(journal))
    assert "· #3+" in out and "**Turn:** #3+ · assistant" in out



def test_label_takes_missing_replies_and_points_a_request_at_its_placeholder(
    gemini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "j.jsonl"
    # Flags copied from `scan --missing-replies` are accepted, not a usage error.
    status, out, err = _run(capsys, "label", str(gemini), "--missing-replies", "--turn", "#3+",
                            "--label", "artifact", "--annotations", str(journal))
    assert status == 0, err
    assert "on #3+ 3+no-reply" in out
    # A script that built '#N' from scan's `number` named the request: the refusal says which
    # name it meant, with or without the flag.
    for flags in ((), ("--missing-replies",)):
        status, _, err = _run(capsys, "label", str(gemini), *flags, "--turn", "#3", "--label",
                              "artifact", "--annotations", str(journal))
        assert status == 2
        assert err.strip().count("\n") == 0 and "got no reply" in err and "'#3+'" in err
    # Another turn that is not empty: the nearest stop is the missing reply, under the flag.
    status, _, err = _run(capsys, "label", str(gemini), "--missing-replies", "--turn", "#1",
                          "--label", "artifact", "--annotations", str(journal))
    assert status == 2 and "the nearest stop is the missing reply #3+" in err

def test_export_all_empty_writes_unannotated_missing_replies_only_when_asked(gemini: Path) -> None:
    session = load_sessions(gemini)[0]
    assert export_rows(session, [], DEFAULT_LABELS, all_empty=True) == []
    [row] = export_rows(session, [], DEFAULT_LABELS, all_empty=True, rules=RULES)
    assert row["turn_id"] == "3+no-reply" and row["label"] == ""
    note = Annotation("g-missing", "3+no-reply", 2, "breakdown", reviewer="bo")
    [row] = export_rows(session, [note], DEFAULT_LABELS)
    assert (row["turn_id"], row["label"], row["empty_reason"]) == ("3+no-reply", "breakdown",
                                                                   "no-reply")


GEMINI_HEAD = {"sessionId": "g-live", "projectHash": "p", "startTime": "2026-01-01T10:00:00Z"}


def gemini_line(own: str, kind: str, text: str, second: int) -> bytes:
    """One Gemini CLI JSONL message record."""
    content: object = [{"text": text}] if kind == "user" else text
    return orjson.dumps({"id": own, "type": kind, "content": content,
                         "timestamp": f"2026-01-01T10:00:{second:02d}Z"}) + b"\n"


def follow_lines(path: Path, lines: list[bytes], rules: object = RULES) -> list[list[str]]:
    """Write the lines one by one, polling after each: the empty-turn ids each poll reported."""
    from replay.core.live.follow import SessionFollower

    path.write_bytes(orjson.dumps(GEMINI_HEAD) + b"\n")
    follower = SessionFollower(path, rules=rules)  # type: ignore[arg-type]
    reported = [[empty.id for empty in follower.poll().new_empty]]
    for line in lines:
        with open(path, "ab") as handle:
            handle.write(line)
        reported.append([empty.id for empty in follower.poll().new_empty])
    follower.close()
    return reported


def test_following_reports_a_missing_reply_once_a_cancel_says_none_is_coming(
        tmp_path: Path) -> None:
    lines = [gemini_line("1", "user", "list the files", 0),
             gemini_line("2", "gemini", "a.py and b.py", 4),
             gemini_line("3", "user", "summarise the failing tests", 10),
             gemini_line("4", "info", "Request cancelled.", 13),
             gemini_line("5", "user", "summarise the failing tests", 18),
             gemini_line("6", "gemini", "Two tests fail.", 25)]
    reported = follow_lines(tmp_path / "g.jsonl", lines)
    # Not while #3 waits (it may still be answered), once at the cancel, never again.
    assert reported == [[], [], [], [], ["3+no-reply"], [], []]
    # Without the option nothing is reported.
    assert follow_lines(tmp_path / "h.jsonl", lines, DEFAULT_RULES) == [[]] * 7


def test_following_reports_it_at_the_next_request_when_nothing_else_says_so(
        tmp_path: Path) -> None:
    lines = [gemini_line("1", "user", "build the docs", 0),
             gemini_line("2", "user", "hello? build the docs", 30),
             gemini_line("3", "gemini", "Built.", 35)]
    assert follow_lines(tmp_path / "g.jsonl", lines) == [[], [], ["1+no-reply"], []]


def test_following_a_request_that_gets_its_reply_reports_nothing(tmp_path: Path) -> None:
    lines = [gemini_line("1", "user", "build the docs", 0),
             gemini_line("2", "gemini", "Built.", 35),
             gemini_line("3", "user", "thanks", 40)]
    assert follow_lines(tmp_path / "g.jsonl", lines) == [[], [], [], []]


def test_agree_names_the_missing_reply_as_the_app_does(
    gemini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from replay.core.annotate.agree import turn_name

    assert (turn_name("3+no-reply", 2), turn_name("m3", 2), turn_name("m3", None)) == (
        "#3+", "#3", "m3")
    journal = tmp_path / "j.jsonl"
    for reviewer, label in (("ana", "artifact"), ("bo", "breakdown")):
        assert _run(capsys, "label", str(gemini), "--turn", "#3+", "--label", label,
                    "--reviewer", reviewer, "--annotations", str(journal))[0] == 0
    status, out, _ = _run(capsys, "agree", str(journal), "--suggester")
    assert status == 0
    assert "g-missing  #3+   artifact  breakdown" in out  # the disagreement
    assert "#3+   bo        artifact   no-reply  breakdown" in out  # the overrule, from the CLI


def test_following_takes_a_missing_reply_back_when_the_reply_comes_after_all(
        tmp_path: Path) -> None:
    from replay.core.live.follow import SessionFollower

    path = tmp_path / "g.jsonl"
    path.write_bytes(orjson.dumps(GEMINI_HEAD) + b"\n")
    follower = SessionFollower(path, rules=RULES)
    follower.poll()
    seen = []
    for line in (gemini_line("1", "user", "build the docs", 0),
                 gemini_line("2", "error", "API error: 503", 3),
                 gemini_line("3", "gemini", "Built after a retry.", 9),
                 gemini_line("4", "user", "thanks", 12)):
        with open(path, "ab") as handle:
            handle.write(line)
        update = follower.poll()
        seen.append(([e.id for e in update.new_empty],
                     [(t.id, t.index, t.role) for t in update.retracted]))
    follower.close()
    assert seen == [([], []), (["1+no-reply"], []), ([], [("1+no-reply", 0, "assistant")]),
                    ([], [])]
