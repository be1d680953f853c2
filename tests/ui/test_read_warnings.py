"""An empty or cut-off file says so in the app, in the words `replay scan` prints: one line
under the header when there is no turn, a notification when the turns read are shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import main
from tests.core.test_edges import DOCUMENTS, FILES, _write
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text


def _scan_warnings(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["scan", "--json", str(path)]) == 0
    (report,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return report["warnings"]


async def _drawn(path: Path, tmp_path: Path) -> str:
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(200, 40), notifications=True) as pilot:
        await ready(pilot, app)
        await wait_until(pilot, lambda: "warning: " in screen_text(app), rounds=100)
        return screen_text(app)


@pytest.mark.parametrize("name", list(FILES))
async def test_an_empty_file_says_so_under_the_header(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, name, b"")
    (warning,) = _scan_warnings(path, capsys)
    text = await _drawn(path, tmp_path)
    assert f"no turns · warning: {warning}" in text, text


@pytest.mark.parametrize("name", DOCUMENTS)
async def test_a_cut_off_document_says_so_under_the_header(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    content = FILES[name][1]
    path = _write(tmp_path, name, content[: len(content) * 2 // 3])
    warning = _scan_warnings(path, capsys)[-1]
    assert warning.startswith("the JSON document is cut off at byte")
    text = await _drawn(path, tmp_path)
    assert f"warning: {warning}" in " ".join(text.split()), text


@pytest.mark.parametrize("name", ["claude-code", "codex", "chat-jsonl", "opencode-run"])
async def test_a_last_line_cut_off_is_a_notification_over_the_turns_read(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    content = FILES[name][1].rstrip(b"\n")
    path = _write(tmp_path, name, content[: content.rindex(b"\n") + 10])
    (warning,) = _scan_warnings(path, capsys)
    text = await _drawn(path, tmp_path)
    assert "Read with warnings" in text and f"warning: {warning}" in text, text
    assert "no turns" not in text
