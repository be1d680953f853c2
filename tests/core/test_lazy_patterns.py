"""The signals' regular expressions are compiled when first used: `replay scan` of a file whose
empty turns a few rules decide compiles only what those rules read, and a lazy pattern
answers as the compiled one does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from replay.core.suggest import human, signals
from replay.core.suggest.patterns import LazyPattern
from tests.conftest import REPO


def _patterns() -> dict[str, LazyPattern]:
    return {f"{module.__name__}.{name}": value
            for module in (signals, human) for name, value in vars(module).items()
            if isinstance(value, LazyPattern)} | {
        f"human._READINGS[{kind}]": pattern for kind, pattern in human._READINGS}


def test_every_phrase_list_is_lazy() -> None:
    found = _patterns()
    # The costly ones by name: complaints, frustration, plans, headings, readings.
    for name in ("_NO_REPLY", "_FRUSTRATION", "_PLAN_WORDS", "_HEADING", "_CONFUSED"):
        assert f"replay.core.suggest.signals.{name}" in found
    assert len(found) >= 16
    assert not [name for module in (signals, human) for name, value in vars(module).items()
                if isinstance(value, re.Pattern)], "compiled at import"


PROBE = r"""
import json, sys
from replay.cli import main
from replay.core.suggest import human, signals
from replay.core.suggest.patterns import LazyPattern
status = main(["scan", "--json", "--no-cache", sys.argv[1]])
sys.stdout.flush()
compiled = sorted(name for module in (signals, human) for name, value in vars(module).items()
                  if isinstance(value, LazyPattern) and value.is_compiled)
compiled += [kind for kind, pattern in human._READINGS if pattern.is_compiled]
sys.stderr.write("COMPILED " + json.dumps(compiled) + "\n")
sys.exit(status)
"""


def test_a_scan_compiles_only_what_its_rules_read(tmp_path: Path) -> None:
    # Empty prompts after /clear: `context-command` decides each from the command before
    # and the reply after (its headings); no complaint, plan or reading is looked for.
    path = tmp_path / "clears.jsonl"
    lines = []
    for number in range(50):
        stamp = f"2026-03-01T10:{number:02d}:0"
        lines += [
            {"type": "user", "uuid": f"c{number}", "timestamp": stamp + "0.000Z",
             "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
            {"type": "user", "uuid": f"e{number}", "timestamp": stamp + "1.000Z",
             "message": {"role": "user", "content": ""}},
            {"type": "assistant", "uuid": f"a{number}", "timestamp": stamp + "2.000Z",
             "message": {"role": "assistant", "id": f"m{number}",
                         "content": [{"type": "text", "text": "hello again?!"}]}}]
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (report,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert {empty["suggestion"] for empty in report["empty_turns"]} == {"context-reset"}
    assert len(report["empty_turns"]) == 50
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("COMPILED ")]
    compiled = set(json.loads(line.removeprefix("COMPILED ")))
    assert compiled <= {"_COMMAND", "_HEADING"}, compiled
    assert "_HEADING" in compiled  # it did read the reply's headings


@given(text=st.text(alphabet="ab?!. \n#*-1:<>/", max_size=40),
       source=st.sampled_from([r"a+", r"^\s*#+\s", r"[?!]", r"(a)(b)?", r"^b.*$"]),
       flags=st.sampled_from([0, re.IGNORECASE, re.MULTILINE]))
def test_a_lazy_pattern_answers_as_the_compiled_one(text: str, source: str, flags: int) -> None:
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    assert not lazy.is_compiled
    found, expected = lazy.search(text), compiled.search(text)
    assert (found and found.span()) == (expected and expected.span())
    assert lazy.is_compiled
    found, expected = lazy.match(text), compiled.match(text)
    assert (found and found.groups()) == (expected and expected.groups())
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("-", text) == compiled.sub("-", text)
