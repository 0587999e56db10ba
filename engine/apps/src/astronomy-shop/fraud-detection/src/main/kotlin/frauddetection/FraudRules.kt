/*
 * Rule-based fraud scoring of a placed order. Each rule adds points; an order at or above
 * SUSPICIOUS_SCORE is flagged. Amounts are compared in the order's own currency after
 * conversion to USD with the same reference rates the currency service uses for the most
 * common shop currencies.
 */
package frauddetection

import oteldemo.Demo.Money
import oteldemo.Demo.OrderResult
import java.math.BigDecimal
import java.math.RoundingMode

data class Verdict(val score: Int, val reasons: List<String>) {
    val suspicious: Boolean get() = score >= FraudRules.SUSPICIOUS_SCORE
}

class FraudRules(
    private val highValueUsd: BigDecimal = BigDecimal("1000"),
    private val veryHighValueUsd: BigDecimal = BigDecimal("5000"),
    private val maxQuantityPerLine: Int = 10,
    private val maxLines: Int = 8,
) {
    companion object {
        const val SUSPICIOUS_SCORE = 50
        private val NANOS_PER_UNIT = BigDecimal(1_000_000_000)

        // Units of each currency per 1 USD (derived from the EUR reference rates).
        private val PER_USD = mapOf(
            "USD" to BigDecimal("1.0"),
            "EUR" to BigDecimal("0.8846"),
            "GBP" to BigDecimal("0.7605"),
            "CHF" to BigDecimal("1.0049"),
            "CAD" to BigDecimal("1.3382"),
            "JPY" to BigDecimal("111.81"),
        )
        // Destinations the shop's carrier mock serves without extra checks.
        private val DOMESTIC_COUNTRIES = setOf("United States", "USA", "US")
    }

    fun score(order: OrderResult): Verdict {
        val reasons = mutableListOf<String>()
        var score = 0

        val totalUsd = totalInUsd(order)
        if (totalUsd == null) {
            score += 30
            reasons += "unknown currency ${order.shippingCost.currencyCode}"
        } else if (totalUsd >= veryHighValueUsd) {
            score += 60
            reasons += "very high value ${totalUsd.setScale(2, RoundingMode.HALF_UP)} USD"
        } else if (totalUsd >= highValueUsd) {
            score += 25
            reasons += "high value ${totalUsd.setScale(2, RoundingMode.HALF_UP)} USD"
        }

        if (order.itemsCount > maxLines) {
            score += 20
            reasons += "${order.itemsCount} distinct products"
        }
        order.itemsList.filter { it.item.quantity > maxQuantityPerLine }.forEach {
            score += 30
            reasons += "quantity ${it.item.quantity} of ${it.item.productId}"
        }

        val address = order.shippingAddress
        if (address.zipCode.isBlank() || address.streetAddress.isBlank()) {
            score += 40
            reasons += "incomplete shipping address"
        } else if (address.country !in DOMESTIC_COUNTRIES) {
            score += 10
            reasons += "international shipment to ${address.country}"
        }

        if (order.shippingTrackingId.isBlank()) {
            score += 15
            reasons += "no tracking id"
        }
        return Verdict(score, reasons)
    }

    // Sum of line costs times quantities plus shipping, in USD; null for an unknown currency.
    fun totalInUsd(order: OrderResult): BigDecimal? {
        var total = toDecimal(order.shippingCost)
        for (line in order.itemsList) {
            total += toDecimal(line.cost).multiply(BigDecimal(line.item.quantity))
        }
        val code = order.shippingCost.currencyCode.ifBlank { "USD" }
        val rate = PER_USD[code] ?: return null
        return total.divide(rate, 6, RoundingMode.HALF_UP)
    }

    private fun toDecimal(money: Money): BigDecimal =
        BigDecimal(money.units).add(BigDecimal(money.nanos).divide(NANOS_PER_UNIT))
}
