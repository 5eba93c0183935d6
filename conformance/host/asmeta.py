"""Authorization-server metadata discovery (RFC 8414 / OpenID Connect Discovery) and document schemas.

Order of the well-known URLs, as the contract and the MCP authorization spec mandate:

- issuer with a path (``https://as.example/tenant``):
  1. ``{origin}/.well-known/oauth-authorization-server{path}`` (RFC 8414 path insertion),
  2. ``{origin}/.well-known/openid-configuration{path}`` (OIDC, path inserted),
  3. ``{issuer}/.well-known/openid-configuration`` (OIDC, path appended);
- issuer without a path: ``/.well-known/oauth-authorization-server``, then ``/.well-known/openid-configuration``.

Issuers are compared character for character: no normalizing of a trailing slash, case, default port or path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from conformance.core._exceptions import InvalidResponse
from conformance.host.discovery import json_object
from conformance.host.exchange import exchange_of
from conformance.host.fields import JsonMember, as_str, as_strings
from conformance.host.http import HostHTTP

OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
OIDC_SCOPES = ("openid", "email", "profile")
# The token endpoint auth methods the contract names (AS metadata table); a server may define others (RFC 7591 §2).
NAMED_AUTH_METHODS = ("none", "private_key_jwt", "client_secret_post", "client_secret_basic")


# -- schemas -------------------------------------------------------------------------------------------------


@cache
def load_schema(schema_name: str) -> dict[str, Any]:
    """A bundled schema by short name (``prm``, ``as-metadata``, ``cimd``) or file name."""
    filename = schema_name if schema_name.endswith(".json") else f"{schema_name}.schema.json"
    text = resources.files("conformance").joinpath("schemas", filename).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


_JSON_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "dict": "object",
    "list": "array",
    "NoneType": "null",
}


def _where(path: Any) -> str:
    parts = ""
    for item in path:
        parts += f"[{item}]" if isinstance(item, int) else (f".{item}" if parts else str(item))
    return parts


def _describe(error: jsonschema.ValidationError) -> str:
    where = _where(error.absolute_path)
    value = error.instance
    if error.validator == "required":
        # One error per missing property; its name is the quoted head of the message.
        name = error.message.split("'")[1] if error.message.startswith("'") else error.message
        return f"{where + '.' if where else ''}{name}: required field is missing"
    if error.validator == "type":
        shown = type(value).__name__ if not isinstance(value, bool) else "boolean"
        shown = _JSON_TYPES.get(shown, shown)
        return f"{where or 'document'}: expected {error.validator_value}, got {shown} {json.dumps(value)[:80]}"
    if error.validator == "pattern":
        return f"{where}: {json.dumps(value)[:120]} is not an absolute URL of the required form"
    if error.validator == "minItems":
        return f"{where}: must not be empty"
    if error.validator == "not" and not where:
        return "jwks, jwks_uri: a document must not carry both"
    if error.validator == "not" and error.validator_value == {}:
        return f"{where}: must not be present"
    return f"{where or 'document'}: {error.message}"


def schema_problems(document: Any, schema_name: str) -> list[str]:
    """Every way ``document`` breaks the named schema; each message starts with the field it concerns."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [_describe(e) for e in errors]


# -- discovery -----------------------------------------------------------------------------------------------


