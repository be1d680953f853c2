"""The reader registry: lazy sniffing order matches the readers' own priorities."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from replay.core.readers import SNIFF_ORDER, all_readers

REPO = Path(__file__).resolve().parents[2]


def test_sniff_order_lists_every_reader_by_priority() -> None:
    by_module = {}
    for reader in all_readers():
        module = next(name for name, value in sys.modules.items()
                      if name.startswith("replay.core.readers.")
                      and getattr(value, "READER", None) is reader)
        by_module[module.rsplit(".", 1)[1]] = reader
    assert set(SNIFF_ORDER) == set(by_module)
    priorities = [by_module[name].priority for name in SNIFF_ORDER]
    assert priorities == sorted(priorities)


def test_detecting_a_claude_code_file_imports_few_readers() -> None:
    sample = REPO / "sample_sessions" / "refactor.claude-code.jsonl"
    code = (
        "import sys; from pathlib import Path\n"
        "from replay.core.readers import detect_reader\n"
        f"print(detect_reader(Path({str(sample)!r})).name)\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules"
        " if m.startswith('replay.core.readers.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "claude-code"
    assert "codex" not in out[1] and "chat_json" not in out[1] and "aider" not in out[1]
