"""The tool server: external agent harnesses operate a marathon (DESIGN section 7).

``marathon serve --app A --seed N --regime R`` runs the engine with an
:class:`~engine.serve.hub.ExternalOperator` and exposes the operator tools -- through the
same tool box and policy layer as every built-in operator -- over MCP
(:mod:`engine.serve.mcp_server`: stdio or streamable HTTP) and a plain HTTP JSON API
(:mod:`engine.serve.http_api`), on loopback with a bearer token. The agent is invoked by
the engine's cadence: it long-polls for the next invocation, calls tools, and ends the
invocation; the engine waits on its clock meanwhile, and ends an invocation the agent
does not finish within the timeout. :mod:`engine.serve.cli` holds the command.
"""

from __future__ import annotations
