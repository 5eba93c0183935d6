"""The HAR 1.2 structure (http://www.softwareishard.com/blog/har-12-spec/) as a JSON schema: what a HAR viewer
needs of every entry. Custom fields start with ``_`` and are allowed anywhere, as the format says."""

from __future__ import annotations

from typing import Any

import jsonschema

_NAME_VALUE = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name", "value"],
        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    },
}
_INT = {"type": "integer"}

HAR_1_2_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["log"],
    "properties": {
        "log": {
            "type": "object",
            "required": ["version", "creator", "entries"],
            "properties": {
                "version": {"const": "1.2"},
                "creator": {
                    "type": "object",
                    "required": ["name", "version"],
                    "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
                },
                "pages": {"type": "array"},
                "entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
                "comment": {"type": "string"},
            },
        }
    },
    "$defs": {
        "entry": {
            "type": "object",
            "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
            "properties": {
                # ISO 8601 with a time zone, e.g. 2009-07-24T19:20:30.45+01:00
                "startedDateTime": {
                    "type": "string",
                    "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$",
                },
                "time": {"type": "number", "minimum": 0},
                "request": {
                    "type": "object",
                    "required": [
                        *("method", "url", "httpVersion", "headers", "queryString", "cookies"),
                        *("headersSize", "bodySize"),
                    ],
                    "properties": {
                        "method": {"type": "string", "minLength": 1},
                        "url": {"type": "string"},
                        "httpVersion": {"type": "string"},
                        "headers": _NAME_VALUE,
                        "queryString": _NAME_VALUE,
                        "cookies": _NAME_VALUE,
                        "headersSize": _INT,
                        "bodySize": _INT,
                        "postData": {
                            "type": "object",
                            "required": ["mimeType"],
                            "properties": {"mimeType": {"type": "string"}, "text": {"type": "string"}},
                        },
                    },
                },
                "response": {
                    "type": "object",
                    "required": [
                        *("status", "statusText", "httpVersion", "headers", "cookies", "content", "redirectURL"),
                        *("headersSize", "bodySize"),
                    ],
                    "properties": {
                        "status": _INT,
                        "statusText": {"type": "string"},
                        "httpVersion": {"type": "string"},
                        "headers": _NAME_VALUE,
                        "cookies": _NAME_VALUE,
                        "content": {
                            "type": "object",
                            "required": ["size", "mimeType"],
                            "properties": {
                                "size": _INT,
                                "mimeType": {"type": "string"},
                                "text": {"type": "string"},
                            },
                        },
                        "redirectURL": {"type": "string"},
                        "headersSize": _INT,
                        "bodySize": _INT,
                    },
                },
                "cache": {"type": "object"},
                "timings": {
                    "type": "object",
                    "required": ["send", "wait", "receive"],
                    "properties": {
                        "send": {"type": "number", "minimum": -1},
                        "wait": {"type": "number", "minimum": -1},
                        "receive": {"type": "number", "minimum": -1},
                    },
                },
                "comment": {"type": "string"},
            },
        }
    },
}


def validate_har(document: Any) -> None:
    """Raise ``jsonschema.ValidationError`` when ``document`` is not a HAR 1.2 log."""
    jsonschema.validate(document, HAR_1_2_SCHEMA)
