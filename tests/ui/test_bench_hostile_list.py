"""The hostile-input bench's session-list phases end on an opencode.db too: its filter keeps
no row there, and enter then opened nothing while the bench waited for a session for ever
(the app row of `bench_hostile.py --formats opencode-db` never came)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType

from replay.ui.screens.picker import SessionPicker
from tests.ui.conftest import build_app, wait_until

REPO = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_hostile",
                                                  REPO / "bench" / "bench_hostile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_list_phases_open_a_session_of_an_opencode_db(tmp_path: Path) -> None:
    bench = _bench()
    database = tmp_path / "opencode.db"
    bench.opencode_db(300_000, database)  # the bench's own maker: real exports, repeated
    app = build_app(database)
    phases: list[str] = []
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.rows))
        picker = app.screen
        assert len(picker.rows) > 1
        # Bounded: before, this never returned (a failure here, not a hung test run).
        await asyncio.wait_for(bench._list_phases(pilot, picker, phases.append), 120)
        assert phases == ["counted", "scroll", "sort", "filter", "open"]
        assert app.replay_screen is not None and app.replay_screen.session.turns
