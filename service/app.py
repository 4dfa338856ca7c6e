"""The web application: configuration, storage, rate limits and blueprints wired together.

Every error, from a routing 404 to an unexpected exception, is answered as JSON
`{"error": message, "status": code}` so that API clients never parse HTML.
"""

from __future__ import annotations

import importlib.util

from flask import Flask, Response, current_app, jsonify
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge

from service import players
from service.api import Services
from service.api import blueprint as api_blueprint
from service.config import Config
from service.queue import web_connection
from service.ratelimit import RateLimiter
from service.store import Store

# How long each process keeps the hottest reads (see service.api.ShortCache).
CACHE_SECONDS = 1.0


def create_app(config: Config | None = None) -> Flask:
    """The web application on config's database and Redis (the environment's by default)."""
    config = config or Config.from_env()
    app = Flask(__name__, static_folder=None)
    app.config.update(
        SECRET_KEY=config.secret_key,
        MAX_CONTENT_LENGTH=config.max_body_bytes,
        RALLY_CACHE_SECONDS=CACHE_SECONDS,
    )
    app.extensions["rally"] = Services(
        config=config,
        store=Store(config.database_url),
        limiter=RateLimiter(
            web_connection(config.redis_url),
            writes_per_minute=config.writes_per_minute,
            new_seeds_per_hour=config.new_seeds_per_hour,
        ),
    )
    app.register_error_handler(HTTPException, json_error)
    players.init_app(app)
    app.register_blueprint(api_blueprint)
    _register_pages(app)
    return app


def _register_pages(app: Flask) -> None:
    """The browser front end's blueprint, when the front end is installed."""
    if importlib.util.find_spec("service.pages") is not None:
        from service.pages import blueprint as pages_blueprint

        app.register_blueprint(pages_blueprint)


def json_error(error: HTTPException) -> Response:
    """Any HTTP error as a JSON body, keeping the error's own headers (Allow, Retry-After)."""
    if isinstance(error, RequestEntityTooLarge):
        limit = current_app.config["MAX_CONTENT_LENGTH"]
        message = f"the request body is larger than the limit of {limit} bytes"
    elif isinstance(error, InternalServerError):
        message = "internal server error"
    else:
        message = error.description or error.name
    response = jsonify({"error": message, "status": error.code, **getattr(error, "fields", {})})
    response.status_code = error.code or 500
    for name, value in error.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    return response
