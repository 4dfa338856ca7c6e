"""The database and what the service keeps in it, on SQLite or PostgreSQL.

`models` holds the tables and `migrations` their changes. `store.Store` gathers one
repository per kind of record: `puzzles`, `runs` (and the standings they make),
`players` (and their history), `attempts`, `analyses`, `leagues` and the rally's reads
(`rally`, with `league_reads`); `streaks` keeps each player's latest streak as runs are
stored. Every repository reads and writes through one `database.Database`: the engine,
each process's pool of connections, its short read and write connections and
`DatabaseBusy`. The statements of the hottest paths run on the driver's cursor
(`store_statements`), and `cache` keeps the hottest reads a moment.
"""
