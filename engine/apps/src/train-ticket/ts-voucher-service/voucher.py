"""Voucher rules: which orders get a voucher and how a voucher row reads."""

from decimal import ROUND_HALF_UP, Decimal

# Order status codes (ts-order-service): vouchers are printed for tickets that were
# paid for and not given back.
PAID = 1
COLLECTED = 2
CHANGE = 3
USED = 6
PRINTABLE_STATUSES = {PAID, COLLECTED, CHANGE, USED}

SEAT_CLASS_NAMES = {
    1: "Business Seat",
    2: "First Class Seat",
    3: "Second Class Seat",
    4: "Hard Seat",
    5: "Soft Seat",
    6: "Hard Berth",
    7: "Soft Berth",
}


class VoucherError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def validate_order(order):
    """Refuse orders that were never paid, or were cancelled or refunded."""
    status = order.get("status")
    if status not in PRINTABLE_STATUSES:
        raise VoucherError(409, "order status %s has no voucher" % status)
    price = Decimal(str(order.get("price", "0")))
    if price <= 0:
        raise VoucherError(409, "order has no price")
    return order


def voucher_params(order):
    """Columns of the voucher row, in INSERT order."""
    price = Decimal(str(order["price"])).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (
        order["id"],
        str(order["travelDate"])[:10],
        str(order["travelTime"]),
        order["contactsName"],
        order["trainNumber"],
        int(order["seatClass"]),
        str(order["seatNumber"]),
        order["from"],
        order["to"],
        price,
    )


def row_to_voucher(row):
    """A `SELECT *` row as the JSON the UI prints."""
    return {
        "voucher_id": row[0],
        "order_id": row[1],
        "travelDate": row[2],
        "travelTime": row[3],
        "contactName": row[4],
        "train_number": row[5],
        "seat_class": SEAT_CLASS_NAMES.get(row[6], "Seat"),
        "seat_number": row[7],
        "start_station": row[8],
        "dest_station": row[9],
        "price": str(row[10]),
    }
