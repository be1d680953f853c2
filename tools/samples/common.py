"""Helpers every sample story uses: time, seeded chance, writing files, diffs, shell output."""

from __future__ import annotations

import base64
import difflib
import json
import random
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
"""Anthropic message, request and tool-use ids avoid 0, O, I and l."""

EMPTY_WRAPPER = "<conversation_data>\n\n</conversation_data>"
"""The empty user message exactly as the case studies show it."""

Json = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# time and random helpers


def epoch_ms(iso: str) -> int:
    """Milliseconds since the epoch for an ISO 8601 UTC time such as 2026-04-21T12:58:03.120Z."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return round(moment.timestamp() * 1000)


def iso_ms(ms: int) -> str:
    """The ISO 8601 UTC form (milliseconds, trailing Z) of an epoch in milliseconds."""
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def token_estimate(text: str) -> int:
    """A rough token count for made-up usage figures."""
    return max(1, round(len(text) / 3.6))


def reading_seconds(text: str, rate: float = 170.0) -> float:
    """Seconds a model needs to stream `text` at about 45 tokens a second."""
    return 0.6 + len(text) / rate


class Chance:
    """A seeded source of every arbitrary-looking value in one sample."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, count: int) -> str:
        """`count` characters drawn from `alphabet`."""
        return "".join(self.rng.choice(alphabet) for _ in range(count))

    def hex(self, count: int = 40) -> str:
        """A hex string such as a git hash."""
        return self.chars("0123456789abcdef", count)

    def blob(self, size: int, *, urlsafe: bool = False) -> str:
        """Base64 of `size` random bytes (signatures, encrypted reasoning)."""
        data = bytes(self.rng.getrandbits(8) for _ in range(size))
        encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
        return encode(data).decode("ascii")

    def uuid4(self) -> str:
        """A random-looking UUID version 4."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def uuid7(self, ms: int) -> str:
        """A UUID version 7 for the given millisecond time (Codex session and turn ids)."""
        value = (ms & ((1 << 48) - 1)) << 80
        value |= 0x7 << 76
        value |= self.rng.getrandbits(12) << 64
        value |= 0b10 << 62
        value |= self.rng.getrandbits(62)
        return str(uuid.UUID(int=value))

    def between(self, low: float, high: float) -> float:
        """A float in [low, high]."""
        return self.rng.uniform(low, high)

    def integer(self, low: int, high: int) -> int:
        """An int in [low, high]."""
        return self.rng.randint(low, high)


def write_json(directory: Path, name: str, data: Json) -> Path:
    """Write one JSON document the way `opencode export` prints it (two-space indent)."""
    path = directory / name
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_jsonl(directory: Path, name: str, records: Iterable[Json]) -> Path:
    """Write one compact JSON record per line."""
    path = directory / name
    lines = [json.dumps(record, ensure_ascii=False, separators=(",", ":")) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def unified(path: str, before: str, after: str) -> str:
    """A unified diff of one file, as tools print it."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=path, tofile=path,
    )
    return f"Index: {path}\n{'=' * 67}\n" + "".join(lines)


def diff_counts(before: str, after: str) -> tuple[int, int]:
    """(added, removed) line counts between two texts."""
    added = removed = 0
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("+ "):
            added += 1
        elif line.startswith("- "):
            removed += 1
    return added, removed


def prose(text: str) -> str:
    """Join wrapped source lines: a line starting with two spaces continues the one before.

    Long markdown written by a model has long lines; this keeps the source within 100 columns.
    """
    return text.replace("\n  ", " ")


def numbered(text: str, start: int = 1) -> str:
    """File text with opencode's `N: ` line numbers."""
    return "\n".join(f"{number}: {line}" for number, line in enumerate(text.splitlines(), start))


# ---------------------------------------------------------------------------------------------
# shell output helpers shared by the GPU stories

GPU_NAME = "NVIDIA RTX PRO 6000 Blac..."
GPU_TOTAL_MIB = 97887


def smi_table(stamp: str, gpus: Sequence[tuple[int, int, int, int]], *, driver: str = "580.95.05",
              cuda: str = "13.0", bus: int = 0x01) -> str:
    """A full `nvidia-smi` table; each GPU is (used MiB, util %, watts, temperature C).

    Inside an LXC container the process table stays empty: the PID namespace hides them.
    """
    rule = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
    lines = [
        stamp.ljust(31),
        "+" + "-" * 89 + "+",
        f"| NVIDIA-SMI {driver}              Driver Version: {driver}      CUDA Version: {cuda}  "
        f"   |",
        rule,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. "
        "ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute "
        "M. |",
        "|                                         |                        |               MIG "
        "M. |",
        "|" + "=" * 41 + "+" + "=" * 24 + "+" + "=" * 22 + "|",
    ]
    for index, (used, util, watts, temp) in enumerate(gpus):
        perf = "P1" if util > 5 else "P8"
        fan = 30 + util // 3
        bus_id = f"00000000:{bus + index * 0x10:02X}:00.0"
        lines.append(f"|   {index}  {GPU_NAME}    On  |   {bus_id} Off |                  Off |")
        memory = f"{used}MiB /  {GPU_TOTAL_MIB}MiB"
        left = f" {fan}%   {temp}C    {perf}"
        power = f"{watts}W /  600W"
        lines.append(f"|{left}{power.rjust(40 - len(left))} |{memory.rjust(23)} |"
                     f"{(str(util) + '%').rjust(9)}      Default |")
        lines.append("|                                         |                        |"
                     "                  N/A |")
        lines.append(rule)
    lines += [
        "",
        "+" + "-" * 89 + "+",
        "| Processes:" + " " * 78 + "|",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU "
        "Memory |",
        "|        ID   ID                                                               Usage    "
        "  |",
        "|" + "=" * 89 + "|",
        "|  No running processes found" + " " * 61 + "|",
        "+" + "-" * 89 + "+",
    ]
    return "\n".join(lines)


def smi_query(gpus: Sequence[tuple[int, int]]) -> str:
    """`nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu "
    "--format=csv,noheader`."""
    return "\n".join(f"{index}, {used} MiB, {GPU_TOTAL_MIB} MiB, {util} %"
                     for index, (used, util) in enumerate(gpus))


# ---------------------------------------------------------------------------------------------
# opencode export builder
