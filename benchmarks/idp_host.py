"""The IdP's CPU per stack: a Node process per stack (``running_stack``'s default, what ``conformance up`` does) vs a
fresh Provider instance in one warm Node process (``conformance.reference.idp.host``, what the mutant matrix
does). Each stack's IdP is started, serves FLOWS scripted authorization-code flows (register, log in, consent,
exchange) and is stopped; the IdP's CPU is read from /proc (Linux only): the process's total, or the host's growth
over the stack's life.

    .venv/bin/python benchmarks/idp_host.py [--runs N] [--flows FLOWS]

The two kinds alternate; prints each kind's median and the difference (what the matrix saves per tool-server case
on the IdP side, before what a harness run asks of the IdP beyond these flows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from conformance.reference.idp.host import IdpHost
from conformance.reference.idp.scripted import ScriptedClient, pkce_pair
from conformance.reference.stack import Stack, make_certificates, popen_service, running_stack

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def serve_flows(stack: Stack, flows: int) -> None:
    issuer = next(s for s in stack.services if s.name == "idp").health_url.rsplit("/", 1)[0]
    for _ in range(flows):
        client = ScriptedClient(issuer, str(stack.ca_file))
        try:
            client.register()
            verifier, challenge = pkce_pair()
            code = client.authorize(
                login=stack.settings["CONFORMANCE_TEST_USER"],
                password=stack.settings["CONFORMANCE_TEST_PASSWORD"],
                resource=None,
                scope="openid email profile",
                challenge=challenge,
            ).params["code"]
            client.exchange(code, verifier, None)
        finally:
            client.close()


def own_process(key_file: Path, flows: int) -> float:
    with running_stack(services=["idp"], idp_signing_key=key_file) as stack:
        serve_flows(stack, flows)
        return process_cpu(stack.processes[0].pid)


def hosted(host: IdpHost, certificates: tuple[Path, Path, Path], key_file: Path, flows: int) -> float:
    before = process_cpu(host.pid)
    with running_stack(
        services=["idp"], idp_signing_key=key_file, certificates=certificates, launcher=host.launcher(popen_service)
    ) as stack:
        serve_flows(stack, flows)
    return process_cpu(host.pid) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--flows", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        key_file = root / "idp-key.pem"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_file.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        certificates = make_certificates(root)
        host = IdpHost(certificates[0], root / "host.log")
        try:
            own_process(key_file, 1)  # Node's compile cache filled, if it was empty
            hosted(host, certificates, key_file, args.flows)  # the host's first instance (its cold JIT) not counted
            own: list[float] = []
            shared: list[float] = []
            for _ in range(args.runs):
                own.append(own_process(key_file, args.flows))
                shared.append(hosted(host, certificates, key_file, args.flows))
        finally:
            host.close()
    own_s, shared_s = statistics.median(own), statistics.median(shared)
    what = f"IdP CPU per stack, {args.flows} flows"
    print(f"{what}, own process: median {own_s:.3f} s {[round(x, 2) for x in own]}")
    print(f"{what}, hosted:      median {shared_s:.3f} s {[round(x, 2) for x in shared]}")
    print(f"saved per stack: {own_s - shared_s:.3f} s")


if __name__ == "__main__":
    main()
