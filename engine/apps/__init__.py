"""Shipped application models (``*.yaml``) and the initial source tree of each service
(``src/<app>/<service>/``). Data, not code: see ``FORMAT.md``."""
