"""Fixtures of the platform sandbox tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from conformance.reference.platform import create_app
from conformance.reference.platform.settings import MAIN_KEY

AUTH = {"Authorization": f"Bearer {MAIN_KEY}"}
BUDGET = {"lifetime_spend_limit_micros": 1_000_000}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(tmp_path)) as test_client:
        yield test_client


def campaign_body(**fields: object) -> dict[str, object]:
    body: dict[str, object] = {"name": "Spring sale", "status": "paused", "budget": dict(BUDGET)}
    body.update(fields)
    return body
