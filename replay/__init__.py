"""replay: review AI coding-agent transcripts in the terminal."""

__version__ = "0.1.0"
