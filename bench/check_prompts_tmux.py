"""Type into every prompt of the app in a real terminal (tmux) and read the text back.

    python bench/check_prompts_tmux.py [SESSION_FILE] [--size 80x24] [--theme NAME]

Starts `replay` in a detached tmux session of the given size, waits for the first empty
turn, then for each prompt (search `/`, go to `:`, note `tab`) types a marker, captures the
pane and checks that the marker is on screen; escape closes the prompt. Prints one line per
prompt and exits 1 if any typed text was not visible. Needs tmux on PATH.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROMPTS = (("search", "/", "typedsearch"), ("go to", ":", "#4242"), ("note", "Tab", "typed note"))


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def wait_for(session: str, text: str, seconds: float = 15.0) -> str:
    """The pane once `text` is on it; raises TimeoutError after `seconds`."""
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise TimeoutError(f"{text!r} did not appear:\n{screen}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", nargs="?", default=str(REPO / "sample_sessions" /
                                                          "support-bot.chat.json"))
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--theme", default="replay-dark")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    width, height = args.size.split("x")
    name = f"replay-prompts-{os.getpid()}"
    workdir = Path(tempfile.mkdtemp(prefix="replay-prompts-"))
    command = (f"cd {workdir} && REPLAY_DATA_DIR={workdir}/data "
               f"REPLAY_CONFIG_FILE={workdir}/config.toml {sys.executable} -m replay "
               f"--theme {args.theme} {shlex.quote(str(Path(args.session).resolve()))}")
    tmux("new-session", "-d", "-s", name, "-x", width, "-y", height, command)
    failures = 0
    try:
        wait_for(name, "annotated")
        time.sleep(1.0)  # the first empty turn is shown once the session is indexed
        at_empty = "EMPTY TURN" in tmux("capture-pane", "-p", "-t", name)
        for prompt, key, typed in PROMPTS:
            if prompt == "note" and not at_empty:
                print(f"{prompt:8} {args.size} {args.theme}: no empty turn, no note field")
                continue
            tmux("send-keys", "-t", name, key)
            time.sleep(0.3)
            tmux("send-keys", "-t", name, "-l", typed)
            try:
                wait_for(name, typed, 5.0)
                print(f"{prompt:8} {args.size} {args.theme}: typed {typed!r}, read back")
            except TimeoutError as error:
                failures += 1
                print(f"{prompt:8} {args.size} {args.theme}: typed {typed!r}, NOT on screen")
                print(str(error).split("\n", 1)[1])
            tmux("send-keys", "-t", name, "Escape")
            time.sleep(0.3)
    finally:
        subprocess.run(["tmux", "send-keys", "-t", name, "C-q"], capture_output=True)
        time.sleep(0.5)
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
