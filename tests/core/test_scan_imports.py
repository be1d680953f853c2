"""`replay scan --json FILE` runs without importing what a scan of one file does not use.

Issue 24 measures the whole process of that scan against a bare `orjson.loads` loop, so its
start-up counts: each module below was on its path, cost every run of it, and was taken off
(instructions at start-up, `valgrind --tool=callgrind`: 587M -> 438M; the loop's 235M).
The test fails when one comes back, naming it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REALDATA, REPO

NOT_ON_THE_SCAN_PATH = {
    # A process pool (and the multiprocessing, socket, pickle and logging it brings): one
    # file is read in this process.
    "concurrent.futures": "the process pool",
    "multiprocessing": "multiprocessing",
    "socket": "socket (multiprocessing's)",
    "logging": "logging (concurrent.futures')",
    # `--no-cache`: the cache's SQLite and hashes are never opened.
    "replay.core.corpus.cache": "the scan cache",
    "sqlite3": "sqlite3",
    # hashlib loads OpenSSL; only spooling standard input, the cache and subagent links
    # hash anything.
    "hashlib": "hashlib",
    "_hashlib": "OpenSSL's hashlib",
    # The user's directories: only standard input is spooled, and only the cache lives there.
    "platformdirs": "platformdirs",
    # Settings and label sets (TOML) and journals: a scan reads none.
    "tomllib": "the TOML parser",
    "replay.config": "the settings",
    "replay.core.session.labels": "label sets",
    "replay.core.annotate": "annotation journals",
    # The app and its libraries.
    "textual": "textual",
    "rich": "rich (only the table output prints with it)",
    "replay.ui": "the app",
}
"""Module (or its package) -> what it is, for the failure message."""

NOT_ON_A_WINDOWED_SCAN = {
    # A file read whole keeps its reports pickled past a size (`corpus.spill`); a file of
    # one session read as it streams never does.
    "pickle": "pickle (spilling reports to disk)",
}

PROBE = r"""
import json, os, sys, tempfile
scratch = tempfile.mkdtemp()
os.environ.update(REPLAY_CONFIG_FILE=os.path.join(scratch, "config.toml"),
                  REPLAY_DATA_DIR=scratch, REPLAY_CACHE_DIR=scratch)
from replay.cli import main
status = main(["scan", "--json", "--no-cache", *sys.argv[1:]])
sys.stdout.flush()
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\n")
sys.exit(status)
"""


def _scan_modules(*paths: Path) -> tuple[list[dict[str, object]], set[str]]:
    """The reports of a scan in a fresh interpreter, and every module imported by its end."""
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, paths)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    reports = [json.loads(text) for text in done.stdout.splitlines()]
    return reports, set(json.loads(line.removeprefix("MODULES ")))


def _offenders(modules: set[str], banned: dict[str, str] = NOT_ON_THE_SCAN_PATH) -> list[str]:
    return sorted(f"{name} ({what})" for name, what in banned.items()
                  if any(module == name or module.startswith(name + ".")
                         for module in modules))


CLAUDE_CODE = sorted((REALDATA / "claude-code").glob("*.jsonl"),
                     key=lambda path: -path.stat().st_size) if REALDATA.exists() else []


@pytest.mark.skipif(not CLAUDE_CODE, reason="needs ../shared/realdata")
def test_a_scan_of_one_claude_code_file_imports_none_of_them() -> None:
    reports, modules = _scan_modules(CLAUDE_CODE[0])
    assert reports and reports[0]["turns"] > 0
    assert _offenders(modules, NOT_ON_THE_SCAN_PATH | NOT_ON_A_WINDOWED_SCAN) == []
    # The scan did run its whole path: reader, detection and (for its empty turns) the
    # suggester.
    assert "replay.core.readers.claude_code_builder" in modules
    assert "replay.core.suggest.signals" in modules


def test_a_scan_of_each_sample_imports_none_of_them() -> None:
    samples = sorted(path for path in (REPO / "sample_sessions").iterdir()
                     if path.is_file() and path.suffix != ".md")
    for sample in samples:
        reports, modules = _scan_modules(sample)
        assert reports, sample
        assert _offenders(modules) == [], sample.name


def test_the_probe_sees_a_module_that_comes_back() -> None:
    """The test can fail: the scan cache, used (no `--no-cache`), is named."""
    probe = PROBE.replace('"--no-cache", ', "")
    done = subprocess.run([sys.executable, "-c", probe,
                           str(REPO / "sample_sessions" / "refactor.claude-code.jsonl")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    named = _offenders(set(json.loads(line.removeprefix("MODULES "))))
    assert "replay.core.corpus.cache (the scan cache)" in named
    assert "sqlite3 (sqlite3)" in named
