"""The JSON API under /api/v1, one module per resource: dailies, attempts, puzzles, runs,
play, their analyses, a run's share (share), the caller's own history (me),
transfer links (transfer), leagues of friends (leagues), the weekend rally of Crazy Rally
(rallies) and the API's description of itself (meta). Shared parts
live in common.

Runs are replayed and scored here, never taken from the client. Each route
declares its parameters, body and responses once (see service.web.openapi), which
both validates requests and builds the OpenAPI document.
"""

from service.web.api import (
    analyses,
    attempts,
    dailies,
    leagues,
    me,
    meta,
    play,
    puzzles,
    rallies,
    runs,
    share,
    transfer,
)
from service.web.api.common import API_PREFIX, Services, api, blueprint

__all__ = [
    "API_PREFIX",
    "Services",
    "analyses",
    "api",
    "attempts",
    "blueprint",
    "dailies",
    "leagues",
    "me",
    "meta",
    "play",
    "puzzles",
    "rallies",
    "runs",
    "share",
    "transfer",
]
