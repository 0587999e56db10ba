// Package money implements arithmetic on the Money message of demo.proto: an ISO 4217
// currency code, whole units and nanos (10^-9 units) that carry the same sign.
package money

import (
	"errors"
	"fmt"

	pb "github.com/open-telemetry/opentelemetry-demo/src/checkout/genproto/oteldemo"
)

const (
	nanosMin = -999999999
	nanosMax = +999999999
	nanosMod = 1000000000
)

var (
	ErrInvalidValue        = errors.New("one of the specified money values is invalid")
	ErrMismatchingCurrency = errors.New("mismatching currency codes")
)

// IsValid checks that nanos is in range and that units and nanos do not disagree in sign.
func IsValid(m *pb.Money) bool {
	return signMatches(m) && validNanos(m.GetNanos())
}

func signMatches(m *pb.Money) bool {
	return m.GetNanos() == 0 || m.GetUnits() == 0 || (m.GetNanos() < 0) == (m.GetUnits() < 0)
}

func validNanos(nanos int32) bool { return nanosMin <= nanos && nanos <= nanosMax }

// IsZero is true for an amount of exactly zero in any currency.
func IsZero(m *pb.Money) bool { return m.GetUnits() == 0 && m.GetNanos() == 0 }

// IsPositive is true for an amount strictly above zero.
func IsPositive(m *pb.Money) bool {
	return IsValid(m) && (m.GetUnits() > 0 || (m.GetUnits() == 0 && m.GetNanos() > 0))
}

// IsNegative is true for an amount strictly below zero.
func IsNegative(m *pb.Money) bool {
	return IsValid(m) && (m.GetUnits() < 0 || (m.GetUnits() == 0 && m.GetNanos() < 0))
}

// AreSameCurrency is true when both amounts carry the same non-empty currency code.
func AreSameCurrency(l, r *pb.Money) bool {
	return l.GetCurrencyCode() == r.GetCurrencyCode() && l.GetCurrencyCode() != ""
}

// AreEquals is true for the same currency and the same amount.
func AreEquals(l, r *pb.Money) bool {
	return l.GetCurrencyCode() == r.GetCurrencyCode() &&
		l.GetUnits() == r.GetUnits() && l.GetNanos() == r.GetNanos()
}

// Negate returns the same amount with the opposite sign.
func Negate(m *pb.Money) *pb.Money {
	return &pb.Money{
		Units:        -m.GetUnits(),
		Nanos:        -m.GetNanos(),
		CurrencyCode: m.GetCurrencyCode(),
	}
}

// Must panics when err is set; for sums of amounts already validated upstream.
func Must(v *pb.Money, err error) *pb.Money {
	if err != nil {
		panic(fmt.Sprintf("money arithmetic on validated values failed: %v", err))
	}
	return v
}

// Sum adds two amounts of the same currency, carrying nanos into units.
func Sum(l, r *pb.Money) (*pb.Money, error) {
	if !IsValid(l) || !IsValid(r) {
		return &pb.Money{}, ErrInvalidValue
	} else if l.GetCurrencyCode() != r.GetCurrencyCode() {
		return &pb.Money{}, ErrMismatchingCurrency
	}
	units := l.GetUnits() + r.GetUnits()
	nanos := l.GetNanos() + r.GetNanos()

	if (units == 0 && nanos == 0) || (units > 0 && nanos >= 0) || (units < 0 && nanos <= 0) {
		// Units and nanos agree in sign: carry whole units out of nanos.
		units += int64(nanos / nanosMod)
		nanos = nanos % nanosMod
	} else {
		// Signs disagree: borrow one unit so that nanos takes the sign of units. Both
		// operands had |nanos| < 1e9, so the result stays in range.
		if units > 0 {
			units--
			nanos += nanosMod
		} else {
			units++
			nanos -= nanosMod
		}
	}

	return &pb.Money{
		Units:        units,
		Nanos:        nanos,
		CurrencyCode: l.GetCurrencyCode(),
	}, nil
}

// MultiplySlow multiplies by repeated addition, which keeps nanos carrying exact.
func MultiplySlow(m *pb.Money, n uint32) *pb.Money {
	out := m
	for n > 1 {
		out = Must(Sum(out, m))
		n--
	}
	return out
}
