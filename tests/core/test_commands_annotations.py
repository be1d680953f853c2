"""`replay label`, `replay export` and `replay agree` run through the real command line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.annotate.journal import Journal
from replay.core.paths import data_dir
from tests.conftest import realdata

CHAT = {
    "messages": [
        {"role": "user", "content": "Please fix the flaky test"},
        {"role": "assistant", "content": "Plan: pin the seed, rerun the suite."},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "Done, =SUM(1) passes"},
        {"role": "user", "content": "<conversation_data>\n\n</conversation_data>"},
        {"role": "assistant", "content": "Continuing."},
    ]
}

MULTI = [
    {"id": "conv-a", "messages": [
        {"role": "user", "content": "hello", "id": "a1"},
        {"role": "assistant", "content": "", "id": "shared"}]},
    {"id": "conv-b", "messages": [
        {"role": "user", "content": "again", "id": "b1"},
        {"role": "assistant", "content": "", "id": "shared"},
        {"role": "user", "content": "", "id": "b3"}]},
]


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    return path


@pytest.fixture
def multi(tmp_path: Path) -> Path:
    path = tmp_path / "multi.json"
    path.write_text(json.dumps(MULTI), encoding="utf-8")
    return path


def _journals() -> list[Path]:
    folder = data_dir() / "journals"
    return sorted(folder.iterdir()) if folder.exists() else []


def _label(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["label", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_label_saves_to_the_user_data_journal_never_beside_the_session(
    chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _label(capsys, str(chat), "--turn", "m2", "--label", "approval",
                              "--note", "a plan, then silence", "--confidence", "high",
                              "--reviewer", "ana")
    assert status == 0 and err == ""
    [journal] = _journals()
    assert journal.name.startswith("chat-json-path-")
    assert out == (f"saved approval (high) on #3 m2 (user, empty: blank-text) by ana in "
                   f"{journal}\n")
    [record] = Journal(journal).load().records
    assert {k: record[k] for k in ("turn_id", "turn_index", "label", "note", "confidence",
                                   "reviewer")} == {
        "turn_id": "m2", "turn_index": 2, "label": "approval", "note": "a plan, then silence",
        "confidence": "high", "reviewer": "ana"}
    assert [p.name for p in chat.parent.iterdir()] == ["chat.json"]


def test_label_by_position_and_reviewer_from_config(
    chat: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('reviewer = "from-config"\n')
    monkeypatch.setenv("REPLAY_CONFIG_FILE", str(config))
    status, out, _ = _label(capsys, str(chat), "--turn", "#5", "--label", "continue")
    assert status == 0
    assert out.startswith("saved continue (medium) on #5 m4 (user, empty: empty-wrapper) "
                          "by from-config in ")


def test_label_a_non_empty_turn_into_a_chosen_journal(
    chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "mine.jsonl"
    status, out, err = _label(capsys, str(chat), "--turn", "#1", "--label", "other",
                              "--reviewer", "ana", "--annotations", str(target))
    assert (status, out) == (2, "")
    assert err == ("replay: #1 (m0, user) is not an empty turn; the nearest empty turn is #3; "
                   "pass --any-turn to label it anyway\n")
    assert not target.exists()
    status, out, _ = _label(capsys, str(chat), "--turn", "#1", "--label", "other", "--any-turn",
                            "--reviewer", "ana", "--annotations", str(target))
    assert status == 0
    assert out == f"saved other (medium) on #1 m0 (user, not an empty turn) by ana in {target}\n"
    assert [r["turn_id"] for r in Journal(target).load().records] == ["m0"]
    assert _journals() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--turn", "m9", "--label", "approval"],
         "replay: {chat}: no turn with id 'm9' (6 turns)\n"),
        (["--turn", "#7", "--label", "approval"],
         "replay: {chat}: turn #7 is out of range: 6 turns (#1 to #6)\n"),
        (["--turn", "#0", "--label", "approval"],
         "replay: {chat}: turns are counted from 1: the first turn is #1\n"),
        # The empty turn m2 is scan --json's index 2: "#2" (the turn before it) is refused as
        # not empty, and a bare "2" is refused as ambiguous; neither labels anything.
        (["--turn", "2", "--label", "approval"],
         "replay: {chat}: '2' is not a turn id; write '#2' for turn #2 as the app counts "
         "(from 1); a 0-based index 2 from `scan --json` is '#3'\n"),
        (["--turn", "#2", "--label", "approval"],
         "replay: #2 (m1, assistant) is not an empty turn; the nearest empty turn is #3; "
         "pass --any-turn to label it anyway\n"),
        (["--turn", "m", "--label", "approval"],
         "replay: {chat}: no turn with id 'm' (6 turns)\n"),
        (["--turn", "m2", "--label", "nope"],
         "replay: unknown label 'nope'; labels: continue, approval, resumption, reflect, "
         "artifact, thinking, context-reset, breakdown, other\n"),
    ],
)
def test_label_bad_turn_or_label_is_one_line_and_exit_2(
    chat: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = _label(capsys, str(chat), *args)
    assert status == 2 and out == ""
    assert err == message.format(chat=chat)
    assert _journals() == []


def test_label_unreadable_path_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = _label(capsys, str(tmp_path / "absent.json"), "--turn", "m1",
                            "--label", "approval")
    assert status == 2
    assert err == f"replay: {tmp_path / 'absent.json'}: no such file or directory\n"


def test_label_with_a_custom_label_set(
    chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    labels = tmp_path / "labels.toml"
    labels.write_text('[[label]]\nname = "nudge"\nkey = "n"\ntitle = "Nudge"\n')
    status, out, _ = _label(capsys, str(chat), "--turn", "m2", "--label", "nudge",
                            "--labels", str(labels), "--reviewer", "ana")
    assert status == 0 and out.startswith("saved nudge ")
    status, _, err = _label(capsys, str(chat), "--turn", "m2", "--label", "approval",
                            "--labels", str(labels))
    assert status == 2 and err == "replay: unknown label 'approval'; labels: nudge\n"
    labels.write_text('[[label]]\nname = "nudge"\n')
    status, _, err = _label(capsys, str(chat), "--turn", "m2", "--label", "nudge",
                            "--labels", str(labels))
    assert status == 2
    assert err == (f"replay: {labels}: label 'nudge': expected `key` to be one printable "
                   "character\n")


def test_label_searches_every_session_of_a_multi_session_file(
    multi: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _label(capsys, str(multi), "--turn", "b3", "--label", "breakdown",
                            "--reviewer", "ana")
    assert status == 0 and " on #3 b3 (user, empty: blank-text) " in out
    [journal] = _journals()
    assert journal.name == "chat-json-conv-b.jsonl"
    status, _, err = _label(capsys, str(multi), "--turn", "shared", "--label", "thinking")
    assert status == 2
    assert err == ("replay: turn id 'shared' appears in 2 sessions (conv-a, conv-b); "
                   "add --session ID\n")
    status, out, _ = _label(capsys, str(multi), "--turn", "shared", "--label", "thinking",
                            "--session", "conv-a", "--reviewer", "ana")
    assert status == 0 and " on #2 shared (assistant, " in out
    assert [p.name for p in _journals()] == ["chat-json-conv-a.jsonl", "chat-json-conv-b.jsonl"]
    status, _, err = _label(capsys, str(multi), "--turn", "#1", "--label", "thinking")
    assert status == 2
    assert err == f"replay: {multi} holds 2 sessions: name the turn by its id, not #1\n"
    status, _, err = _label(capsys, str(multi), "--turn", "1", "--label", "thinking")
    assert status == 2
    assert err == (f"replay: {multi} (2 sessions, 5 turns): '1' is not a turn id; write '#1' "
                   "for turn #1 as the app counts (from 1); a 0-based index 1 from "
                   "`scan --json` is '#2'\n")


def test_label_when_the_journal_cannot_be_written_exits_1(
    chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    status, out, err = _label(capsys, str(chat), "--turn", "m2", "--label", "approval",
                              "--annotations", str(blocker / "j.jsonl"))
    assert status == 1 and out == ""
    assert err.startswith(f"replay: cannot create the folder for annotations {blocker}: ")
    assert err.endswith("; the annotation was not saved\n") and err.count("\n") == 1
    # A device as journal is bad input, refused before the session or the device is read.
    status, out, err = _label(capsys, str(chat), "--turn", "m2", "--label", "approval",
                              "--annotations", "/dev/zero")
    assert status == 2
    assert err == ("replay: /dev/zero: cannot use a character device as an annotation journal; "
                   "expected a regular file\n")


def _annotate(chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for turn, label, reviewer in (("m2", "approval", "ana"), ("m2", "continue", "bo"),
                                  ("m4", "continue", "bo")):
        assert _label(capsys, str(chat), "--turn", turn, "--label", label,
                      "--reviewer", reviewer, "--note", "=1+1" if reviewer == "ana" else "")[0] == 0


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_export_csv_to_standard_output(chat: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _annotate(chat, capsys)
    assert main(["export", str(chat)]) == 0
    out, err = capsys.readouterr()
    assert err == "replay: wrote 3 rows (csv) to standard output\n"
    assert not out.startswith("\ufeff")
    assert out.count("\r\n") == 4
    rows = _csv(out)
    assert [(r["turn_id"], r["reviewer"], r["label"], r["label_title"]) for r in rows] == [
        ("m2", "ana", "approval", "Tacit approval"), ("m2", "bo", "continue", "Continue"),
        ("m4", "bo", "continue", "Continue")]
    assert rows[0]["note"] == "'=1+1"
    assert rows[0]["after_excerpt"] == "#4 assistant: Done, =SUM(1) passes"
    assert rows[0]["format"] == "chat-json" and rows[0]["turn_index"] == "2"


def test_export_to_files_and_filters(
    chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _annotate(chat, capsys)
    target = tmp_path / "out.csv"
    assert main(["export", str(chat), "-o", str(target), "--reviewer", "bo"]) == 0
    assert capsys.readouterr().err == f"replay: wrote 2 rows (csv) to {target}\n"
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfsession_id,")
    assert [r["reviewer"] for r in _csv(data.decode("utf-8-sig"))] == ["bo", "bo"]

    lines = tmp_path / "out.jsonl"
    assert main(["export", str(chat), "-o", str(lines), "--reviewer", "ana", "--all-empty"]) == 0
    assert capsys.readouterr().err == f"replay: wrote 2 rows (jsonl) to {lines}\n"
    records = [orjson.loads(line) for line in lines.read_bytes().splitlines()]
    assert [(r["turn_id"], r["label"], r["note"]) for r in records] == [
        ("m2", "approval", "=1+1"), ("m4", "", "")]

    assert main(["export", str(chat), "--as", "jsonl", "--reviewer", "nobody"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == (
        "replay: wrote 0 rows (jsonl) to standard output: no annotation by nobody yet (label "
        "turns in the app or with replay label; --all-empty also writes a row per empty turn)\n")


def test_export_reads_a_chosen_journal_and_reports_bad_input(
    chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    journal = tmp_path / "j.jsonl"
    assert _label(capsys, str(chat), "--turn", "m4", "--label", "artifact", "--reviewer", "cy",
                  "--annotations", str(journal))[0] == 0
    with open(journal, "ab") as handle:
        handle.write(b'{"torn')
    assert main(["export", str(chat), "--annotations", str(journal)]) == 0
    out, err = capsys.readouterr()
    assert [r["label"] for r in _csv(out)] == ["artifact"]
    assert err == (f"replay: warning: {journal}:2: unreadable annotation line ignored "
                   "(torn or not JSON)\nreplay: wrote 1 row (csv) to standard output\n")
    assert main(["export", str(tmp_path / "nope.json")]) == 2
    missing = tmp_path / "nope.json"
    assert capsys.readouterr().err == f"replay: {missing}: no such file or directory\n"


def _write_journal(path: Path, reviewer: str, labels: dict[str, str]) -> None:
    journal = Journal(path)
    for index, (turn, label) in enumerate(labels.items()):
        journal.append({"session_id": "s1", "turn_id": turn, "turn_index": index, "label": label,
                        "reviewer": reviewer})


def test_agree_json_and_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ana, bo = tmp_path / "ana.jsonl", tmp_path / "bo.jsonl"
    _write_journal(ana, "ana", {"t1": "approval", "t2": "continue", "t3": "reflect",
                                "t4": "artifact"})
    _write_journal(bo, "bo", {"t1": "approval", "t2": "artifact", "t3": "reflect",
                              "t4": "artifact"})
    assert main(["agree", str(ana), str(bo), "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert err == ""
    assert report["journals"] == [str(ana), str(bo)]
    assert report["counts"] == {"ana": 4, "bo": 4}
    # Same table as tests/core/test_agree.py: kappa = 2/3.
    assert report["pairs"][0]["n"] == 4
    assert report["pairs"][0]["kappa"] == pytest.approx(2 / 3)
    assert report["disagreements"] == [
        {"session_id": "s1", "turn_id": "t2", "turn_index": 1, "number": 2,
         "labels": {"ana": "continue", "bo": "artifact"}}]
    assert main(["agree", str(tmp_path)]) == 0
    out, _ = capsys.readouterr()
    assert "2 reviewers · 4 annotated turns · 2 journals" in out
    assert "0.667" in out and "ana · bo" in out and "1 disagreement" in out
    # The disagreement names the turn as a person sees it in the app, not by its id.
    row = next(line for line in out.splitlines() if line.startswith("s1 "))
    assert row.split() == ["s1", "#2", "continue", "artifact"]


def test_agree_missing_journal_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["agree", str(tmp_path / "none.jsonl")]) == 2
    missing = tmp_path / "none.jsonl"
    assert capsys.readouterr().err == f"replay: {missing}: no such journal file or folder\n"


def test_a_transcript_given_as_a_journal_is_one_line_and_exit_2(
        chat: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(json.dumps({"type": "user", "uuid": f"u{n}"}) + "\n"
                                  for n in range(50)), encoding="utf-8")
    for command in (["agree", str(transcript)], ["report", str(chat), "--annotations",
                                                 str(transcript)],
                    ["export", str(chat), "--annotations", str(transcript)]):
        assert main(command) == 2, command
        out, err = capsys.readouterr()
        assert err == (f"replay: {transcript}: not an annotation journal: no line is an "
                       "annotation record (line 1: missing text field 'session_id')\n"), command
    # A journal holding only a torn line (a crash in its first write) is still a journal.
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"torn')
    assert main(["agree", str(torn)]) == 0
    assert "torn or not JSON" in capsys.readouterr().err


def test_export_all_empty_of_the_real_opencode_exports(capsys: pytest.CaptureFixture[str]) -> None:
    folder = realdata("opencode")
    assert main(["export", str(folder), "--all-empty"]) == 0
    out, err = capsys.readouterr()
    assert err == "replay: wrote 6 rows (csv) to standard output\n"
    rows = _csv(out)
    # PRODUCT.md: six empty turns, five assistant and one user compaction request.
    assert sorted(r["role"] for r in rows) == ["assistant"] * 5 + ["user"]
    assert [r["empty_reason"] for r in rows if r["role"] == "user"] == ["compaction-request"]
    assert all(r["label"] == "" and r["before_excerpt"].startswith("#") for r in rows)


def test_agree_leaves_out_labels_of_turns_that_now_have_content(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ana, bo = tmp_path / "ana.jsonl", tmp_path / "bo.jsonl"
    _write_journal(ana, "ana", {"t1": "approval", "t2": "continue", "t3": "reflect"})
    _write_journal(bo, "bo", {"t1": "approval", "t2": "artifact", "t3": "reflect"})
    # The app found t2 showing content after ana labelled it (a reply still being written).
    Journal(ana).append({"session_id": "s1", "turn_id": "t2", "turn_index": 1,
                         "label": "continue", "reviewer": "ana", "turn_has_content": True})
    assert main(["agree", str(ana), str(bo), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["left_out_with_content"] == 1
    assert report["counts"] == {"ana": 2, "bo": 3}
    assert report["disagreements"] == [] and report["pairs"][0]["n"] == 2
    assert main(["agree", str(ana), str(bo)]) == 0
    out = capsys.readouterr().out
    assert "left out: 1 label of turns that showed content after they were labelled" in out
    # A label saved again after the mark counts again.
    Journal(ana).append({"session_id": "s1", "turn_id": "t2", "turn_index": 1,
                         "label": "continue", "reviewer": "ana"})
    assert main(["agree", str(ana), str(bo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["left_out_with_content"] == 0
