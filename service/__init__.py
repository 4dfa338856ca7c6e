"""The Rally Daily service: command line, web app, API, queued jobs and storage."""
