"""Running the service: the `rally` command line (`cli`), the processes it starts
(`processes`), their supervision and restarts (`supervisor`, `children`), the embedded
Redis (`redis_server`) and the log lines of every process (`logs`)."""
