"""A headless Chromium driven over its DevTools pipe: load a page, press keys, read the DOM.

`--remote-debugging-pipe` makes Chromium read DevTools commands from file descriptor 3 and
write replies and events to 4, each message JSON ended by a NUL byte. Enough of the protocol
for the share tests: attach to the page, record every network request, navigate, dispatch
key presses, evaluate expressions.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                if (found := shutil.which(name))), None)
"""The browser on PATH, or None."""

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-extensions", "--hide-scrollbars", "--mute-audio")

KEY_CODES = {" ": ("Space", 32), "ArrowRight": ("ArrowRight", 39), "ArrowLeft": ("ArrowLeft", 37),
             "Home": ("Home", 36), "End": ("End", 35), "]": ("BracketRight", 221),
             "[": ("BracketLeft", 219), "+": ("Equal", 187), "-": ("Minus", 189),
             "l": ("KeyL", 76), "h": ("KeyH", 72)}


class Browser:
    """One Chromium process with one page attached."""

    def __init__(self, profile: Path, width: int = 1200, height: int = 900,
                 scripts: bool = True) -> None:
        assert BROWSER is not None
        self._to_browser_read, self._to_browser = os.pipe()
        self._from_browser, self._from_browser_write = os.pipe()
        # The child reads commands on 3 and writes replies on 4.
        self.process = subprocess.Popen(
            [BROWSER, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=self._wire)
        os.close(self._to_browser_read)
        os.close(self._from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(target for target in targets if target["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True, session=False)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        if not scripts:
            self.call("Emulation.setScriptExecutionDisabled", value=True)

    def _wire(self) -> None:
        os.dup2(self._to_browser_read, 3)
        os.dup2(self._from_browser_write, 4)

    def close(self) -> None:
        """End the browser."""
        try:
            self.call("Browser.close", session=False, timeout=5)
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ protocol

    def call(self, method: str, *, session: bool = True, timeout: float = 30,
             **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events met meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from the browser")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed its pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """The first event `method` (already received or next)."""
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline)
            if message.get("method") == method:
                return message
            if "method" in message:
                self.events.append(message)

    # ------------------------------------------------------------------ page

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout=120)

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """Press and release one key, as a person would."""
        code, number = KEY_CODES[key] if key in KEY_CODES else (f"Key{key.upper()}",
                                                                ord(key.upper()))
        text = key if len(key) == 1 else ""
        self.call("Input.dispatchKeyEvent", type="keyDown", key=key, code=code,
                  windowsVirtualKeyCode=number, text=text)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code,
                  windowsVirtualKeyCode=number)

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll until the expression is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true: {expression}")
            time.sleep(0.05)

    def requests(self) -> list[str]:
        """URLs of every request the page made so far."""
        self.call("Runtime.evaluate", expression="0")  # flush pending events
        return [event["params"]["request"]["url"] for event in self.events
                if event["method"] == "Network.requestWillBeSent"]

    def console_errors(self) -> list[str]:
        """Texts of the log entries and exceptions so far (CSP refusals show here)."""
        found = []
        for event in self.events:
            if event["method"] == "Log.entryAdded":
                found.append(event["params"]["entry"].get("text", ""))
            if event["method"] == "Runtime.exceptionThrown":
                found.append(str(event["params"]["exceptionDetails"].get("text", "")))
        return found

    def screenshot(self, path: Path) -> None:
        """The viewport as a PNG file."""
        import base64

        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
