"""`replay scan --json` prints the same bytes as before a change, on every real and sample file.

The digests in `scan_golden.json` are the SHA-256 of each line `replay scan --json` printed,
per file (or folder) and rule options, at the commit that wrote them; a speed change must
leave every one of them as it is. The lines themselves are not kept (they quote the real
files). A deliberate change of the output rewrites them, named in its commit:

    python tests/core/test_scan_golden.py --write
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
REALDATA = REPO.parent / "shared" / "realdata"
GOLDEN = Path(__file__).with_name("scan_golden.json")

OPTIONS: dict[str, list[str]] = {
    "default": [],
    "tool-only": ["--tool-only"],
    "missing-replies": ["--missing-replies"],
    "both": ["--tool-only", "--missing-replies"],
}
"""Every combination of the rule options `scan` takes."""

REALSHAPED_BYTES = 6_000_000
"""Size of the real-shaped file (`bench/realshaped.py`) among the inputs: long enough for a
streamed scan to let its turns go many times."""


def inputs() -> list[str]:
    """The paths scanned, relative to the repository (as the digests name them)."""
    paths = [f"sample_sessions/{path.name}" for path in sorted((REPO / "sample_sessions").iterdir())
             if path.is_file() and path.suffix != ".md"]
    for path in sorted(REALDATA.rglob("*")):
        if path.is_file() and path.suffix in (".jsonl", ".json") \
                and not path.name.endswith(".meta.json"):
            paths.append(f"../{path.relative_to(REPO.parent)}")
    paths.append("../shared/realdata/claude-code")  # the folder as one path: its sessions linked
    return paths


def _realshaped(folder: Path) -> Path:
    spec = importlib.util.spec_from_file_location("realshaped", REPO / "bench" / "realshaped.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = folder / "realshaped.jsonl"
    module.write(path, REALSHAPED_BYTES, REALDATA / "claude-code")
    return path


def digests() -> dict[str, str]:
    """`option|path|n` -> SHA-256 of the n-th line `scan --json` printed for that path (a
    folder prints one per session), and `option|status` -> its exit status."""
    found: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="golden-") as folder:
        shaped = _realshaped(Path(folder))
        for option, flags in OPTIONS.items():
            done = subprocess.run(
                [sys.executable, "-m", "replay", "scan", "--json", "--no-cache", "--jobs", "1",
                 *flags, *inputs(), str(shaped)], cwd=REPO, capture_output=True, check=False)
            seen: dict[str, int] = {}
            for line in done.stdout.splitlines(keepends=True):
                # The real-shaped file lives in a temporary folder: named by its name.
                line = line.replace(orjson.dumps(str(shaped)), b'"realshaped.jsonl"')
                path = str(orjson.loads(line)["path"])
                number = seen[path] = seen.get(path, -1) + 1
                found[f"{option}|{path}|{number}"] = hashlib.sha256(line).hexdigest()
            found[f"{option}|status"] = str(done.returncode)
    return found


@pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is not beside the repo")
def test_scan_json_is_byte_for_byte_as_recorded() -> None:
    expected = orjson.loads(GOLDEN.read_bytes())
    found = digests()
    changed = sorted(key for key in expected.keys() | found.keys()
                     if expected.get(key) != found.get(key))
    assert not changed, f"scan --json changed for {len(changed)} outputs: {changed[:10]}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(__doc__)
    GOLDEN.write_bytes(orjson.dumps(digests(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
                       + b"\n")
    print(f"wrote {GOLDEN.relative_to(REPO)}")
