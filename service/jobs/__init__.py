"""The queued work: putting jobs on the RQ queues from any process (`queue`), the jobs
themselves and the worker that runs them (`jobs`), what a worker notices of the others and
of Redis (`worker_upkeep`), and running a solve bounded in time and memory (`bounded`)."""
