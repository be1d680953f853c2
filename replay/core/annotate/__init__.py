"""Annotation: what reviewers said about empty turns, kept safe and compared.

`journal` (the append-only file that survives a crash), `annotations` (records, the store
of a session), `agree` (agreement between reviewers), `review_queue`, `queue_sources` and
`queue_position` (one review queue over many sessions, and where a reviewer stopped).
May import: `session` .. `live` and the core utilities.
"""
