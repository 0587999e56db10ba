package order.entity;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;

/**
 * Order status codes, shared with every service that reads orders (cancel, execute,
 * inside-payment, rebook, security, voucher), and the moves allowed between them.
 */
public enum OrderStatus {
    NOTPAID(0, "Not Paid"),
    PAID(1, "Paid & Not Collected"),
    COLLECTED(2, "Collected"),
    CHANGE(3, "Cancel & Rebook"),
    CANCEL(4, "Cancel"),
    REFUNDS(5, "Refunded"),
    USED(6, "Used");

    private static final Map<OrderStatus, EnumSet<OrderStatus>> TRANSITIONS = new EnumMap<>(OrderStatus.class);

    static {
        TRANSITIONS.put(NOTPAID, EnumSet.of(PAID, CANCEL));
        TRANSITIONS.put(PAID, EnumSet.of(COLLECTED, CHANGE, CANCEL));
        TRANSITIONS.put(COLLECTED, EnumSet.of(USED));
        TRANSITIONS.put(CHANGE, EnumSet.of(COLLECTED, CANCEL));
        TRANSITIONS.put(CANCEL, EnumSet.of(REFUNDS));
        TRANSITIONS.put(REFUNDS, EnumSet.noneOf(OrderStatus.class));
        TRANSITIONS.put(USED, EnumSet.noneOf(OrderStatus.class));
    }

    private final int code;
    private final String name;

    OrderStatus(int code, String name) {
        this.code = code;
        this.name = name;
    }

    public int getCode() {
        return code;
    }

    public String getName() {
        return name;
    }

    /** True when an order in this status may be moved to {@code next}. */
    public boolean canMoveTo(OrderStatus next) {
        return TRANSITIONS.get(this).contains(next);
    }

    /** The status with this code, or null for an unknown code. */
    public static OrderStatus of(int code) {
        for (OrderStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }
}
