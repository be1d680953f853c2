"""The timeline's bars while a big session is read: each redraw costs the same whatever the
session's length (it summed every turn's size at each redraw, so the reading of a file
drawn every quarter second grew as the square of its turns)."""

from __future__ import annotations

import math
import random
from array import array

from replay.core.session.model import Session
from replay.ui.widgets.timeline import BARS, Timeline


class CountedSizes(array):
    """An array of sizes that counts how many items its slices and items hand out."""

    read = 0

    def __getitem__(self, key):  # type: ignore[override]
        value = super().__getitem__(key)
        CountedSizes.read += len(value) if isinstance(key, slice) else 1
        return value


def _timeline() -> Timeline:
    timeline = Timeline(Session(path="s.jsonl", format="gemini"))
    timeline.sizes = CountedSizes("I")
    return timeline


def _reads_while_read(turns: int, batch: int, width: int = 150) -> int:
    """Size items read by the layouts of a session read `batch` turns at a time."""
    timeline = _timeline()
    CountedSizes.read = 0
    sizes = random.Random(turns).choices(range(400), k=turns)
    for start in range(0, turns, batch):
        timeline.sizes.extend(sizes[start:start + batch])
        timeline._layout(width)
    return CountedSizes.read


def test_doubling_the_session_doubles_the_layout_reads() -> None:
    small = _reads_while_read(40_000, 500)
    big = _reads_while_read(80_000, 500)
    # Linear: the same batches twice over cost twice the reads (every size summed at each
    # of twice the redraws was 4x).
    assert big <= 2.3 * small, (small, big)


def test_bars_follow_the_sums_of_their_turns() -> None:
    rng = random.Random(7)
    timeline = _timeline()
    sizes = rng.choices(range(1000), k=5_000)
    timeline.sizes.extend(sizes[:3_000])
    timeline._layout(97)
    timeline.forget_from(1_234)  # a turn changed: its size and the later ones go
    del sizes[1_234:3_000]
    sizes[1_234:] = rng.choices(range(1000), k=3_000)
    timeline.sizes.extend(sizes[1_234:])
    for width in (1, 7, 97, 160, 6_000):
        buckets, bars = timeline._layout(width)
        weights = [math.log1p(sum(sizes[start:end]) / (end - start)) for start, end, _ in buckets]
        peak = max(weights) or 1.0
        assert bars == [BARS[int(weight / peak * (len(BARS) - 1))] for weight in weights]


def test_a_bucket_sum_is_the_sum_of_its_sizes() -> None:
    timeline = _timeline()
    sizes = random.Random(3).choices(range(1 << 20), k=5_000)
    timeline.sizes.extend(sizes[:700])
    assert timeline._sum(0, 700) == sum(sizes[:700])
    timeline.forget_from(300)
    timeline.sizes.extend(sizes[300:])
    for start, end in ((0, 0), (0, 1), (255, 257), (1_000, 4_234), (0, len(sizes))):
        assert timeline._sum(start, end) == sum(sizes[start:end])
