"""Regular expressions compiled the first time they are used, not when replay starts.

The signals' phrase lists (complaints, frustration, plans, readings, in several languages) took
a third of the suggest package's import: most runs of `replay scan` judge a few empty turns and
need only some of them, and many need none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


class LazyPattern:
    """`re.compile(source, flags)`, compiled when first used; the methods the signals call."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled expression (compiled now if it was not yet)."""
        pattern = self._compiled
        if pattern is None:
            pattern = self._compiled = re.compile(self.source, self.flags)
        return pattern

    @property
    def is_compiled(self) -> bool:
        """Whether it was used (tests: what a scan compiles)."""
        return self._compiled is not None

    def search(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.search`."""
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        """`re.Pattern.match`."""
        return self.compiled.match(text)

    def findall(self, text: str) -> list[str]:
        """`re.Pattern.findall`."""
        return self.compiled.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """`re.Pattern.finditer`."""
        return self.compiled.finditer(text)

    def sub(self, replacement: str, text: str) -> str:
        """`re.Pattern.sub`."""
        return self.compiled.sub(replacement, text)
