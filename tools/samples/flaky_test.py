"""Story 5, flaky-test (Codex CLI)."""

from __future__ import annotations

from samples.codex import CodexRollout
from samples.common import Chance, Json

FT_CWD = "/home/dev/tidewater"

FT_TEST = """import time

from tidewater.scheduler import Job, Scheduler


def test_jobs_run_in_deadline_order():
    ran = []
    sched = Scheduler()
    sched.submit(Job("a", lambda: ran.append("a")), delay=0.0)
    sched.submit(Job("b", lambda: ran.append("b")), delay=0.0)
    sched.submit(Job("c", lambda: ran.append("c")), delay=0.05)
    time.sleep(0.06)
    sched.run_due()
    assert ran == ["a", "b", "c"]
"""

FT_SCHEDULER = '''"""A tiny in-process deadline scheduler."""

from __future__ import annotations

import heapq
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable


@dataclass(order=True)
class _Entry:
    deadline: float
    key: str = field(compare=True)
    job: "Job" = field(compare=False)


@dataclass
class Job:
    name: str
    fn: Callable[[], None]


class Scheduler:
    def __init__(self) -> None:
        self._heap: list[_Entry] = []

    def submit(self, job: Job, delay: float = 0.0) -> str:
        key = uuid.uuid4().hex
        heapq.heappush(self._heap, _Entry(time.monotonic() + delay, key, job))
        return key

    def run_due(self) -> int:
        now = time.monotonic()
        count = 0
        while self._heap and self._heap[0].deadline <= now:
            heapq.heappop(self._heap).job.fn()
            count += 1
        return count
'''

FT_PATCH_ORDER = """*** Begin Patch
*** Update File: tidewater/scheduler.py
@@
 import heapq
+import itertools
 import time
 import uuid
 from dataclasses import dataclass, field
 from typing import Callable
 
 
 @dataclass(order=True)
 class _Entry:
     deadline: float
-    key: str = field(compare=True)
+    # ties on the deadline run in submission order; the key is only an identifier
+    seq: int
+    key: str = field(compare=False)
     job: "Job" = field(compare=False)
@@
 class Scheduler:
     def __init__(self) -> None:
         self._heap: list[_Entry] = []
+        self._seq = itertools.count()
 
     def submit(self, job: Job, delay: float = 0.0) -> str:
         key = uuid.uuid4().hex
-        heapq.heappush(self._heap, _Entry(time.monotonic() + delay, key, job))
+        entry = _Entry(time.monotonic() + delay, next(self._seq), key, job)
+        heapq.heappush(self._heap, entry)
         return key
*** End Patch
"""

FT_PATCH_CLOCK = """*** Begin Patch
*** Update File: tidewater/scheduler.py
@@
 class Scheduler:
-    def __init__(self) -> None:
+    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
+        self._clock = clock
         self._heap: list[_Entry] = []
         self._seq = itertools.count()
 
     def submit(self, job: Job, delay: float = 0.0) -> str:
         key = uuid.uuid4().hex
-        entry = _Entry(time.monotonic() + delay, next(self._seq), key, job)
+        entry = _Entry(self._clock() + delay, next(self._seq), key, job)
         heapq.heappush(self._heap, entry)
         return key
 
     def run_due(self) -> int:
-        now = time.monotonic()
+        now = self._clock()
         count = 0
*** End Patch
"""

FT_PATCH_TEST = """*** Begin Patch
*** Update File: tests/test_scheduler.py
@@
-import time
-
 from tidewater.scheduler import Job, Scheduler
 
 
+class FakeClock:
+    def __init__(self) -> None:
+        self.now = 1000.0
+
+    def __call__(self) -> float:
+        return self.now
+
+
 def test_jobs_run_in_deadline_order():
     ran = []
-    sched = Scheduler()
+    clock = FakeClock()
+    sched = Scheduler(clock=clock)
     sched.submit(Job("a", lambda: ran.append("a")), delay=0.0)
     sched.submit(Job("b", lambda: ran.append("b")), delay=0.0)
     sched.submit(Job("c", lambda: ran.append("c")), delay=0.05)
-    time.sleep(0.06)
+    clock.now += 0.06
     sched.run_due()
     assert ran == ["a", "b", "c"]
+
+
+def test_job_not_due_yet_waits():
+    ran = []
+    clock = FakeClock()
+    sched = Scheduler(clock=clock)
+    sched.submit(Job("late", lambda: ran.append("late")), delay=5.0)
+    clock.now += 4.999
+    assert sched.run_due() == 0
+    clock.now += 0.002
+    assert sched.run_due() == 1
+    assert ran == ["late"]
*** End Patch
"""


