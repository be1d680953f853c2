"""Waking a session follower when its files change, with watchfiles (kept out of the core).

The file-system event is only a wake-up: `SessionFollower.poll` decides what is new, so a
missed, merged or spurious event never loses or duplicates a turn. A slow idle timeout also
wakes the follower of a file, which covers the moment between the first read and the watcher
starting, and file systems where notifications are unreliable.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay.core.live.folder import FolderFollower, FolderPoll
from replay.core.live.follow import FollowUpdate, SessionFollower

if TYPE_CHECKING:
    from watchfiles import Change

DEBOUNCE_MS = 80
"""Longest time changes are gathered into one wake-up (watchfiles' default 1.6 s is too slow)."""

STEP_MS = 50
"""A quiet spell this long ends a batch of changes early."""

IDLE_POLL_MS = 2000
"""With no event at all, the follower is still polled this often (a stat or two: no cost)."""

TICK_MS = 100
"""With no event, the clock is checked this often: quiet times and stalls end on time."""

Changes = set[tuple["Change", str]]
"""What watchfiles reports: (change kind, path) pairs; empty on an idle timeout."""


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """What to hand watchfiles for one followed path."""

    roots: tuple[str, ...]
    """Directories (or files) watched."""
    recursive: bool
    """Whether sub-directories are watched too."""
    target: str
    """The followed path, absolute."""
    sidechain_dir: str | None
    """A Claude Code `<session>/` directory whose subagent files belong to the session."""
    idle_poll: bool = True
    """Also look on the idle timeout (a directory tree too: a follower stamps only the
    followed session's own files, and notifications for folders created a moment ago can
    be missed)."""

    def accepts(self, change: object, changed_path: str) -> bool:
        """True when a change concerns the followed session (its file, journal or subagents)."""
        target = self.target
        if changed_path == target or changed_path.startswith(target + "/"):
            return True
        # SQLite keeps recent writes in `<db>-wal`; rollback journals are `<db>-journal`.
        if changed_path.startswith(target + "-"):
            return True
        if self.sidechain_dir is not None and (
            changed_path == self.sidechain_dir or changed_path.startswith(self.sidechain_dir + "/")
        ):
            return True
        # Older Claude Code versions write `agent-<id>.jsonl` beside the session file.
        name = changed_path.rsplit("/", 1)[-1]
        parent = changed_path.rsplit("/", 1)[0]
        return (
            self.sidechain_dir is not None
            and parent == target.rsplit("/", 1)[0]
            and name.startswith("agent-")
            and name.endswith(".jsonl")
        )


def plan_watch(path: str | Path) -> WatchPlan:
    """Decide what to watch for a followed path.

    A directory (opencode storage) is watched recursively, as is the storage tree of one
    opencode session file. A file is watched through its
    parent directory, so an atomic replace is seen; the parent is watched recursively only
    once a `<stem>/` directory (Claude Code subagents) exists beside a `.jsonl` session.
    """
    target = Path(path).absolute()
    if target.is_dir():
        return WatchPlan((str(target),), True, str(target), None)
    storage = target.parent.parent.parent
    if target.parent.parent.name == "session" and (storage / "message").is_dir():
        # One session file of an opencode storage tree: its messages and parts live elsewhere.
        return WatchPlan((str(storage),), True, str(storage), None)
    sidechain_dir = None
    recursive = False
    if target.suffix == ".jsonl":
        sidechain_dir = str(target.with_suffix(""))
        recursive = Path(sidechain_dir).is_dir()
    return WatchPlan((str(target.parent),), recursive, str(target), sidechain_dir)


async def watch_path(
    path: str | Path,
    on_change: Callable[[Changes], Awaitable[Any] | Any],
    stop_event: asyncio.Event | None = None,
    *,
    debounce_ms: int = DEBOUNCE_MS,
    idle_poll_ms: int = IDLE_POLL_MS,
    on_tick: Callable[[], Awaitable[Any] | Any] | None = None,
) -> None:
    """Call `on_change` whenever the followed session may have changed, until stopped.

    `on_change` may be a plain function or a coroutine function; it gets the set of changes,
    empty on an idle timeout. With `on_tick`, quiet spells wake every `TICK_MS` and call it
    instead (and `on_change` with no changes once per `idle_poll_ms`, as without it).
    Cancelling the task stops watching cleanly.
    """
    from watchfiles import awatch

    last_look = time.monotonic()
    while stop_event is None or not stop_event.is_set():
        plan = plan_watch(path)
        async for changes in awatch(
            *plan.roots,
            watch_filter=plan.accepts,
            debounce=debounce_ms,
            step=STEP_MS,
            stop_event=stop_event,
            rust_timeout=idle_poll_ms if on_tick is None else TICK_MS,
            yield_on_timeout=plan.idle_poll or on_tick is not None,
            recursive=plan.recursive,
        ):
            now = time.monotonic()
            if on_tick is not None and not changes and (
                    not plan.idle_poll or now - last_look < idle_poll_ms / 1000):
                outcome = on_tick()
            else:
                last_look = now
                outcome = on_change(changes)
            if inspect.isawaitable(outcome):
                await outcome
            if plan_watch(path) != plan:
                break  # a subagent directory appeared: watch again, recursively
        else:
            return


async def follow_async(
    follower: SessionFollower,
    on_update: Callable[[FollowUpdate], Awaitable[Any] | Any],
    stop_event: asyncio.Event | None = None,
) -> None:
    """Poll `follower` in a thread on every wake-up and pass each non-empty update on.

    Quiet spells tick the follower's clock (no reading), so a quiet time or a stall is
    reported on time.
    """

    async def deliver(update: FollowUpdate) -> None:
        if update.has_news:
            outcome = on_update(update)
            if inspect.isawaitable(outcome):
                await outcome

    async def wake(changes: Changes) -> None:
        await deliver(await asyncio.to_thread(follower.poll))

    async def tick() -> None:
        await deliver(follower.tick())

    await watch_path(follower.path, wake, stop_event, on_tick=tick)


def follow_forever(
    follower: SessionFollower,
    callback: Callable[[FollowUpdate], Any],
    stop: threading.Event,
    *,
    debounce_ms: int = DEBOUNCE_MS,
    idle_poll_ms: int = IDLE_POLL_MS,
) -> None:
    """Block, polling `follower` on every wake-up and calling `callback` with news, until `stop`.

    Quiet spells tick the follower's clock every `TICK_MS` (no reading) so quiet times and
    stalls are reported on time. Signals are left to the caller: a handler that sets `stop`
    ends the loop within one watchfiles step.
    """
    from watchfiles import watch

    last_look = time.monotonic()
    while not stop.is_set():
        plan = plan_watch(follower.path)
        for changes in watch(
            *plan.roots,
            watch_filter=plan.accepts,
            debounce=debounce_ms,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
            recursive=plan.recursive,
            raise_interrupt=False,
        ):
            now = time.monotonic()
            if not changes and (not plan.idle_poll or now - last_look < idle_poll_ms / 1000):
                update = follower.tick()
            else:
                last_look = now
                update = follower.poll()
            if update.has_news:
                callback(update)
            if stop.is_set():
                return
            if plan_watch(follower.path) != plan:
                break
        else:
            return


def _folder_filter(change: object, changed_path: str) -> bool:
    """Every change under a followed folder but those of hidden entries (`.git`, editors'
    swap files): a session file, a new day's folder, a database's WAL."""
    return "/." not in changed_path


def follow_folder_forever(
    folder: FolderFollower,
    callback: Callable[[FolderPoll], Any],
    stop: threading.Event,
    *,
    debounce_ms: int = DEBOUNCE_MS,
    idle_poll_ms: int = IDLE_POLL_MS,
) -> None:
    """Block, polling `folder` on every wake-up and calling `callback` with news, until `stop`.

    The roots are watched recursively (a new project or day folder is seen at once); each
    wake-up reads only the sessions its changes belong to, and every `idle_poll_ms` the
    roots are walked again, which covers missed notifications. Quiet spells tick every
    followed session's clock every `TICK_MS`.
    """
    from watchfiles import watch

    last_look = time.monotonic()
    while not stop.is_set():
        roots = tuple(str(root) for root in folder.roots if root.exists())
        if not roots:
            if stop.wait(idle_poll_ms / 1000):
                return
            news = folder.poll()
            if news.updates or news.problems:
                callback(news)
            continue
        for changes in watch(
            *roots,
            watch_filter=_folder_filter,
            debounce=debounce_ms,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
            recursive=True,
            raise_interrupt=False,
        ):
            now = time.monotonic()
            if changes:
                news = folder.poll({path for _change, path in changes})
            elif now - last_look >= idle_poll_ms / 1000:
                last_look = now
                news = folder.poll()
            else:
                news = folder.tick()
            if news.updates or news.problems:
                callback(news)
            if stop.is_set():
                return
            if tuple(str(root) for root in folder.roots if root.exists()) != roots:
                break  # a root appeared or went away: watch again
        else:
            return


async def follow_folder_async(
    folder: FolderFollower,
    on_news: Callable[[FolderPoll], Awaitable[Any] | Any],
    stop_event: asyncio.Event | None = None,
    *,
    debounce_ms: int = DEBOUNCE_MS,
    idle_poll_ms: int = IDLE_POLL_MS,
) -> None:
    """`follow_folder_forever` for an event loop (the app): each poll runs in a thread,
    ticks on the loop; `on_news` gets every poll or tick that found something."""
    from watchfiles import awatch

    async def deliver(news: FolderPoll) -> None:
        if news.updates or news.problems:
            outcome = on_news(news)
            if inspect.isawaitable(outcome):
                await outcome

    last_look = time.monotonic()
    while stop_event is None or not stop_event.is_set():
        roots = tuple(str(root) for root in folder.roots if root.exists())
        if not roots:
            await asyncio.sleep(idle_poll_ms / 1000)
            await deliver(await asyncio.to_thread(folder.poll))
            continue
        async for changes in awatch(
            *roots,
            watch_filter=_folder_filter,
            debounce=debounce_ms,
            step=STEP_MS,
            stop_event=stop_event,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
            recursive=True,
        ):
            now = time.monotonic()
            if changes:
                paths = {path for _change, path in changes}
                news = await asyncio.to_thread(folder.poll, paths)
            elif now - last_look >= idle_poll_ms / 1000:
                last_look = now
                news = await asyncio.to_thread(folder.poll)
            else:
                news = folder.tick()
            await deliver(news)
            if tuple(str(root) for root in folder.roots if root.exists()) != roots:
                break
        else:
            return
