"""The Rally Daily service, grouped by job: `web` (the Flask app, its pages and the JSON
API), `jobs` (the RQ queues and the work a worker does), `storage` (the database, its
records and migrations), `domain` (what the service itself decides: which daily is today
and its seed, a player's history, the share strip) and `operations` (the `rally` command,
the processes it starts and supervises, logs). `config` and `clock` are shared by all.
Imports run one way: operations -> web -> jobs -> domain -> storage -> config, clock.
No module here names a game: what a game is and shows comes from its kit and engine, read
from the registry (solver.registry) when a request or a job needs it."""
