"""The kubelet prober's failure messages, as its HTTP, TCP and gRPC probers write them.

Each function returns the ``output`` string the prober hands to the kubelet, which writes
it after ``Readiness probe failed: `` / ``Liveness probe failed: `` in the ``Unhealthy``
event. Sources (kubernetes/kubernetes):

* ``pkg/probe/http/http.go``: a transport error is returned as ``err.Error()`` of Go's
  ``net/http`` client (``Get "URL": dial tcp IP:PORT: connect: connection refused``; the
  client's timeout adds ``context deadline exceeded (Client.Timeout exceeded while awaiting
  headers)``); a status outside 200-399 is ``HTTP probe failed with statuscode: N``.
* ``pkg/probe/tcp/tcp.go``: ``err.Error()`` of ``net.DialTimeout`` (``dial tcp IP:PORT:
  connect: connection refused``, or ``i/o timeout``).
* ``pkg/probe/grpc/grpc.go``: a blocking dial that does not connect within the timeout is
  ``timeout: failed to connect service "IP:PORT" within 1s: context deadline exceeded``; a
  health answer other than SERVING is ``service unhealthy (responded with "NOT_SERVING")``;
  a health RPC that does not answer in time is ``timeout: health rpc did not complete
  within 1s``.
"""

from __future__ import annotations

from engine.apps.model import Probe


def _duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for whole and fractional seconds (``1s``, ``1.5s``)."""
    return f"{seconds:g}s" if seconds >= 1 else f"{seconds * 1000:g}ms"


def refused(probe: Probe, ip: str, port: int) -> str:
    """Nothing listens on ``ip:port`` (the process has not bound it yet, or binds another)."""
    if probe.type == "http":
        return f'Get "http://{ip}:{port}{probe.path or "/"}": dial tcp {ip}:{port}: connect: connection refused'
    if probe.type == "grpc":
        # grpc.WithBlock() keeps redialling a refused port until the probe's deadline.
        return (f'timeout: failed to connect service "{ip}:{port}" within {_duration(probe.timeout_s)}: '
                "context deadline exceeded")
    return f"dial tcp {ip}:{port}: connect: connection refused"


def hung(probe: Probe, ip: str, port: int) -> str:
    """The process accepts the connection but does not answer within the probe's timeout."""
    if probe.type == "http":
        return (f'Get "http://{ip}:{port}{probe.path or "/"}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)")
    if probe.type == "grpc":
        return f"timeout: health rpc did not complete within {_duration(probe.timeout_s)}"
    if probe.type == "tcp":
        return f"dial tcp {ip}:{port}: i/o timeout"
    return f"command timed out after {_duration(probe.timeout_s)}"


def unhealthy(probe: Probe, status: int = 503) -> str:
    """The process answers and reports itself unhealthy (HTTP ``status``, or NOT_SERVING)."""
    if probe.type == "grpc":
        return 'service unhealthy (responded with "NOT_SERVING")'
    if probe.type == "http":
        return f"HTTP probe failed with statuscode: {status}"
    return "command terminated with exit code 1"
