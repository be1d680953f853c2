"""The core must stay usable without the TUI: importing it never loads Textual or Rich."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str) -> str:
    """What the code prints in a new interpreter, where nothing is imported yet."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_core_imports_without_textual_or_rich() -> None:
    code = (
        "import sys, pkgutil, importlib, replay.core\n"
        "for m in pkgutil.walk_packages(replay.core.__path__, 'replay.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "from replay.core.readers import all_readers; all_readers()\n"
        "ui = ('textual', 'rich', 'watchfiles')\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ui)\n"
        "print(','.join(bad))\n"
    )
    assert fresh_python(code) == ""


def test_opening_the_app_imports_no_command_module() -> None:
    # Every command module imported at start cost 35 ms before the first screen.
    code = (
        "import sys\n"
        "from replay.cli import app_parser\n"
        "app_parser().parse_args(['session.jsonl'])\n"
        "print(','.join(sorted(n for n in sys.modules if n.startswith('replay.commands.'))))\n"
    )
    assert fresh_python(code) == ""


def test_every_command_module_is_named_after_its_command() -> None:
    from replay.cli import app_parser
    from replay.commands import command_module, command_names

    names = command_names()
    assert names == ["agree", "export", "label", "report", "review", "scan", "sessions", "share",
                     "watch"]
    assert all(command_module(name).NAME == name for name in names)
    help_text = app_parser().format_help()
    assert all(f"  {name} " in help_text for name in names)
