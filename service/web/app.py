"""The web application: configuration, storage, rate limits and blueprints wired together.

Every error, from a routing 404 to an unexpected exception, is answered as JSON
`{"error": message, "status": code}` so that API clients never parse HTML; the
one exception is a page that does not exist outside the API, which a person in a
browser sees as the front end's HTML "not found" page.
"""

from __future__ import annotations

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

from service.config import Config
from service.jobs.queue import web_connection
from service.storage.database import BUSY_RETRY_AFTER_SECONDS, DatabaseBusy
from service.storage.store import Store
from service.web import league_pages, pages, players, same_origin, security
from service.web.api import API_PREFIX, Services
from service.web.api import blueprint as api_blueprint
from service.web.errors import ApiError
from service.web.health import blueprint as health_blueprint
from service.web.ratelimit import RateLimiter


def create_app(config: Config | None = None) -> Flask:
    """The web application on config's database and Redis (the environment's by default)."""
    config = config or Config.from_env()
    app = Flask(__name__, static_folder=None)
    # No SECRET_KEY: the service keeps nothing in Flask's session, which would otherwise
    # build a signing serializer on every request. RALLY_SECRET_KEY signs player cookies.
    app.config.update(MAX_CONTENT_LENGTH=config.max_body_bytes)
    store = Store.of(config)
    app.extensions["rally"] = Services(
        config=config,
        store=store,
        limiter=RateLimiter(
            web_connection(config.redis_url),
            writes_per_minute=config.writes_per_minute,
            new_seeds_per_hour=config.new_seeds_per_hour,
            new_players_per_hour=config.new_players_per_hour,
        ),
    )
    if config.trusted_proxies:
        # The client's address and scheme as the proxies saw them; a client's own
        # X-Forwarded-* headers are ignored, being further left than the proxies' entries.
        proxies = config.trusted_proxies
        # Flask's documented way to wrap the app in a middleware (mypy takes wsgi_app for a
        # method, which may not be assigned).
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies
        )
    app.register_error_handler(HTTPException, error_response)
    app.register_error_handler(DatabaseBusy, database_busy)
    app.before_request(refuse_transfer_codings)
    same_origin.init_app(app)
    players.init_app(app, config.secret_key)
    security.init_app(app)
    app.register_blueprint(api_blueprint)
    app.register_blueprint(pages.blueprint)
    app.register_blueprint(league_pages.blueprint)
    app.register_blueprint(health_blueprint)
    return app


def refuse_transfer_codings() -> None:
    """A 501 for a body sent in a transfer coding other than chunked alone (gzip, deflate,
    identity before chunked): nothing here decodes one, and gunicorn reads such a body as
    if it were plain chunks (it refuses unknown codings itself, with the same 501)."""
    header = request.headers.get("Transfer-Encoding")
    if header is None:
        return
    codings = [coding.strip().lower() for coding in header.split(",")]
    if codings != ["chunked"]:
        raise ApiError(
            501, f"unsupported transfer coding {header!r}: send the body plain or chunked"
        )


def error_response(error: HTTPException) -> Response | tuple[str, int]:
    """JSON for the API and every other error; the HTML page for a missing page."""
    if error.code == 404 and not request.path.startswith(API_PREFIX + "/"):
        return pages.not_found(error)
    return json_error(error)


def database_busy(_error: DatabaseBusy) -> Response:
    """A lock held elsewhere longer than the store waits, or no free connection for as long:
    a 503 to retry, never a 500."""
    return json_error(
        ApiError.retry_later(
            503,
            "the database stayed busy (a lock held, or every connection taken): nothing "
            "was done, retry in a moment",
            BUSY_RETRY_AFTER_SECONDS,
        )
    )


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
