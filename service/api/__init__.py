"""The JSON API under /api/v1, one module per resource: dailies, attempts, puzzles, runs,
their analyses, play and the API's description of itself (meta). Shared parts live in common.

Runs are replayed and scored here, never taken from the client. Each route
declares its parameters, body and responses once (see service.openapi), which
both validates requests and builds the OpenAPI document.
"""

from service.api import analyses, attempts, dailies, meta, play, puzzles, runs
from service.api.common import API_PREFIX, Services, api, blueprint

__all__ = [
    "API_PREFIX",
    "Services",
    "analyses",
    "api",
    "attempts",
    "blueprint",
    "dailies",
    "meta",
    "play",
    "puzzles",
    "runs",
]
