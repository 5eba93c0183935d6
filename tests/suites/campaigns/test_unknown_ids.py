"""CAMP-06 on ids the target never issued: on a sandbox whose ids are sequential (``cmp_000041``), a stored id with
its last character changed is simply another campaign, so the check alters ids with a character the target's ids do
not show, and an answer that names exactly the id asked for is another campaign, never a partial match."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from conformance.reference.platform.settings import SandboxSettings
from conformance.suites.campaigns.test_campaigns import _camp06_ids, _shaped, _unknown_id_answer
from tests._forked import forked_harness
from tests.reference.platform.conftest import AUTH, campaign_body
from tests.reference.platform.live import serving

REQUEST = httpx.Request("GET", "https://platform.example/v1/campaigns/cmp_000040")


def _answer(status: int, body: object) -> httpx.Response:
    return httpx.Response(status, json=body, request=REQUEST)


def test_an_answer_naming_the_id_asked_for_is_another_campaign() -> None:
    assert _unknown_id_answer(_answer(404, {"error": {"code": "not_found"}}), "cmp_000040", "c") is None
    assert _unknown_id_answer(_answer(400, {"error": {}}), "cmp_000040", "c") is None  # refused: 404 only reported
    assert _unknown_id_answer(_answer(200, {"id": "cmp_000040"}), "cmp_000040", "c") == "issued"
    partial = _unknown_id_answer(_answer(200, {"id": "cmp_000041"}), "cmp_000040", "c")
    assert partial is not None and "campaign cmp_000041" in partial
    empty = _unknown_id_answer(_answer(200, {}), "cmp_000040", "c")
    assert empty is not None and "no campaign id" in empty


def test_ids_are_altered_outside_the_targets_alphabet() -> None:
    ids = _camp06_ids("cmp_000041", ["cmp_000040", "cmp_000039"])
    assert ids["a stored id with its last character changed"] == "cmp_00004Z"
    assert ids["a stored id with characters appended"] == "cmp_000041ZZ"
    hex_ids = _camp06_ids("cmp_" + "0a1b" * 6, [])
    assert hex_ids["a stored id with its last character changed"].endswith("Z")
    # An id of the stored shape keeps the prefix, the length and the alphabet (digits for sequential ids).
    shaped = _shaped("cmp_000041", "run-1")
    assert shaped.startswith("cmp_") and len(shaped) == len("cmp_000041") and shaped[4:].isdigit()
    assert _shaped("cmp_000041", "run-1") != _shaped("cmp_000041", "run-2")


def test_sequential_ids_do_not_fail_camp06(tmp_path: Path) -> None:
    """Forty campaigns before the run, and one stored under ``cmp_00004``: the check's own campaign is cmp_000042,
    its neighbour cmp_000041 exists, and so does the id it gives cut short by one character. Each near miss either
    names no campaign or names exactly the id asked for (another campaign: not applicable), so CAMP-06 passes."""
    with serving(tmp_path / "data", settings=SandboxSettings(campaign_ids="sequential")) as sandbox:
        with httpx.Client(base_url=sandbox.base_url, headers=AUTH, timeout=30) as client:
            made = [client.post("/v1/campaigns", json=campaign_body()).json()["id"] for _ in range(40)]
        assert made[-1] == "cmp_000040"
        store = sandbox.app.state.sandbox.store
        row = store.get_campaign("act_sandbox", made[0])
        store._conn().execute(  # an id of another scheme the target issued too
            "INSERT INTO campaigns (id, account, created_at, updated_at, doc) VALUES (?, ?, ?, ?, ?)",
            ("cmp_00004", "act_sandbox", row["created_at"], row["updated_at"], json.dumps(row["doc"])),
        )
        report_dir = tmp_path / "report"
        report_dir.mkdir()
        args = ["--suite", "campaigns", "-k", "test_get_by_id", "-q"]
        result = forked_harness(args, report_dir, env=sandbox.settings, timeout=300)
    camp06 = next(r for r in result.report["results"] if r["rule"] == "CAMP-06")
    assert camp06["status"] == "passed", camp06
    assert "a stored id cut short by one character (the target holds a campaign under cmp_00004" in json.dumps(camp06)
