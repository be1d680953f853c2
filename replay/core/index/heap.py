"""The C heap of a process holding big columns: big blocks mapped apart, so freeing gives back.

The app holds a big session as columns (`TurnIndex`: arrays and a bytearray that grow by
`realloc` while the file is read) and reads it through 4 MiB chunks. glibc serves a block
over its mmap threshold by a mapping of its own, given back when freed and grown in place by
`mremap`; but the threshold is dynamic: once a mapped block is freed, blocks up to its size
come from the heap instead. From then on the growing columns move within the heap and the
space each move leaves is kept by the process: on a Gemini recording of 417,000 small
messages (50 MB), 22 MB of the heap were such holes (47.5 MB of heap for 25 MB in use,
`malloc_stats`), a fifth of the app's resident memory.

`keep_big_blocks_mapped` fixes the threshold at its starting value (which turns the
dynamic raising off): every block over 128 KiB is a mapping of its own, wherever and in
whichever thread it is made. The cost is a `mmap` and `munmap` per such block, a few
hundred for a big file.
"""

from __future__ import annotations

import sys

M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameter number (malloc.h)."""
THRESHOLD = 128 * 1024
"""glibc's default starting threshold: blocks above it are mapped."""


def keep_big_blocks_mapped(threshold: int = THRESHOLD) -> bool:
    """Fix the C heap's mmap threshold (glibc on Linux); True when it was set. Elsewhere (or
    with another C library, whose `mallopt` refuses or is missing) nothing changes."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, ImportError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, threshold) == 1
