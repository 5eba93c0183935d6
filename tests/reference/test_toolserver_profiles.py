"""conformance.reference.toolserver.profiles: the profile store keeps one connection, and every call is committed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conformance.reference.toolserver.profiles import ProfileStore

DISPLAY = {"name": "Alice", "email": "alice@example.test", "nickname": None}


def made_on_another_thread(path: Path) -> ProfileStore:
    """The store as the tool server makes it: on the thread that imports its app, then used from the event loop."""
    made: list[ProfileStore] = []
    thread = threading.Thread(target=lambda: made.append(ProfileStore(path)))
    thread.start()
    thread.join()
    return made[0]


def test_calls_from_another_thread_share_the_store_and_are_committed(tmp_path: Path) -> None:
    store = made_on_another_thread(tmp_path / "profiles.sqlite3")
    first = store.resolve("https://issuer", "alice", DISPLAY)
    again = store.resolve("https://issuer", "alice", {**DISPLAY, "name": "Changed"})
    assert again == first and first.id and first.id.startswith("usr_")
    assert store.set_display("alice", {"nickname": "al"}) == 1
    assert store.blank_id("alice") == 1
    # Another connection to the file (another process's) sees every call's rows.
    other = ProfileStore(tmp_path / "profiles.sqlite3").get("https://issuer", "alice")
    assert other is not None and (other.id, other.nickname, other.seq) == ("", "al", first.seq)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_opens_a_connection_of_its_own(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "profiles.sqlite3")
    store.resolve("https://issuer", "alice", DISPLAY)
    pid = os.fork()
    if pid == 0:  # the child: its own connection, its rows committed for the parent to read
        try:
            store.resolve("https://issuer", "bob", DISPLAY)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    bob = store.get("https://issuer", "bob")
    assert bob is not None and bob.seq == 2
