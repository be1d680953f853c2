"""`replay review` through the real command line: the printed queue and clean refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import main
from tests.conftest import SAMPLES, realdata


def queue_lines(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["review", *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_json_lists_every_empty_turn_as_scan_finds_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = queue_lines(capsys, str(SAMPLES), str(realdata("opencode")))
    # The samples' README.md is no session candidate: not read, not said, exit status 0.
    assert main(["scan", str(SAMPLES), str(realdata("opencode")), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    scanned = [json.loads(line) for line in out.splitlines()]
    expected = [(report["format"], empty["index"], empty["id"], empty["reason"])
                for report in scanned for empty in report["empty_turns"]]
    assert sorted((line["format"], line["index"], line["id"], line["reason"])
                  for line in lines) == sorted(expected)
    assert [line["position"] for line in lines] == list(range(1, len(lines) + 1))
    assert {line["of"] for line in lines} == {len(lines)}
    assert lines[-1]["session"] == lines[-1]["sessions"]


def test_same_seed_same_turns(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(SAMPLES), str(realdata("opencode")), str(realdata("claude-code"))]
    first = queue_lines(capsys, *paths, "--sample", "6", "--seed", "11")
    again = queue_lines(capsys, *reversed(paths), "--sample", "6", "--seed", "11")
    assert len(first) == 6
    assert {(line["session_id"], line["id"]) for line in first} == \
        {(line["session_id"], line["id"]) for line in again}
    other = queue_lines(capsys, *paths, "--sample", "6", "--seed", "12")
    assert {(line["session_id"], line["id"]) for line in other} != \
        {(line["session_id"], line["id"]) for line in first}


def test_filters_narrow_the_queue(capsys: pytest.CaptureFixture[str]) -> None:
    aborted = queue_lines(capsys, str(SAMPLES), str(realdata("opencode")), "--reason", "aborted")
    assert aborted and {line["reason"] for line in aborted} == {"aborted"}
    codex = queue_lines(capsys, str(SAMPLES), "--format", "codex")
    assert codex and {line["format"] for line in codex} == {"codex"}
    artifact = queue_lines(capsys, str(SAMPLES), "--suggestion", "artifact")
    assert artifact and {line["suggestion"] for line in artifact} == {"artifact"}


@pytest.mark.parametrize(("args", "message"), [
    (["nowhere"], "nowhere: no such file or directory"),
    ([str(SAMPLES), "--reason", "bogus"], "unknown reason 'bogus'"),
    ([str(SAMPLES), "--format", "bogus"], "unknown format 'bogus'"),
    ([str(SAMPLES), "--suggestion", "bogus"], "unknown label 'bogus'"),
])
def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                    message: str) -> None:
    assert main(["review", *args, "--json"]) == 2
    error = capsys.readouterr().err
    assert message in error and len(error.strip().splitlines()) == 1
    assert "Traceback" not in error


def test_bad_sample_size_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["review", str(SAMPLES), "--sample", "0"])
    assert exited.value.code == 2
    assert "expected 1 or more, got 0" in capsys.readouterr().err  # as --jobs 0 says it


def test_an_unreadable_path_among_good_ones(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing here\n")
    assert main(["review", str(junk), str(SAMPLES / "torch-revert.opencode.json"),
                 "--json"]) == 2
    captured = capsys.readouterr()
    assert "junk.txt" in captured.err and "Traceback" not in captured.err
    assert len(captured.out.splitlines()) == 1
