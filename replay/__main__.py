"""Run `python -m replay`."""

from replay.cli import main

raise SystemExit(main())
