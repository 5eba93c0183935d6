"""Options of the profile suite (the vendor prefix of the profile marker is the auth suite's ``vendor_prefix``)."""

from __future__ import annotations

from conformance.config import OptionSpec

OPTIONS: list[OptionSpec] = [
    OptionSpec(
        "reference_admin_url",
        "base URL of the reference tool server's admin hooks (PROF-13: blank a stored profile id)",
    ),
    OptionSpec("reference_admin_key", "key of the reference admin hooks", secret=True),
]
