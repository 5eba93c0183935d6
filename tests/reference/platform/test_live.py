"""The sandbox served over HTTP: concurrent clients lose no update, and the official ``openai`` client works against
it, including its retry of an injected 429."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from conformance.reference.platform.settings import MAIN_KEY, KeySpec, SandboxSettings
from tests.reference.platform.conftest import AUTH, campaign_body
from tests.reference.platform.live import LiveSandbox, serving

CLIENTS = 8
ROUNDS = 15
ONE_PER_WINDOW = "sk-one-request-per-second"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSandbox]:
    settings = SandboxSettings(
        keys=(
            KeySpec(MAIN_KEY),
            KeySpec(ONE_PER_WINDOW, project="proj_one", rpm=1, window_s=1.0),
        )
    )
    with serving(tmp_path_factory.mktemp("platform-live"), settings=settings) as live:
        yield live


def test_concurrent_updates_lose_nothing(sandbox: LiveSandbox) -> None:
    """Eight clients update eight different fields of one campaign at once: every field keeps its client's last
    value and the stored revision counts every write (a read-modify-write without a transaction would not)."""
    with httpx.Client(base_url=sandbox.base_url, headers=AUTH, timeout=30) as client:
        campaign = client.post("/v1/campaigns", json=campaign_body(), headers=AUTH).json()
        url = f"/v1/campaigns/{campaign['id']}"
        writers = {
            "name": lambda i: {"name": f"Name {i}"},
            "description": lambda i: {"description": f"Description {i}"},
            "start_time": lambda i: {"start_time": 1_700_000_000 + i},
            "end_time": lambda i: {"end_time": 1_900_000_000 + i},
            "budget": lambda i: {"budget": {"lifetime_spend_limit_micros": 2_000_000 + i}},
            "targeting": lambda i: {"targeting": {"locations": {"include": [{"id": "loc_us_ca"}]}}},
            "status": lambda i: {"status": "active" if i % 2 else "paused"},
            "conversion_event_setting_ids": lambda i: {"conversion_event_setting_ids": []},
        }
        assert len(writers) == CLIENTS

        def write(field: str) -> int:
            with httpx.Client(base_url=sandbox.base_url, headers=AUTH, timeout=30) as own:
                ok = 0
                for i in range(ROUNDS):
                    response = own.post(url, json=writers[field](i))
                    ok += response.status_code == 200
                return ok

        with ThreadPoolExecutor(CLIENTS) as pool:
            successes = list(pool.map(write, writers))
        final = client.get(url).json()
    assert successes == [ROUNDS] * CLIENTS
    last = ROUNDS - 1
    assert final["name"] == f"Name {last}"
    assert final["description"] == f"Description {last}"
    assert final["start_time"] == 1_700_000_000 + last
    assert final["end_time"] == 1_900_000_000 + last
    assert final["budget"] == {"lifetime_spend_limit_micros": 2_000_000 + last}
    assert final["status"] == ("active" if last % 2 else "paused")
    assert final["targeting"]["locations"]["include"][0]["id"] == "loc_us_ca"
    store = sandbox.app.state.sandbox.store
    # One revision for the create and one per update: no write was lost or merged into another.
    assert store.revision(campaign["id"]) == 1 + CLIENTS * ROUNDS


def test_concurrent_token_counts_add_up_in_tracked_spend(sandbox: LiveSandbox) -> None:
    body = {"model": "gpt-4o", "input": "count me in, every time"}

    def count(_: int) -> int:
        with httpx.Client(base_url=sandbox.base_url, headers=AUTH, timeout=30) as own:
            return sum(own.post("/v1/responses/input_tokens", json=body).json()["input_tokens"] for _ in range(ROUNDS))

    store = sandbox.app.state.sandbox.store
    before = store.spend("proj_main")
    with ThreadPoolExecutor(CLIENTS) as pool:
        total = sum(pool.map(count, range(CLIENTS)))
    assert store.spend("proj_main") - before == total  # micros_per_token = 1


def test_openai_client_counts_input_tokens(sandbox: LiveSandbox) -> None:
    import openai  # here, not at collection: a costly import for every process that collects the suite

    client = openai.OpenAI(api_key=MAIN_KEY, base_url=sandbox.base_url + "/v1", max_retries=0)
    result = client.responses.input_tokens.count(
        model="gpt-4o",
        input=[{"role": "user", "content": "How many tokens is this?"}],
        instructions="Be brief.",
        tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": True}],
    )
    assert result.object == "response.input_tokens"
    assert result.input_tokens > 0
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(api_key="sk-wrong", base_url=sandbox.base_url + "/v1").responses.input_tokens.count(
            model="gpt-4o", input="hi"
        )


def test_openai_client_retries_an_injected_429(sandbox: LiveSandbox) -> None:
    import openai

    statuses: list[int] = []
    # The client's own HTTP client type, with a hook recording what the server answered.
    http_client = openai.DefaultHttpxClient(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
    client = openai.OpenAI(
        api_key=ONE_PER_WINDOW, base_url=sandbox.base_url + "/v1", max_retries=2, http_client=http_client
    )
    first = client.responses.input_tokens.count(model="gpt-4o", input="first")
    # The key allows one request per second: the next one is refused with Retry-After, and the client retries.
    second = client.responses.input_tokens.count(model="gpt-4o", input="second")
    assert first.input_tokens == second.input_tokens
    assert 429 in statuses and statuses[-1] == 200


def test_healthz_and_persistence_directory(sandbox: LiveSandbox) -> None:
    response = httpx.get(sandbox.base_url + "/healthz")
    assert response.json() == {"status": "ok"}
    assert sandbox.app.state.sandbox.store.path.name == "platform.sqlite3"
