"""The core must stay usable without the TUI: importing it never loads Textual or Rich."""

from __future__ import annotations

import subprocess
import sys


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
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""
