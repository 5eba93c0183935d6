"""CPU of one reference IdP (node-oidc-provider) from its start until it answers its health URL, with a key of its
own (made at start, as ``conformance up`` does) and with a key given by the stack (``running_stack(idp_signing_key=
...)``, as the mutant matrix gives every case's IdP one key made once per session).

    .venv/bin/python benchmarks/idp_start.py [--runs N]

The two kinds alternate; the IdP's CPU is read from /proc (Linux only) once it is healthy and idle. Prints each
kind's median and the difference, which the matrix saves once per tool-server case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from conformance.reference.stack import running_stack

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def idp_start_cpu(key_file: Path | None) -> float:
    with running_stack(services=["idp"], idp_signing_key=key_file) as stack:
        time.sleep(0.3)  # the health poll's connection closes; the IdP is idle
        return process_cpu(next(p.pid for p in stack.processes if p.spec.name == "idp"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as directory:
        key_file = Path(directory) / "idp-key.pem"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_file.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        own: list[float] = []
        given: list[float] = []
        idp_start_cpu(None)  # the first start fills Node's compile cache if it is empty
        for _ in range(runs):
            own.append(idp_start_cpu(None))
            given.append(idp_start_cpu(key_file))
    own_s, given_s = statistics.median(own), statistics.median(given)
    print(f"IdP start CPU, key of its own: median {own_s:.3f} s {[round(x, 2) for x in own]}")
    print(f"IdP start CPU, key given:      median {given_s:.3f} s {[round(x, 2) for x in given]}")
    print(f"saved per IdP start: {own_s - given_s:.3f} s")


if __name__ == "__main__":
    main()
