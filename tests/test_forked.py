"""tests/_forked.py: the forked runs of pytester tests come from one fork server for the whole session.

The pytester fixture drops, when its test ends, the modules first imported during the test; tests/conftest.py
imports the fork server's modules with the session, so that a pytester test's forked run does not start a fork
server of its own (preloading everything again) for the next test to forget."""

from __future__ import annotations

import pytest

FORK_SERVERS: list[int] = []  # the parent of each test's forked run, in test order


@pytest.mark.parametrize("turn", ["first", "second"])
def test_pytester_tests_fork_their_runs_from_one_server(pytester: pytest.Pytester, turn: str) -> None:
    from tests._forked import runpytest_forked  # here, as tests/_checks_run.py imports it: inside a pytester test

    pytester.makepyfile(test_parent="import os\n\ndef test_parent():\n    print('PARENT', os.getppid())\n")
    result = runpytest_forked(pytester, "-s", "test_parent.py")
    assert result.ret == 0, result.outlines
    FORK_SERVERS.append(next(int(line.split("PARENT ")[1].split()[0]) for line in result.outlines if "PARENT " in line))
    assert len(set(FORK_SERVERS)) == 1, FORK_SERVERS
