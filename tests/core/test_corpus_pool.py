"""`scan` over a corpus: one pure function per session, run by 1 job, N processes or Dask."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from replay.cli import main
from replay.core.corpus.pool import run_tasks
from replay.core.corpus.tasks import SessionTask, TaskResult, plan, scan_task
from tests.conftest import REALDATA, realdata


def _corpus(tmp_path: Path, sessions: int = 12) -> Path:
    """A folder of chat sessions with empty turns, plus one file no reader knows."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for number in range(sessions):
        messages = [{"role": "user", "content": f"task {number}"},
                    {"role": "assistant", "content": "" if number % 3 == 0 else "ok"},
                    {"role": "user", "content": ""}]
        (folder / f"s{number:02d}.json").write_text(
            json.dumps({"id": f"conv-{number}", "messages": messages}), encoding="utf-8")
    return folder


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict], str]:
    status = main(["scan", "--json", *args])
    out, err = capsys.readouterr()
    return status, [orjson.loads(line) for line in out.splitlines()], err


def test_scan_task_is_pure_and_gives_the_scan_json_objects(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, 1)
    path = folder / "s00.json"
    before = path.read_bytes()
    task = SessionTask(str(path))
    first, second = scan_task(task), scan_task(task)
    assert first == second and first.error is None
    (report,) = first.reports
    assert report["session_id"] == "conv-0" and report["turns"] == 3
    assert [(e["index"], e["role"]) for e in report["empty_turns"]] == [(1, "assistant"),
                                                                        (2, "user")]
    assert path.read_bytes() == before


def test_an_unreadable_task_is_an_error_value_not_an_exception(tmp_path: Path) -> None:
    result = scan_task(SessionTask(str(tmp_path / "gone.json"), "chat-json"))
    assert result.reports == [] and "gone.json" in (result.error or "")


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_many_jobs_print_what_one_job_prints_in_the_same_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    folder = _corpus(tmp_path)
    (tmp_path / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    paths = [str(folder / name) for name in sorted(p.name for p in folder.iterdir())]
    paths.insert(5, str(tmp_path / "notes.txt"))
    one = _scan(capsys, "--jobs", "1", *paths)
    many = _scan(capsys, "--jobs", jobs, *paths)
    assert one == many
    status, reports, err = many
    assert status == 2 and len(reports) == 12
    assert [r["session_id"] for r in reports] == [f"conv-{n}" for n in range(12)]
    assert err.count("\n") == 1 and "notes.txt" in err


def test_a_listed_source_is_one_task_per_session_in_the_one_job_order(
        capsys: pytest.CaptureFixture[str]) -> None:
    project = realdata("claude-code")
    tasks = plan(project)
    assert len(tasks) > 5 and all(task.entry is not None for task in tasks)
    one = _scan(capsys, "--jobs", "1", str(REALDATA))
    two = _scan(capsys, "--jobs", "2", str(REALDATA))
    # SOURCES.md beside the transcripts is no session candidate: not read, not said.
    assert one == two and one[0] == 0 and len(one[1]) == 20 and one[2] == ""


def test_a_session_gone_between_listing_and_reading_is_an_error_of_its_own(
        tmp_path: Path) -> None:
    folder = _corpus(tmp_path, 4)
    tasks = plan(folder)
    # Chat files may hold many sessions each: not listable, but still one task per file.
    assert [Path(task.source).name for task in tasks] == [f"s0{n}.json" for n in range(4)]
    assert not any(task.required for task in tasks)
    (folder / "s02.json").unlink()
    results = list(run_tasks(tasks, jobs=2))
    assert [r.reports[0]["session_id"] if r.reports else None for r in results] == [
        "conv-0", "conv-1", None, "conv-3"]
    assert "s02.json" in (results[2].error or "")


def test_run_tasks_keeps_task_order_whatever_finishes_first(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, 6)
    tasks = [SessionTask(str(folder / f"s{n:02d}.json")) for n in (5, 0, 3, 1, 4, 2)]
    results = list(run_tasks(tasks, jobs=3))
    assert [r.reports[0]["session_id"] for r in results] == [
        f"conv-{n}" for n in (5, 0, 3, 1, 4, 2)]
    assert results == [scan_task(task) for task in tasks]


def test_jobs_must_be_a_positive_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["scan", "--jobs", "0", "x"])
    assert raised.value.code == 2
    assert "expected 1 or more" in capsys.readouterr().err


def test_a_url_is_read_through_fsspec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fsspec = pytest.importorskip("fsspec", reason="the replay[dask] extra is not installed")
    folder = _corpus(tmp_path, 3)
    memory = fsspec.filesystem("memory")
    for path in sorted(folder.iterdir()):
        memory.pipe(f"/corpus-test/{path.name}", path.read_bytes())
    try:
        status, reports, err = _scan(capsys, "--jobs", "1", "memory://corpus-test")
    finally:
        memory.rm("/corpus-test", recursive=True)
    assert status == 0 and err == ""
    assert [r["path"] for r in reports] == [
        memory.unstrip_protocol(f"/corpus-test/s0{n}.json") for n in range(3)]
    local = _scan(capsys, "--jobs", "1", *sorted(str(p) for p in folder.iterdir()))[1]
    assert [{**r, "path": ""} for r in reports] == [{**r, "path": ""} for r in local]


@pytest.fixture(scope="module")
def local_cluster() -> object:
    """A Dask cluster of two worker processes on this machine."""
    pytest.importorskip("dask.bag", reason="the replay[dask] extra is not installed")
    distributed = pytest.importorskip("distributed",
                                      reason="the replay[dask] extra is not installed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    yield cluster
    cluster.close()


def test_dask_local_cluster_gives_the_output_of_one_job(
        local_cluster: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _corpus(tmp_path, 8)
    (tmp_path / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    address = local_cluster.scheduler_address  # type: ignore[attr-defined]
    paths = [str(folder), str(tmp_path / "notes.txt"), str(realdata("opencode"))]
    one = _scan(capsys, "--jobs", "1", *paths)
    on_dask = _scan(capsys, "--dask", address, *paths)
    assert on_dask == one
    assert len(one[1]) == 8 + 6 and one[2].count("\n") == 1
    # Each session ran as its own task on a worker process, not in this process.
    client = __import__("distributed").Client(address)
    try:
        workers = client.run(lambda: __import__("os").getpid())
    finally:
        client.close()
    assert len(workers) == 2 and __import__("os").getpid() not in workers.values()


def test_dask_without_a_reachable_scheduler_is_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the replay[dask] extra is not installed")
    folder = _corpus(tmp_path, 1)
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status, reports, err = _scan(capsys, "--dask", "tcp://127.0.0.1:9", str(folder))
    assert status == 2 and reports == []
    assert err.count("\n") == 1 and "tcp://127.0.0.1:9" in err


def test_task_results_pickle_for_the_worker_processes() -> None:
    import pickle

    result = TaskResult(reports=[{"path": "x", "empty_turns": []}], error=None)
    assert pickle.loads(pickle.dumps(result)) == result
