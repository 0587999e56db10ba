"""ts-voucher-service: reimbursement vouchers for train tickets (Tornado + MySQL).

POST /getVoucher {"orderId": "<uuid>", "type": 0|1}. type 1 is a high-speed (G/D)
order kept by ts-order-service, type 0 an ordinary-train order kept by
ts-order-other-service. The first request for an order copies the order into the
`voucher` table; later requests read the stored row, so a voucher never changes once
printed.
"""

import json
import logging
import os
import urllib.error
import urllib.request

import pymysql
import tornado.ioloop
import tornado.web

from voucher import VoucherError, row_to_voucher, validate_order, voucher_params

LOG = logging.getLogger("ts-voucher-service")

ORDER_URL = "http://ts-order-service:12031/api/v1/orderservice/order/"
ORDER_OTHER_URL = "http://ts-order-other-service:12032/api/v1/orderOtherService/orderOther/"
ORDER_TIMEOUT_S = 5

mysql_config = {}


def init_mysql_config():
    """Connection settings; the environment overrides the in-cluster defaults."""
    global mysql_config
    mysql_config = {
        "host": os.getenv("VOUCHER_MYSQL_HOST", "ts-voucher-mysql"),
        "port": int(os.getenv("VOUCHER_MYSQL_PORT", "3306")),
        "user": os.getenv("VOUCHER_MYSQL_USER", "root"),
        "password": os.getenv("VOUCHER_MYSQL_PASSWORD", "root"),
        "db": os.getenv("VOUCHER_MYSQL_DATABASE", "voucher"),
        "charset": "utf8mb4",
        "connect_timeout": 5,
    }


def init_database():
    """Create the database and the voucher table if this is a fresh MySQL."""
    config = dict(mysql_config)
    db = config.pop("db")
    conn = pymysql.connect(**config)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS `%s`" % db)
            cur.execute("USE `%s`" % db)
            cur.execute(
                """CREATE TABLE IF NOT EXISTS voucher (
                    voucher_id INT NOT NULL AUTO_INCREMENT,
                    order_id VARCHAR(64) NOT NULL,
                    travelDate VARCHAR(32) NOT NULL,
                    travelTime VARCHAR(32) NOT NULL,
                    contactName VARCHAR(128) NOT NULL,
                    trainNumber VARCHAR(16) NOT NULL,
                    seatClass INT NOT NULL,
                    seatNumber VARCHAR(32) NOT NULL,
                    startStation VARCHAR(64) NOT NULL,
                    destStation VARCHAR(64) NOT NULL,
                    price DECIMAL(10, 2) NOT NULL,
                    PRIMARY KEY (voucher_id),
                    UNIQUE KEY uk_order (order_id))"""
            )
        conn.commit()
    finally:
        conn.close()


def fetch_voucher_by_order_id(order_id):
    conn = pymysql.connect(**mysql_config)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM voucher WHERE order_id = %s", (order_id,))
            row = cur.fetchone()
        return None if row is None else row_to_voucher(row)
    finally:
        conn.close()


def insert_voucher(order):
    conn = pymysql.connect(**mysql_config)
    try:
        with conn.cursor() as cur:
            # INSERT IGNORE: two concurrent first requests must not print two vouchers
            cur.execute(
                "INSERT IGNORE INTO voucher (order_id, travelDate, travelTime, contactName, trainNumber, "
                "seatClass, seatNumber, startStation, destStation, price) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                voucher_params(order),
            )
        conn.commit()
    finally:
        conn.close()


def query_order(order_id, order_type):
    """Fetch the order from the order service that owns it."""
    base = ORDER_URL if int(order_type) == 1 else ORDER_OTHER_URL
    req = urllib.request.Request(base + order_id, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=ORDER_TIMEOUT_S) as resp:
        body = json.loads(resp.read())
    if body.get("status") != 1 or not body.get("data"):
        raise VoucherError(404, "order %s not found" % order_id)
    return body["data"]


class GetVoucherHandler(tornado.web.RequestHandler):

    def post(self, *args, **kwargs):
        try:
            data = json.loads(self.request.body)
            order_id = data["orderId"]
            order_type = data.get("type", 1)
        except (ValueError, KeyError):
            self.set_status(400)
            self.write({"msg": "body must be JSON with orderId and type"})
            return
        try:
            voucher = fetch_voucher_by_order_id(order_id)
            if voucher is None:
                order = validate_order(query_order(order_id, order_type))
                insert_voucher(order)
                voucher = fetch_voucher_by_order_id(order_id)
        except VoucherError as exc:
            self.set_status(exc.status)
            self.write({"msg": exc.message})
            return
        except urllib.error.URLError as exc:
            LOG.error("order service unreachable for %s: %s", order_id, exc)
            self.set_status(502)
            self.write({"msg": "order service unavailable"})
            return
        self.write(voucher)


def make_app():
    return tornado.web.Application([
        (r"/getVoucher", GetVoucherHandler),
    ])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    init_mysql_config()
    init_database()
    app = make_app()
    app.listen(16101)
    tornado.ioloop.IOLoop.current().start()
