"""Tools over the game and the table: :mod:`.replay` (game logs, HTML and GIF replays),
:mod:`.distributed` (shards on Ray workers), :mod:`.docs` (the environment card),
:mod:`.files` (atomic writes)."""
