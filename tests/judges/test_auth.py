"""The tool server's document judges that the live checks call one by one."""

from __future__ import annotations

from conformance.judges.auth import endpoint_https_problems


def test_endpoints_must_be_absolute_https_unless_their_transport_is_not_judged() -> None:
    document = {"authorization_endpoint": "https://as.example/authorize", "token_endpoint": "http://as.example/token"}
    assert endpoint_https_problems(document) == [
        "token_endpoint: 'http://as.example/token' is not an absolute https URL"
    ]
    assert endpoint_https_problems(document, judged=lambda url: "as.example" not in url) == []
    assert endpoint_https_problems({"token_endpoint": "/token"}, judged=lambda url: False) == [
        "authorization_endpoint: missing",
        "token_endpoint: '/token' is not an absolute https URL",
    ]
