"""The session: the data model every other stage works on.

`model` (sessions, turns, parts, events), `turn_ref` (how a person names a turn: `#N` or an
id), `text` (blankness, empty wrappers, shortening), `harness` (the wrapper tags and markers
a harness writes into user turns), `labels` (the interpretation label set).
May import: the core utilities only.
"""
