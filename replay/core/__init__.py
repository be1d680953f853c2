"""The UI-free core: reading transcripts, finding empty turns, annotations, export, tailing.

Nothing in this package imports Textual or Rich; headless commands and tests use it directly.
"""
