"""Static export of the host's CIMD documents and JWKS, for hosting them on a real HTTPS origin.

``export_cimd(directory, base_url, key)`` writes the public files under ``directory`` in the layout the URLs
expect (``oauth/client.json``, ``oauth/jwks.json``, and ``oauth/{callback_id}/client.json`` for each callback id
asked for). The private key is written separately (``private_key_path``, mode 0600) and never inside the public
directory: exporting refuses a private-key path under it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.core._exceptions import ConfigError
from conformance.host.identity import HostIdentity, HostKey


@dataclass
class ExportResult:
    directory: Path
    files: dict[str, Path] = field(default_factory=dict)  # URL → file written
    private_key: Path | None = None
    client_id: str = ""
    kid: str = ""


def _write_public(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.chmod(path, 0o644)


def export_cimd(
    directory: Path | str,
    base_url: str,
    key: HostKey | None = None,
    *,
    private_key_path: Path | str | None = None,
    callback_ids: list[str] | tuple[str, ...] = (),
    redirect_base: str | None = None,
) -> ExportResult:
    """Write the stable document, the JWKS and any callback-specific documents for ``base_url``.

    With no ``key`` a new one is generated and ``private_key_path`` is required (a key nobody keeps is useless).
    """
    root = Path(directory).resolve()
    if key is None and private_key_path is None:
        raise ConfigError("export_cimd: a generated key must be saved; give private_key_path (outside the directory)")
    host_key = key or HostKey.generate()
    if private_key_path is not None:
        target = Path(private_key_path).resolve()
        if target == root or root in target.parents:
            raise ConfigError(f"the private key {target} must not be written inside the public directory {root}")
    identity = HostIdentity(base_url=base_url, key=host_key, redirect_base=redirect_base)
    result = ExportResult(directory=root, client_id=identity.stable_document_url, kid=host_key.kid)
    root.mkdir(parents=True, exist_ok=True)
    outputs: list[tuple[str, dict[str, Any]]] = [
        (identity.stable_document_url, identity.client_document()),
        (identity.jwks_url, identity.jwks()),
    ]
    outputs += [(identity.callback_document_url(cid), identity.client_document(cid)) for cid in callback_ids]
    for url, document in outputs:
        relative = url[len(identity.base_url) :].lstrip("/")
        path = root / relative
        _write_public(path, document)
        result.files[url] = path
    if private_key_path is not None:
        result.private_key = host_key.save_private(private_key_path)
    return result


__all__ = ["ExportResult", "export_cimd"]
