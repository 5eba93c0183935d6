"""The bundled check suites, one package per suite; collected by the plugin when no test paths are given."""
