"""The system Chromium (Debian's `chromium` package), driven by Playwright without `playwright install`.

The machines that run the harness may have no network: Playwright's own browser download is not an option, and
Chromium must be told not to call home (the flags below), or it stalls and logs errors trying to reach Google.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

ENV_VAR = "CONFORMANCE_CHROMIUM"  # an explicit executable wins over the search
CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium")
PATH_NAMES = ("chromium", "chromium-browser")
# Debian's package; fonts-liberation is a Recommends, named so screenshots render text the same everywhere.
APT_PACKAGES = ("chromium", "fonts-liberation", "fonts-dejavu-core")

# Headless without sandbox (containers run as root), and nothing that reaches the network on its own.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--metrics-recording-only",
)


def find_chromium() -> str | None:
    """The path of a usable Chromium executable, or None."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    for name in PATH_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def ensure_chromium(*, install: bool = False) -> str | None:
    """Find Chromium; with `install=True`, as root on Debian/Ubuntu, install it with apt first.

    Tests never install (they skip, or fail in CI); the project's set-up calls this with install=True.
    """
    found = find_chromium()
    if found or not install:
        return found
    if not shutil.which("apt-get") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", *APT_PACKAGES], check=True, env=env, stdout=subprocess.DEVNULL)
    return find_chromium()


def launch_chromium(playwright: Playwright, executable: str | None = None, **kwargs: Any) -> Browser:
    """Launch the system Chromium headless, with a fresh temporary profile (Playwright's default for launch())."""
    path = executable or find_chromium()
    if path is None:
        raise FileNotFoundError(f"no Chromium found (install Debian's `chromium` package or set {ENV_VAR})")
    return playwright.chromium.launch(executable_path=path, headless=True, args=list(CHROMIUM_ARGS), **kwargs)
