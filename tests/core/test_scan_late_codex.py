"""The windowed scan of a Codex rollout reports what a scan of the whole session reports, even
where a record changes a turn the window judged long before: a step's later items after many
injected-context turns (the step stays open across them), a prompt demoted to injected context
once assistant work starts, a late `turn_aborted`. Real rollouts with their lines shuffled, or
with a run of developer messages put into them, are held to the whole read too. #27 (seams-r7);
the Claude Code counterpart is `test_scan_shuffled.py`."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, scan_file, scan_session
from replay.core.readers import detect_reader, load_sessions
from replay.core.suggest import default_suggester
from tests.conftest import REALDATA

FILES = sorted((REALDATA / "codex").glob("*.jsonl")) if REALDATA.is_dir() else []

FAR = LOOK_AHEAD + 30
"""Turns between a record and the turn it changes: past the window's look-ahead."""


def _windowed(path: Path) -> dict[str, object]:
    return scan_file(detect_reader(path), path).to_json()  # type: ignore[no-any-return]


def _whole(path: Path) -> dict[str, object]:
    [session] = load_sessions(path)
    return scan_session(session, suggester=default_suggester()).to_json()


def _record(kind: str, payload: dict[str, object], second: int) -> bytes:
    stamp = f"2026-01-01T00:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
    return orjson.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + b"\n"


def _meta() -> bytes:
    return _record("session_meta", {"id": "s-1", "cwd": "/w", "cli_version": "0.1"}, 0)


def _message(role: str, text: str, second: int) -> bytes:
    kind = "output_text" if role == "assistant" else "input_text"
    return _record("response_item", {"type": "message", "role": role,
                                     "content": [{"type": kind, "text": text}]}, second)


def _developers(count: int, second: int) -> list[bytes]:
    # Injected context: system turns, which do not end the assistant's open step.
    return [_message("developer", f"<permissions instructions> note {n} [/] list[int]",
                     second + n) for n in range(count)]


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "rollout-2026-01-01T00-00-00-late.jsonl"
    path.write_bytes(b"".join(lines))
    assert detect_reader(path).name == "codex"
    return path


def test_a_step_whose_reply_comes_after_many_injected_turns_is_not_empty(
        tmp_path: Path) -> None:
    lines = [_meta(), _record("event_msg", {"type": "user_message", "message": "go"}, 1),
             _message("user", "go", 1),
             _record("response_item", {"type": "reasoning", "summary": [
                 {"type": "summary_text", "text": "plan"}]}, 2),
             *_developers(FAR, 3),
             _message("assistant", "done [link=x]", 200),
             _record("event_msg", {"type": "user_message", "message": "next"}, 201),
             _message("user", "next", 201), _message("assistant", "ok", 202)]
    path = _write(tmp_path, lines)
    windowed, whole = _windowed(path), _whole(path)
    assert windowed == whole
    assert whole["empty_turns"] == []  # the reasoning's step ends with a reply


def test_a_prompt_demoted_long_after_it_was_read_is_not_an_empty_user_turn(
        tmp_path: Path) -> None:
    # Events mode (a `user_message` event was seen); a role user item that never gets its
    # event is injected context, found out at the next assistant step, many turns later.
    lines = [_meta(), _record("event_msg", {"type": "user_message", "message": "go"}, 1),
             _message("user", "go", 1), _message("assistant", "ok", 2),
             _record("response_item", {"type": "message", "role": "user", "content": []}, 3),
             *_developers(FAR, 4),
             _message("assistant", "more", 200)]
    path = _write(tmp_path, lines)
    windowed, whole = _windowed(path), _whole(path)
    assert windowed == whole


def test_rollouts_in_order_are_scanned_in_the_window_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The real rollouts change no turn long after it: none is read a second time.
    if not FILES:
        pytest.skip("no realdata")
    passes = _passes(monkeypatch)
    for path in FILES:
        assert _windowed(path) == _whole(path)
    assert len(passes) == len(FILES)


