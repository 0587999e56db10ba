package main

import (
	"fmt"
	"math"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/shippingservice/genproto"
)

// Shipping tariff, in USD. The frontend and checkoutservice convert the quote into the
// shopper's currency; the quote itself is always USD.
const (
	baseShippingCost = 4.99  // one parcel, first unit
	perUnitCost      = 0.50  // every further unit in the same parcel
	maxShippingCost  = 24.99 // large orders cost no more than this
	maxUnitsPerOrder = 1000  // beyond this the order is refused, not quoted
	nanosPerCent     = 10000000
)

// Quote is a shipping cost in dollars and cents.
type Quote struct {
	Dollars uint32
	Cents   uint32
}

// String renders the quote, e.g. "$8.99".
func (q Quote) String() string {
	return fmt.Sprintf("$%d.%02d", q.Dollars, q.Cents)
}

// Money converts the quote into a USD hipstershop.Money.
func (q Quote) Money() *pb.Money {
	return &pb.Money{
		CurrencyCode: "USD",
		Units:        int64(q.Dollars),
		Nanos:        int32(q.Cents * nanosPerCent),
	}
}

// unitCount is the number of units across all cart lines.
func unitCount(items []*pb.CartItem) (int, error) {
	count := 0
	for _, item := range items {
		if item.GetQuantity() < 0 {
			return 0, fmt.Errorf("item %s has negative quantity %d", item.GetProductId(), item.GetQuantity())
		}
		count += int(item.GetQuantity())
	}
	if count > maxUnitsPerOrder {
		return 0, fmt.Errorf("order of %d units exceeds the limit of %d", count, maxUnitsPerOrder)
	}
	return count, nil
}

// CreateQuoteFromCount prices a parcel of count units. An empty cart ships for free.
func CreateQuoteFromCount(count int) Quote {
	return CreateQuoteFromFloat(quoteByCountFloat(count))
}

func quoteByCountFloat(count int) float64 {
	if count <= 0 {
		return 0
	}
	cost := baseShippingCost + perUnitCost*float64(count-1)
	return math.Min(cost, maxShippingCost)
}

// CreateQuoteFromFloat splits a dollar amount into dollars and cents, rounding to the
// nearest cent once so that 8.99 does not become 8.98 through float error.
func CreateQuoteFromFloat(value float64) Quote {
	totalCents := uint32(math.Round(value * 100))
	return Quote{
		Dollars: totalCents / 100,
		Cents:   totalCents % 100,
	}
}
