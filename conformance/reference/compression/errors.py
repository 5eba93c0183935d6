"""The one shape of the sandbox's own errors: an HTTP status, an error code and a message (answered as JSON)."""

from __future__ import annotations


class ServiceError(Exception):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
