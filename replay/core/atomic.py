"""Writing a whole text file so that a failure never leaves half of it in place."""

from __future__ import annotations

from pathlib import Path

from replay.core.files import output_stream


def write_text_atomically(path: Path, text: str) -> None:
    """Write beside the destination and rename over it: never a half-written file in place.

    As `output_stream` does: through a symbolic link to its target, and straight into a FIFO
    or a device, which are never replaced.

    Raises:
        OSError: the file cannot be written.
    """
    with output_stream(path, "utf-8") as stream:
        stream.write(text)
