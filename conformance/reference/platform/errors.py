"""The sandbox's error answers: every error is JSON ``{"error": {"type", "code", "message", "param"}}``.

Types and codes follow the real platform where the contract is silent: validation problems are
``400 invalid_request_error`` with a specific ``code`` and the offending ``param`` (dotted path), unknown
ids are ``404 not_found_error``, a bad key is ``401 invalid_request_error / invalid_api_key``.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse


class ApiError(Exception):
    """Raised anywhere in a handler; the request wrapper turns it into the JSON error response."""

    def __init__(
        self,
        status: int,
        code: str | None,
        message: str,
        *,
        param: str | None = None,
        type_: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.type = type_ or _default_type(status)
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"type": self.type, "code": self.code, "message": self.message, "param": self.param}}

    def response(self, extra_headers: dict[str, str] | None = None) -> JSONResponse:
        headers = {**self.headers, **(extra_headers or {})}
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def _default_type(status: int) -> str:
    if status == 404:
        return "not_found_error"
    if status == 429:
        return "rate_limit_error"
    if status == 503:
        return "service_unavailable_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def invalid(param: str | None, message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, code, message, param=param)


def wrong_type(param: str, expected: str) -> ApiError:
    return ApiError(400, "invalid_type", f"'{param}' must be {expected}", param=param)


def missing(param: str) -> ApiError:
    return ApiError(400, "missing_required_parameter", f"missing required parameter '{param}'", param=param)


def unknown_parameter(param: str) -> ApiError:
    return ApiError(400, "unknown_parameter", f"unknown parameter '{param}'", param=param)


def not_found(what: str, ident: str, param: str | None = None) -> ApiError:
    return ApiError(404, "not_found", f"no {what} with id '{ident}'", param=param)
