"""emailservice: hipstershop.EmailService over gRPC.

SendOrderConfirmation renders templates/confirmation.html for the order. The demo build
has no mail provider configured, so the rendered mail is logged instead of sent
(DummyEmailService); checkoutservice treats a failure here as a warning only.
"""

import json
import logging
import os
import re
import sys
import time
from concurrent import futures

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from jinja2 import Environment, FileSystemLoader, TemplateError, select_autoescape

import demo_pb2
import demo_pb2_grpc


class JSONFormatter(logging.Formatter):
    """One JSON object per line, with the field names Cloud Logging reads."""

    def format(self, record):
        return json.dumps(
            {
                "timestamp": self.formatTime(record),
                "severity": record.levelname,
                "name": record.name,
                "message": record.getMessage(),
            }
        )


def get_json_logger(name):
    log = logging.getLogger(name)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JSONFormatter())
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return log


logger = get_json_logger("emailservice-server")

DEFAULT_PORT = "8080"
TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
TEMPLATE_NAME = "confirmation.html"
SENDER = "no-reply@onlineboutique.example"
SUBJECT = "Your Confirmation Email"

# Addresses are checked loosely: one @, a dot in the domain, no spaces.
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# A rendered mail larger than this points at a broken template or order.
MAX_BODY_BYTES = 256 * 1024

env = Environment(
    loader=FileSystemLoader(TEMPLATE_DIR),
    autoescape=select_autoescape(["html", "xml"]),
)


def format_money(money):
    """Renders a hipstershop.Money as e.g. 'EUR 17.68' (nanos truncated to cents)."""
    cents = abs(money.nanos) // 10_000_000
    sign = "-" if money.units < 0 or money.nanos < 0 else ""
    return f"{money.currency_code} {sign}{abs(money.units)}.{cents:02d}"


env.filters["money"] = format_money
template = env.get_template(TEMPLATE_NAME)


class DummyEmailService(demo_pb2_grpc.EmailServiceServicer):
    """Renders the confirmation and logs it; nothing leaves the pod."""

    def SendOrderConfirmation(self, request, context):
        email = request.email.strip()
        order = request.order
        if not EMAIL_RE.match(email):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"invalid email address {email!r}")
        if not order.order_id:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "order has no order_id")

        try:
            body = render_confirmation(order)
        except TemplateError as err:
            logger.error(f"failed to render confirmation for order {order.order_id}: {err}")
            context.abort(grpc.StatusCode.INTERNAL, "An error occurred when preparing the confirmation mail.")
        if len(body.encode("utf-8")) > MAX_BODY_BYTES:
            context.abort(grpc.StatusCode.INTERNAL, f"confirmation mail too large ({len(body)} characters)")

        logger.info(
            f"A request to send order confirmation email to {email} has been received "
            f"(order {order.order_id}, {len(order.items)} items, {len(body)} characters)."
        )
        return demo_pb2.Empty()


def render_confirmation(order):
    """Renders the confirmation HTML for a hipstershop.OrderResult."""
    lines = []
    for item in order.items:
        lines.append(
            {
                "product_id": item.item.product_id,
                "quantity": item.item.quantity,
                "cost": item.cost,
            }
        )
    return template.render(
        subject=SUBJECT,
        sender=SENDER,
        order=order,
        lines=lines,
        address=order.shipping_address,
    )


class HealthCheck(health_pb2_grpc.HealthServicer):
    """grpc.health.v1 for the kubelet's gRPC probes; SERVING once the template loaded."""

    def Check(self, request, context):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)

    def Watch(self, request, context):
        context.set_code(grpc.StatusCode.UNIMPLEMENTED)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.UNIMPLEMENTED)


def start(dummy_mode):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=10))
    if not dummy_mode:
        raise NotImplementedError("only dummy mode is available: no mail provider is configured")
    service = DummyEmailService()

    demo_pb2_grpc.add_EmailServiceServicer_to_server(service, server)
    health_pb2_grpc.add_HealthServicer_to_server(HealthCheck(), server)

    port = os.environ.get("PORT", DEFAULT_PORT)
    logger.info(f"listening on port: {port}")
    server.add_insecure_port(f"[::]:{port}")
    server.start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop(0)


if __name__ == "__main__":
    logger.info("starting the email service in dummy mode.")
    if os.environ.get("DISABLE_PROFILER"):
        logger.info("Profiler disabled.")
    try:
        start(dummy_mode=True)
    except Exception as err:  # start-up failures must reach the pod log before exit
        logger.error(f"email service failed to start: {err}")
        sys.exit(1)
