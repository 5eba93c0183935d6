"""The pytest face of the harness: options, fixtures and hooks (:mod:`.plugin`), the run's state and its end
(:mod:`._session`), outcomes carried on pytest's reports (:mod:`._outcomes`), xdist scheduling (:mod:`._xdist`),
the scrubbed console (:mod:`._console`) and the vendor's plugin (:mod:`.vendor`).
"""
