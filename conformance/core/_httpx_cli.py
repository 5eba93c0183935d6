"""Imported by the pytest plugin before anything of the package imports httpx: httpx without its command-line
client (shortcut ``httpx-cli``, ``conformance.core._shortcuts.import_httpx``)."""

from conformance.core._shortcuts import import_httpx

import_httpx()