def as_metadata_urls(issuer: str) -> list[tuple[str, str]]:
    """``(via, url)`` candidates in the mandated order for an issuer (built from its exact string)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    # RFC 8414 §3.1: a terminating "/" is removed before the path is inserted.
    path = parts.path.rstrip("/")
    if path:
        candidates = [
            ("oauth-authorization-server (path inserted)", origin + OAUTH_WELL_KNOWN + path),
            ("openid-configuration (path inserted)", origin + OIDC_WELL_KNOWN + path),
            ("openid-configuration (path appended)", issuer.rstrip("/") + OIDC_WELL_KNOWN),
        ]
    else:
        candidates = [
            ("oauth-authorization-server", origin + OAUTH_WELL_KNOWN),
            ("openid-configuration", origin + OIDC_WELL_KNOWN),
        ]
    seen: set[str] = set()
    unique = []
    for via, url in candidates:
        if url not in seen:
            seen.add(url)
            unique.append((via, url))
    return unique


@dataclass
class AsMetadata:
    """The metadata document the host settled on for one issuer, and how it got there."""

    expected_issuer: str  # as listed in the PRM's authorization_servers
    url: str
    via: str
    document: dict[str, Any]
    tried: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # schema problems, each naming its field
    others: dict[str, dict[str, Any]] = field(default_factory=dict)  # other well-known URLs that also answered
    copies: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (via, url, document) served
    # The exchange that fetched the chosen document: the evidence of every rule judged on it.
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    @property
    def issuer(self) -> Any:
        return self.document.get("issuer")

    @property
    def issuer_matches(self) -> bool:
        return isinstance(self.issuer, str) and self.issuer == self.expected_issuer

    def issuer_problems(self) -> list[str]:
        """RFC 8414 §3.3: the published issuer is the one listed in authorization_servers, to the character."""
        if self.issuer_matches:
            return []
        return [
            f"issuer {json.dumps(self.issuer)} in {self.url} is not identical to {json.dumps(self.expected_issuer)}"
            " listed in authorization_servers (exact string comparison)"
        ]

    def require_issuer_match(self) -> None:
        if problems := self.issuer_problems():
            raise InvalidResponse(problems[0])

    authorization_endpoint = JsonMember(as_str, source="document")
    token_endpoint = JsonMember(as_str, source="document")
    registration_endpoint = JsonMember(as_str, source="document")
    userinfo_endpoint = JsonMember(as_str, source="document")
    scopes_supported = JsonMember(as_strings, source="document")
    # None when absent (RFC 8414's default is then client_secret_basic)
    auth_methods_supported = JsonMember(as_strings, "token_endpoint_auth_methods_supported", source="document")
    code_challenge_methods = JsonMember(as_strings, "code_challenge_methods_supported", source="document")
    prompt_values = JsonMember(as_strings, "prompt_values_supported", source="document")  # OpenID: "consent"...

    @property
    def supports_s256(self) -> bool:
        return "S256" in (self.code_challenge_methods or [])

    @property
    def iss_parameter_supported(self) -> bool:
        """RFC 9207 is advertised only by the JSON value ``true`` (a string "true" does not count)."""
        return self.document.get("authorization_response_iss_parameter_supported") is True

    @property
    def cimd_supported(self) -> bool:
        return self.document.get("client_id_metadata_document_supported") is True

    @property
    def is_openid(self) -> bool:
        return "openid-configuration" in self.via


def discover_as_metadata(http: HostHTTP, issuer: str, *, try_all: bool = False) -> AsMetadata:
    """Fetch the metadata of ``issuer`` in the mandated order.

    The first document whose ``issuer`` is identical to ``issuer`` wins. When documents are found but none matches,
    the first one is returned (``issuer_matches`` False) so that the mismatch itself is the verdict, not a
    "not found". ``try_all`` fetches every candidate anyway (to report which well-known URLs are served).
    Raises :class:`InvalidResponse` when no candidate serves a JSON object, saying what each URL gave.
    """
    tried: list[str] = []
    found: list[tuple[str, str, dict[str, Any]]] = []
    chosen: tuple[str, str, dict[str, Any]] | None = None
    fetched: dict[str, dict[str, Any]] = {}  # url -> the exchange that fetched it
    for via, url in as_metadata_urls(issuer):
        if chosen is not None and not try_all:
            break
        response = http.get(url, headers={"Accept": "application/json"}, metadata_driven=True)
        try:
            document = json_object(response, "authorization server metadata")
        except InvalidResponse as exc:
            tried.append(f"{via} {url}: {exc.message}")
            continue
        tried.append(f"{via} {url}: 200, issuer {json.dumps(document.get('issuer'))}")
        found.append((via, url, document))
        if (exchange := exchange_of(response)) is not None:
            fetched[url] = exchange
        if chosen is None and document.get("issuer") == issuer:
            chosen = (via, url, document)
    if not found:
        raise InvalidResponse(f"no authorization server metadata for issuer {issuer!r}; " + "; ".join(tried))
    via, url, document = chosen or found[0]
    return AsMetadata(
        expected_issuer=issuer,
        url=url,
        via=via,
        document=document,
        tried=tried,
        problems=schema_problems(document, "as-metadata"),
        others={u: d for _, u, d in found if u != url},
        copies=found,
        exchanges=[fetched[url]] if url in fetched else [],
    )


__all__ = [
    "OIDC_SCOPES",
    "AsMetadata",
    "as_metadata_urls",
    "discover_as_metadata",
    "load_schema",
    "schema_problems",
]
