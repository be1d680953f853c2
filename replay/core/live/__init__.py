"""Live following: a session read while its agent is still writing it.

`tail` (reading only what was appended, through partial lines, truncation and replacement),
`completion` (when a turn is complete, what a stall is), `follow` (a followed session as a
sequence of updates: new turns, new empty turns, retractions, stalls), `folder` (every
session under some folders, new ones included, with `folder_units`: what a folder holds).
May import: `session`, `detection`, `index`, `readers`, `suggest` and the core utilities.
"""
