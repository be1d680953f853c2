"""One meaning per flag: `--format` is the transcript's format, `--as` the output kind, in
every help text and in the README; the top-level help lists the formats the readers know."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from replay.cli import app_parser, command_parser
from replay.commands import command_names
from replay.core.readers import all_readers

README = Path(__file__).resolve().parents[2] / "README.md"
OUTPUT_KINDS = ("md", "html", "csv", "jsonl")


def _helps() -> dict[str, str]:
    helps = {"replay": app_parser().format_help()}
    helps.update({name: command_parser(name).format_help() for name in command_names()})
    return helps


def test_the_top_level_help_lists_every_reader_by_its_format_name() -> None:
    text = app_parser().format_help()
    for reader in all_readers():
        assert re.search(rf"^\s+{re.escape(reader.name)}\s+{re.escape(reader.title)}$", text,
                         re.MULTILINE), reader.name
    # The ones the hand-written list had left out.
    assert "SWE-agent trajectory" in text and "opencode run event stream" in text


@pytest.mark.parametrize("kind", OUTPUT_KINDS)
def test_no_help_and_no_readme_line_gives_format_an_output_kind(kind: str) -> None:
    wrong = re.compile(rf"--format[ =]({kind}\b|[a-z|]*\|{kind}\b)")
    for name, text in _helps().items():
        assert not wrong.search(" ".join(text.split())), name
    assert not wrong.search(README.read_text(encoding="utf-8"))


def test_export_names_case_studies_by_as() -> None:
    assert "--as md|html" in " ".join(app_parser().format_help().split())
    assert "--as md|html" in README.read_text(encoding="utf-8")


def test_opening_the_app_still_imports_no_reader_it_does_not_need() -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom replay.cli import app_parser\n"
            "app_parser().parse_args(['session.jsonl'])\n"
            "print(sorted(n for n in sys.modules if n.startswith('replay.core.readers.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "swe_agent" not in out and "aider" not in out