def test_a_prompt_confirmed_a_few_turns_late_deep_in_a_rollout_takes_one_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sanitised rollouts write a task's context as role user items, then the prompt's event a
    # few turns later (which demotes the items it does not name): in a long session that is
    # after turns were judged. The window waits for such turns (`CodexBuilder.settled`)
    # instead of reading the file again: the real-shaped 60 MB rollout took twice the time.
    lines = [_meta(), _record("event_msg", {"type": "user_message", "message": "go"}, 1),
             _message("user", "go", 1)]
    for task in range(4 * LOOK_AHEAD):
        second = 10 + 10 * task
        lines += [_message("user", f"[REDACTED_TEXT len=30 sha={task:08x}]", second),
                  _message("developer", "<permissions instructions> x", second + 1),
                  _message("user", f"do task {task}", second + 2),
                  _message("developer", "<permissions instructions> y", second + 3),
                  _record("event_msg", {"type": "user_message", "message": f"do task {task}"},
                          second + 4),
                  _message("assistant", f"done {task}", second + 5)]
    path = _write(tmp_path, lines)
    passes = _passes(monkeypatch)
    assert _windowed(path) == _whole(path)
    assert passes == [None]


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What each pass over a file was told (None: the first), as the scans go."""
    passes: list[object] = []
    one = scan_module._scan_one_file

    def counted(*args: object) -> object:
        passes.append(args[-1])
        return one(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "_scan_one_file", counted)
    return passes


def _shuffled(lines: list[bytes], rng: random.Random, spread: int) -> list[bytes]:
    lines = list(lines)
    for start in range(1, len(lines), spread):  # the session meta stays first
        window = lines[start:start + spread]
        rng.shuffle(window)
        lines[start:start + spread] = window
    return lines


@pytest.mark.skipif(not FILES, reason="no realdata")
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(min_value=0, max_value=max(len(FILES) - 1, 0)),
       seed=st.integers(min_value=0, max_value=2**32 - 1),
       spread=st.sampled_from([0, 2, 8, 64, 100_000]),
       injected=st.integers(min_value=0, max_value=3))
def test_reordered_real_rollouts_scan_as_the_whole_read(
        tmp_path_factory: pytest.TempPathFactory, which: int, seed: int, spread: int,
        injected: int) -> None:
    # `spread`: lines shuffled in windows of that many (0: kept in order); `injected`: runs
    # of `FAR` developer messages put in at random places (a harness injecting context in
    # the middle of a step, which keeps the step open across them).
    source = FILES[which]
    rng = random.Random(seed)
    lines = source.read_bytes().splitlines(keepends=True)
    if spread:
        lines = _shuffled(lines, rng, spread)
    for _ in range(injected):
        at = rng.randrange(1, len(lines) + 1)
        lines[at:at] = _developers(FAR, 3)
    path = tmp_path_factory.mktemp("codex") / source.name
    path.write_bytes(b"".join(lines))
    assert _windowed(path) == _whole(path)


def test_prompts_never_confirmed_do_not_hold_the_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Role user items and no assistant work, no event: each might still be demoted, but the
    # window waits for them only `MAX_WAIT` turns; an event that comes after all is told
    # (`watch_merges`), and the scan is still the whole read's.
    from replay.core.readers.codex import MAX_WAIT
    kept: list[int] = []
    advance = scan_module._WindowScan.advance

    def counted(self: scan_module._WindowScan, final: bool = False) -> None:
        kept.append(len(self.window._turns))
        advance(self, final)

    monkeypatch.setattr(scan_module._WindowScan, "advance", counted)
    for late_event in (False, True):
        lines = [_meta()] + [_message("user", "" if n % 5 == 0 else f"item {n}", 1 + n % 50)
                             for n in range(3 * MAX_WAIT)]
        if late_event:
            lines.append(_record("event_msg", {"type": "user_message", "message": "item 7"},
                                 60))
        path = _write(tmp_path, lines)
        kept.clear()
        assert _windowed(path) == _whole(path)
        if not late_event:
            assert max(kept) <= MAX_WAIT + 2 * scan_module.LOOK_BACK
