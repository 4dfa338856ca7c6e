"""The database: its tables (`models`) and migrations, the store that reads and writes
puzzles, runs, players, attempts and analyses on SQLite or PostgreSQL, and the brief
in-process cache of the hottest reads."""
