"""Log lines of the service's processes: its own from RALLY_LOG_LEVEL, RQ's only when they matter.

RQ logs at INFO every job it takes and every maintenance round ("cleaning
registries" every heartbeat), and sets its loggers to INFO itself whenever a
worker starts; so the quieting is a filter on our handler, which RQ leaves alone.
"""

from __future__ import annotations

import logging

# Loggers whose INFO lines are routine chatter (every job, every maintenance round, every
# migration step): shown only at DEBUG.
CHATTY_LOGGERS = ("rq", "alembic")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class QuietChattyLoggers(logging.Filter):
    """Drops records of the chatty loggers below `threshold`."""

    def __init__(self, threshold: int) -> None:
        super().__init__()
        self.threshold = threshold

    def filter(self, record: logging.LogRecord) -> bool:
        chatty = any(
            record.name == name or record.name.startswith(name + ".") for name in CHATTY_LOGGERS
        )
        return not chatty or record.levelno >= self.threshold


def configure_logging(level_name: str) -> None:
    """One stderr handler for the process; RQ's lines need WARNING unless level_name is DEBUG."""
    level = logging.getLevelName(level_name)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    chatty_threshold = logging.DEBUG if level <= logging.DEBUG else logging.WARNING
    handler.addFilter(QuietChattyLoggers(chatty_threshold))
    logging.basicConfig(level=level, handlers=[handler], force=True)
