"""The index of a session: finding things in it without holding every turn.

`turn_index` (a compact column index of a big session, turns read back on demand),
`needle_bytes` (search over a file's bytes before decoding), `navigation` (stops, search,
role filter, go-to, playback timing).
May import: `session`, `detection` and the core utilities.
"""
