"""A corpus scan on many processes: the listing's work runs in the workers, sessions go out
in batches, sessions of a folder are streamed, and the output never changes with `--jobs`."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.cli import main
from replay.core.corpus import scan as scan_module
from replay.core.corpus.pool import batch_size, default_jobs, local_pool, pool_mapper, run_tasks
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK
from replay.core.corpus.tasks import plan
from replay.core.readers import claude_code
from tests.conftest import realdata
from tests.core.test_claude_code import _project
from tests.core.test_scan_stream import _iso, _long_session

SESSIONS = 140
"""Enough sessions that they go to the workers in batches of more than one."""


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict], str]:
    status = main(["scan", "--json", *args])
    out, err = capsys.readouterr()
    return status, [orjson.loads(line) for line in out.splitlines()], err


def _session(path: Path, number: int, started: float) -> None:
    """A small Claude Code session file: a prompt, an empty reply, a prompt, a reply."""
    records = []
    for index, (kind, text) in enumerate((("user", f"task {number}"), ("assistant", ""),
                                          ("user", "go on"), ("assistant", "done"))):
        content: Any = text if kind == "user" else [{"type": "text", "text": text}]
        records.append({"type": kind, "sessionId": f"s-{number:03d}", "uuid": f"{number}-{index}",
                        "parentUuid": None, "timestamp": _iso(started + 60 * index),
                        "message": {"role": kind, "content": content}})
    path.write_bytes(b"\n".join(orjson.dumps(record) for record in records) + b"\n")


def _mixed_corpus(root: Path) -> list[str]:
    """A project folder whose name order is not its time order, with a foreign file, a
    folder and a dangling link among its `.jsonl` files; a folder of chat files; a file no
    reader knows; a path that is not there."""
    project = root / "project"
    project.mkdir(parents=True)
    for number in range(SESSIONS):
        # Names run one way, start times another (and some share a start time).
        started = 1_760_000_000.0 + 3600.0 * ((number * 37) % (SESSIONS // 2))
        _session(project / f"{number:03d}-{(number * 7919) % 1000:03d}.jsonl", number, started)
    # Not a transcript of any tool (a chat line here would be read, as it is given alone).
    (project / "zz-foreign.jsonl").write_text('{"note": "not a transcript"}\n')
    (project / "a-folder.jsonl").mkdir()
    os.symlink(project / "nowhere.jsonl", project / "b-dangling.jsonl")
    chats = root / "chats"
    chats.mkdir()
    for number in range(5):
        messages = [{"role": "user", "content": f"chat {number}"},
                    {"role": "assistant", "content": "" if number % 2 else "ok"}]
        (chats / f"c{number}.json").write_text(json.dumps({"id": f"c-{number}",
                                                           "messages": messages}))
    (chats / "broken.json").write_text('{"messages": [')
    (root / "notes.txt").write_text("not a transcript\n")
    return [str(project), str(root / "notes.txt"), str(root / "gone.jsonl"), str(chats)]


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_many_jobs_print_what_one_job_prints_on_a_mixed_corpus(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    paths = _mixed_corpus(tmp_path)
    one = _scan(capsys, "--jobs", "1", *paths)
    many = _scan(capsys, "--jobs", jobs, *paths)
    assert many == one
    status, reports, err = one
    assert status == 2 and len(reports) == SESSIONS + 5
    # The project's sessions come oldest first (by the start time its listing glanced at),
    # ties by file name; then the chat files in name order.
    project = [r for r in reports if r["format"] == "claude-code"]
    assert len(project) == SESSIONS
    keys = [(r["empty_turns"][0]["timestamp"], Path(r["path"]).name) for r in project]
    assert keys == sorted(keys) and keys != sorted(keys, key=lambda key: key[1])
    assert [r["session_id"] for r in reports[SESSIONS:]] == [f"c-{n}" for n in range(5)]
    # Paths that cannot be read are said first, while listing; then each skipped file in
    # the place of its folder's output.
    said = [line.split(": ")[1] for line in err.splitlines()]
    assert [Path(line.removeprefix("skipped ")).name for line in said] == [
        "notes.txt", "gone.jsonl", "b-dangling.jsonl", "zz-foreign.jsonl", "broken.json"]


def test_the_listing_reads_file_heads_in_the_workers_not_in_the_parent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the check patches the parent after the workers were forked")
    paths = _mixed_corpus(tmp_path)
    project = Path(paths[0])
    serial = plan(project)
    with local_pool(2) as pool:
        # The workers are up (forked) before this: what is patched now is the parent's alone.
        read_here: list[Path] = []
        head = claude_code._head

        def counted(path: Path) -> bytes:
            read_here.append(path)
            return head(path)

        monkeypatch.setattr(claude_code, "_head", counted)
        pooled = plan(project, mapper=pool_mapper(pool, 2))
    assert pooled == serial and len(pooled) == SESSIONS + 2
    # Recognising the folder looks at its first files here; dating every session does not.
    assert len(read_here) <= 2 * claude_code._SNIFF_FILES < SESSIONS


def test_sessions_go_to_the_workers_in_batches_and_come_back_in_order(tmp_path: Path) -> None:
    paths = _mixed_corpus(tmp_path)
    tasks = plan(paths[0]) + plan(paths[3])
    assert batch_size(len(tasks), 2) > 1
    results = list(run_tasks(tasks, jobs=2))
    assert results == list(run_tasks(tasks, jobs=1))
    assert len(results) == len(tasks)


def test_jobs_default_to_the_number_of_cores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from replay.commands import _corpus

    started: list[int] = []
    real = _corpus.local_pool

    def recording(jobs: int) -> Any:
        started.append(jobs)
        return real(jobs)

    monkeypatch.setattr(_corpus, "local_pool", recording)
    paths = _mixed_corpus(tmp_path)
    assert main(["scan", "--json", paths[3]]) == 1
    assert started == [default_jobs()] == [len(os.sched_getaffinity(0))]
    assert main(["scan", "--json", "--jobs", "1", paths[3]]) == 1
    assert started[-1] == 1


def test_a_session_of_a_folder_is_streamed_like_the_file_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    turns = 10 * (LOOK_BACK + LOOK_AHEAD)
    _long_session(project / "long.jsonl", turns, seed=5)
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def watched(self: Any, final: bool = False) -> None:
        advance(self, final)
        kept.append(len(self.window._turns))

    monkeypatch.setattr(scan_module._WindowScan, "advance", watched)
    status, (report,), err = _scan(capsys, "--jobs", "1", str(project))
    assert status == 0 and err == "" and report["turns"] == turns
    # Read through the window of turns, not whole: memory is the window's, not the session's.
    assert kept and max(kept) <= 2 * (LOOK_BACK + LOOK_AHEAD) + 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_folder_scan_gives_each_file_s_own_scan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    project = _project(tmp_path)
    for name in ("claude-code/claude-code-log__test_data__edge_cases.jsonl",
                 "claude-code/claude-code-log__test_data__real_projects__-Users-dain-workspace-"
                 "JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"):
        shutil.copy(realdata(name), project / Path(name).name)
    _long_session(project / "long.jsonl", 3 * (LOOK_BACK + LOOK_AHEAD), seed=6)
    for flags in ((), ("--tool-only", "--missing-replies")):
        status, listed, _ = _scan(capsys, "--jobs", jobs, *flags, str(project))
        assert status == 0 and len(listed) == 6
        for report in listed:
            alone = _scan(capsys, "--jobs", "1", *flags, report["path"])
            assert alone == (0, [report], "")


def test_dask_partitions_of_many_sessions_give_the_output_of_one_job(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dask.bag", reason="the replay[dask] extra is not installed")
    distributed = pytest.importorskip("distributed",
                                      reason="the replay[dask] extra is not installed")
    import logging

    paths = _mixed_corpus(tmp_path)
    assert batch_size(SESSIONS, 2) > 1
    one = _scan(capsys, "--jobs", "1", *paths)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        on_dask = _scan(capsys, "--dask", cluster.scheduler_address, *paths)
    assert on_dask == one


def test_a_task_has_a_cheap_stable_dask_token(tmp_path: Path) -> None:
    tokenize = pytest.importorskip("dask.base", reason="the replay[dask] extra is not "
                                   "installed").tokenize
    paths = _mixed_corpus(tmp_path)
    tasks = plan(paths[0])
    tokens = [tokenize(task) for task in tasks]
    assert tokens == [tokenize(task) for task in plan(paths[0])]
    assert len(set(tokens)) == len(tasks)
