"""Many sessions at once: the headless scan and what is built on it.

`scan` (one report per session, as `replay scan --json` prints it), `tasks` (a corpus as a
list of tasks and the pure function that scans one), `pool` (running tasks in this process,
a process pool or Dask), `report` (the corpus in numbers), `cache` (results of unchanged
files, kept between runs), `queue_cache` (a review queue's entries, kept there too).
May import: `session` .. `annotate` and the core utilities.
"""
