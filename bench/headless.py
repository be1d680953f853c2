"""Start the app as a user does (`replay ARGS`: settings, detection, then the app), headless at
160x45 and driven by an auto-pilot: the start-up every app benchmark's child shares.

    from headless import run_headless   # (the benchmark's own folder is on sys.path)
    run_headless(ReplayApp, pilot_run, [str(path)])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

SIZE = (160, 45)
"""The terminal the benchmarks measure in: columns, rows."""


def run_headless(app_class: type[Any], pilot: Callable[[Any], Awaitable[None]],
                 arguments: Sequence[str], size: tuple[int, int] = SIZE) -> None:
    """Run `replay ARGUMENTS` with every `app_class` it starts run headless at `size`, `pilot`
    its auto-pilot (which ends the app: `app.exit()`). `app_class.run` is itself again after.
    """
    from replay.cli import main

    run = app_class.run

    def headless_run(self: Any, **_: object) -> None:
        run(self, headless=True, size=size, auto_pilot=pilot)

    app_class.run = headless_run
    try:
        main(list(arguments))
    finally:
        app_class.run = run
