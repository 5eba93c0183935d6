"""A scripted user of the reference IdP: register a client (DCR), run authorization code + PKCE with ``resource``,
log in and consent through the HTML forms, exchange the code. For the project's own tests and probes of the
reference stack; the harness has its own, complete host (conformance.host).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import ssl
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

REDIRECT_URI = "https://127.0.0.1:9/callback"  # never fetched: the flow stops at the redirect


class FlowError(RuntimeError):
    pass


@dataclass
class Authorization:
    """What came back to the redirect URI."""

    params: dict[str, str]
    location: str


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "form":
            attributes = dict(attrs)
            self.forms[attributes.get("id") or ""] = attributes.get("action") or ""


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class ScriptedClient:
    def __init__(self, issuer: str, ca_file: str, *, metadata: dict[str, Any] | None = None):
        """``metadata`` fixes the endpoints (probes that must not depend on what discovery says); default discovery."""
        self.http = httpx.Client(
            verify=ssl.create_default_context(cafile=ca_file), timeout=10.0, follow_redirects=False
        )
        if metadata is None:
            url = issuer.rstrip("/") + "/.well-known/openid-configuration"
            metadata = dict(self.http.get(url).raise_for_status().json())
        self.metadata = metadata
        self.client_id: str | None = None

    def close(self) -> None:
        self.http.close()

    def register(self, redirect_uri: str = REDIRECT_URI, **metadata: Any) -> str:
        document = {
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "application_type": "web",
            **metadata,
        }
        response = self.http.post(self.metadata["registration_endpoint"], json=document)
        if response.status_code != 201:
            raise FlowError(f"registration failed: {response.status_code} {response.text}")
        self.client_id = str(response.json()["client_id"])
        return self.client_id

    def authorize(
        self,
        *,
        login: str,
        password: str,
        resource: str | None,
        scope: str,
        challenge: str | None,
        decision: str = "approve",
        redirect_uri: str = REDIRECT_URI,
        extra: dict[str, str] | None = None,
    ) -> Authorization:
        """Run the front channel as a browser would; return the parameters sent to the redirect URI."""
        params = {
            "client_id": self.client_id or "",
            "response_type": "code",
            "redirect_uri": redirect_uri,
            "scope": scope,
            "state": secrets.token_urlsafe(8),
        }
        if resource:
            params["resource"] = resource
        if challenge:
            params.update(code_challenge=challenge, code_challenge_method="S256")
        params.update(extra or {})
        response = self.http.get(self.metadata["authorization_endpoint"], params=params)
        for _ in range(12):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if location.startswith(redirect_uri):
                    split = urlsplit(location)
                    query = parse_qs(split.query or split.fragment)
                    return Authorization({k: v[0] for k, v in query.items()}, location)
                response = self.http.get(location)
                continue
            if response.status_code != 200 or "text/html" not in response.headers.get("content-type", ""):
                raise FlowError(f"unexpected answer {response.status_code} at {response.url}: {response.text[:300]}")
            forms = _Forms()
            forms.feed(response.text)
            if "login" in forms.forms:
                if "Invalid login" in response.text and response.request.method == "POST":
                    raise FlowError("login refused")
                action, data = forms.forms["login"], {"login": login, "password": password}
            elif "consent" in forms.forms:
                action = forms.forms["consent" if decision == "approve" else "deny"]
                data = {"decision": decision}
            else:
                raise FlowError(f"no known form at {response.url}: {re.sub(r'<[^>]+>', ' ', response.text)[:300]}")
            response = self.http.post(urljoin(str(response.url), action), data=data)
        raise FlowError("too many steps in the authorization flow")

    def token(self, **form: str) -> httpx.Response:
        return self.http.post(self.metadata["token_endpoint"], data={"client_id": self.client_id or "", **form})

    def exchange(
        self, code: str, verifier: str, resource: str | None, redirect_uri: str = REDIRECT_URI, **extra: str
    ) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
        }
        if resource:
            form["resource"] = resource
        response = self.token(**form, **extra)
        if response.status_code != 200:
            raise FlowError(f"token request failed: {response.status_code} {response.text}")
        return dict(response.json())


def obtain_tokens(
    issuer: str,
    ca_file: str,
    *,
    login: str,
    password: str,
    resource: str,
    scope: str = "openid email profile tools.read tools.write",
) -> dict[str, Any]:
    """Register, authorize and exchange in one go: the token response for ``resource``."""
    client = ScriptedClient(issuer, ca_file)
    try:
        client.register()
        verifier, challenge = pkce_pair()
        answer = client.authorize(login=login, password=password, resource=resource, scope=scope, challenge=challenge)
        if "code" not in answer.params:
            raise FlowError(f"no code in the authorization response: {answer.params}")
        return client.exchange(answer.params["code"], verifier, resource)
    finally:
        client.close()
