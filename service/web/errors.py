"""The error every part of the service raises to refuse a request: answered as JSON
`{"error": message, "status": code, **fields}` by the app's error handler."""

from __future__ import annotations

from typing import Any

from werkzeug.exceptions import HTTPException


class ApiError(HTTPException):
    """An error the API answers as JSON: {"error": message, "status": code, **fields}."""

    def __init__(
        self, code: int, message: str, headers: dict[str, str] | None = None, **fields: Any
    ) -> None:
        super().__init__(description=message)
        self.code = code
        self.fields = fields
        self.extra_headers = headers or {}

    @classmethod
    def retry_later(cls, code: int, message: str, seconds: int) -> ApiError:
        """A refusal to try again in seconds: said in the Retry-After header and the body."""
        return cls(code, message, headers={"Retry-After": str(seconds)}, retry_after=seconds)

    def get_headers(self, *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
        return [*super().get_headers(*args, **kwargs), *self.extra_headers.items()]