def flaky_test() -> list[Json]:
    """A Codex rollout of three prompts, one of them interrupted before any visible output."""
    c = CodexRollout(2077, cwd=FT_CWD, start="2026-05-19T14:03:27.412Z", model="gpt-5.5",
                     version="0.128.0", branch="main", commit=Chance(3).hex(),
                     remote="git@github.com:tidewater-dev/tidewater.git")
    c.pause(18.3)
    c.prompt("tests/test_scheduler.py::test_jobs_run_in_deadline_order fails on CI every now "
             "and then, roughly one run in twenty. find out why and fix the cause. no retries, "
             "no longer sleeps")
    c.reason("**Locating the flaky test and the code it drives**", seconds=3.1)
    c.say("I'll read the test and the scheduler it exercises, then reproduce the failure "
          "before changing anything.")
    c.run("rg -n \"deadline|run_due|heappush\" tidewater tests",
          "tidewater/scheduler.py:14:    deadline: float\n"
          "tidewater/scheduler.py:31:        heapq.heappush(self._heap, _Entry(time.monotonic() + "
          "delay, key, job))\n"
          "tidewater/scheduler.py:34:    def run_due(self) -> int:\n"
          "tidewater/scheduler.py:37:        while self._heap and self._heap[0].deadline <= now:\n"
          "tests/test_scheduler.py:6:def test_jobs_run_in_deadline_order():\n"
          "tests/test_scheduler.py:13:    sched.run_due()", seconds=0.1)
    c.reason(seconds=1.6, size=400)
    c.run("sed -n '1,60p' tests/test_scheduler.py", FT_TEST, seconds=0.05)
    c.say("The test submits a and b with delay 0, c with 50 ms, sleeps 60 ms and expects "
          "a, b, c. Reading the scheduler next.")
    c.run("sed -n '1,80p' tidewater/scheduler.py", FT_SCHEDULER, seconds=0.05)
    c.reason("**Suspecting heap tie-breaks on equal deadlines**", seconds=6.4, size=1500)
    c.say("Jobs a and b get deadlines from two separate `time.monotonic()` calls with delay 0. "
          "When both calls land on the same clock tick the deadlines are equal and the heap "
          "falls back to comparing `key`, a random uuid4, so a and b come out in random "
          "order. Reproducing with many repetitions to confirm.")
    c.run("python -m pytest -q -p no:randomly --count 400 "
          "tests/test_scheduler.py::test_jobs_run_in_deadline_order 2>&1 | tail -n 3",
          "FAILED tests/test_scheduler.py::test_jobs_run_in_deadline_order[187-400] - "
          "AssertionError: assert ['b', 'a', 'c'] == ['a', 'b', 'c']\n"
          "FAILED tests/test_scheduler.py::test_jobs_run_in_deadline_order[352-400] - "
          "AssertionError: assert ['b', 'a', 'c'] == ['a', 'b', 'c']\n"
          "19 failed, 381 passed in 26.31s", seconds=27.0, exit_code=1)
    c.say("19 failures in 400, every one with a and b swapped and c still last, so the "
          "sleep is long enough; the problem is the order of equal deadlines. Checking how "
          "often consecutive monotonic() calls collide here.")
    c.run("python -c \"import time; ts = [time.monotonic() for _ in range(100000)]; "
          "print(sum(a == b for a, b in zip(ts, ts[1:])), 'equal neighbours of 100000')\"",
          "1712 equal neighbours of 100000", seconds=0.2)
    c.reason("**Choosing a stable tie-break**", seconds=3.9, size=1100)
    c.say("Confirmed: 19 of 400 runs fail, always with a and b swapped, and back-to-back "
          "`monotonic()` calls return the same value often enough on this machine. Fix: "
          "order entries by (deadline, submission number) and stop comparing the random key.")
    c.patch(FT_PATCH_ORDER, ["tidewater/scheduler.py"])
    c.say("Patch applied. Running the test 2,000 times, then the full `make check`.")
    c.run("python -m pytest -q -p no:randomly --count 2000 "
          "tests/test_scheduler.py::test_jobs_run_in_deadline_order 2>&1 | tail -n 1 && "
          "make check 2>&1 | tail -n 4",
          "2000 passed in 118.42s\n"
          "ruff check tidewater tests ... ok\n"
          "mypy tidewater ... Success: no issues found in 6 source files\n"
          "pytest ... 87 passed in 3.02s\n"
          "make check: all good", seconds=124.6)
    c.reason(seconds=1.2, size=300)
    c.finish("The flake came from tie-breaking in the scheduler's heap, not from the test's "
             "timing.\n\n"
             "- `submit()` stamps each job with `time.monotonic() + delay`. Two jobs submitted "
             "back to back with delay 0 often get the identical value (1,712 equal neighbours "
             "in 100,000 consecutive calls here).\n"
             "- `_Entry` then compared the next field, `key`, a random uuid4, so equal-deadline "
             "jobs ran in random order: 19 failures in 400 runs locally, matching what CI "
             "sees.\n\n"
             "Fix in `tidewater/scheduler.py`: heap entries are ordered by `(deadline, seq)` "
             "where `seq` comes from an `itertools.count()`, so ties run in submission order; "
             "`key` no longer takes part in comparisons. The test passes 2,000 times in a row "
             "and `make check` is green (87 tests).")

    c.pause(2 * 60 + 31.0)
    c.prompt("good. now also make the test itself deterministic, inject a fake clock instead of "
             "sleeping on the real one")
    c.reason(seconds=9.7, size=1800)
    c.abort()

    c.pause(38.6)
    c.prompt("make that test deterministic: let the Scheduler take a clock function and use a "
             "fake clock in the test instead of time.sleep")
    c.reason("**Adding an injectable clock to Scheduler**", seconds=4.4, size=1300)
    c.say("I'll give `Scheduler` an optional `clock` argument that defaults to "
          "`time.monotonic`, so existing callers don't change, and drive the test with a fake "
          "clock.")
    c.patch(FT_PATCH_CLOCK, ["tidewater/scheduler.py"])
    c.say("Scheduler now reads time only through `self._clock`. Updating the test to drive a "
          "fake clock and adding a case for a job that is not due yet.")
    c.patch(FT_PATCH_TEST, ["tests/test_scheduler.py"])
    c.say("Running both scheduler tests 500 times and the full check.")
    c.run("python -m pytest -q -p no:randomly --count 500 tests/test_scheduler.py 2>&1 | "
          "tail -n 1 && make check 2>&1 | tail -n 4",
          "1000 passed in 0.97s\n"
          "ruff check tidewater tests ... ok\n"
          "mypy tidewater ... Success: no issues found in 6 source files\n"
          "pytest ... 88 passed in 2.95s\n"
          "make check: all good", seconds=6.1)
    c.reason(seconds=1.0, size=300)
    c.finish("Done.\n\n"
             "- `Scheduler(clock=...)` takes any zero-argument callable returning seconds; the "
             "default is `time.monotonic`, so existing code is unaffected.\n"
             "- `tests/test_scheduler.py` uses a `FakeClock` and advances it by hand; no "
             "`time.sleep` left. I added `test_job_not_due_yet_waits` to cover the boundary "
             "(4.999 s not due, 5.001 s due).\n"
             "- 500 repetitions of both tests take under a second; `make check` passes with 88 "
             "tests.")
    return c.lines
