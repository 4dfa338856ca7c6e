"""The web process: the Flask application factory, the pages, the JSON API under /api/v1
and its OpenAPI document, and what guards every request (bodies, same-origin writes,
security headers, rate limits, the player cookie)."""
