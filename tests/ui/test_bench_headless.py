"""`bench/headless.py` starts the app as the app benchmarks measure it (`replay FILE`, headless,
160x45, an auto-pilot), and the benchmarks use it rather than a copy of its lines each."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_sessions"


def _helper() -> Any:
    spec = importlib.util.spec_from_file_location("headless", REPO / "bench" / "headless.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_app_runs_headless_at_the_benchmark_size_under_its_pilot(
        tmp_path: Path, monkeypatch: Any) -> None:
    from replay.ui.app import ReplayApp

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sample = SAMPLE / "refactor.claude-code.jsonl"
    seen: list[tuple[int, int]] = []
    run = ReplayApp.run

    async def pilot(pilot: Any) -> None:
        await pilot.pause()
        seen.append((pilot.app.size.width, pilot.app.size.height))
        pilot.app.exit()

    _helper().run_headless(ReplayApp, pilot, [str(sample)])
    assert seen == [(160, 45)]
    assert ReplayApp.run is run  # put back


def test_no_app_benchmark_repeats_the_start_up() -> None:
    copies = [path.name for path in sorted((REPO / "bench").glob("*.py"))
              if path.name != "headless.py" and "auto_pilot=" in path.read_text()]
    assert copies == []
