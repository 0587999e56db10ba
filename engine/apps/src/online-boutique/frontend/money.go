package main

import (
	"errors"
	"fmt"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/frontend/genproto"
)

// Money amounts follow google.type.Money as carried in demo.proto: whole units plus
// nanos (10^-9 units), with nanos in (-1e9, 1e9) and the same sign as units.
const (
	nanosMin = -999999999
	nanosMax = +999999999
	nanosMod = 1000000000
)

var (
	ErrInvalidValue        = errors.New("one of the specified money values is invalid")
	ErrMismatchingCurrency = errors.New("mismatching currency codes")
)

// IsValid checks that the amount's units and nanos agree in sign and nanos is in range.
func IsValid(m pb.Money) bool {
	return signMatches(m) && validNanos(m.GetNanos())
}

func signMatches(m pb.Money) bool {
	return m.GetNanos() == 0 || m.GetUnits() == 0 || (m.GetNanos() < 0) == (m.GetUnits() < 0)
}

func validNanos(nanos int32) bool { return nanosMin <= nanos && nanos <= nanosMax }

// IsZero reports whether the amount is zero.
func IsZero(m pb.Money) bool { return m.GetUnits() == 0 && m.GetNanos() == 0 }

// IsPositive reports whether the amount is greater than zero.
func IsPositive(m pb.Money) bool {
	return IsValid(m) && (m.GetUnits() > 0 || (m.GetUnits() == 0 && m.GetNanos() > 0))
}

// IsNegative reports whether the amount is less than zero.
func IsNegative(m pb.Money) bool {
	return IsValid(m) && (m.GetUnits() < 0 || (m.GetUnits() == 0 && m.GetNanos() < 0))
}

// AreSameCurrency reports whether both amounts carry the same non-empty currency code.
func AreSameCurrency(l, r pb.Money) bool {
	return l.GetCurrencyCode() == r.GetCurrencyCode() && l.GetCurrencyCode() != ""
}

// AreEquals reports whether the amounts are equal in value and currency.
func AreEquals(l, r pb.Money) bool {
	return l.GetCurrencyCode() == r.GetCurrencyCode() &&
		l.GetUnits() == r.GetUnits() && l.GetNanos() == r.GetNanos()
}

// Negate returns the amount with the opposite sign.
func Negate(m pb.Money) pb.Money {
	return pb.Money{
		Units:        -m.GetUnits(),
		Nanos:        -m.GetNanos(),
		CurrencyCode: m.GetCurrencyCode(),
	}
}

// Must panics when err is set; for sums of amounts already validated by the caller.
func Must(v pb.Money, err error) pb.Money {
	if err != nil {
		panic(err)
	}
	return v
}

// Sum adds two amounts of the same currency, carrying nanos into units. An empty
// currency code on the left (a fresh accumulator) takes the right's code.
func Sum(l, r pb.Money) (pb.Money, error) {
	if !IsValid(l) || !IsValid(r) {
		return pb.Money{}, ErrInvalidValue
	}
	if l.GetCurrencyCode() == "" && IsZero(l) {
		l.CurrencyCode = r.GetCurrencyCode()
	}
	if l.GetCurrencyCode() != r.GetCurrencyCode() {
		return pb.Money{}, fmt.Errorf("%w: %s and %s", ErrMismatchingCurrency, l.GetCurrencyCode(), r.GetCurrencyCode())
	}
	units := l.GetUnits() + r.GetUnits()
	nanos := int64(l.GetNanos()) + int64(r.GetNanos())
	// carry whole units out of nanos, then give nanos the sign of units
	units += nanos / nanosMod
	nanos = nanos % nanosMod
	if units > 0 && nanos < 0 {
		units--
		nanos += nanosMod
	} else if units < 0 && nanos > 0 {
		units++
		nanos -= nanosMod
	}
	return pb.Money{
		Units:        units,
		Nanos:        int32(nanos),
		CurrencyCode: l.GetCurrencyCode(),
	}, nil
}

// MultiplySlow multiplies an amount by n by repeated addition, which keeps the nanos
// carry exact for the small quantities a cart line holds.
func MultiplySlow(m pb.Money, n uint32) pb.Money {
	out := m
	for n > 1 {
		out = Must(Sum(out, m))
		n--
	}
	return out
}

// renderMoney formats an amount for the templates, e.g. "EUR 17.68".
func renderMoney(m pb.Money) string {
	return fmt.Sprintf("%s %d.%02d", m.GetCurrencyCode(), m.GetUnits(), m.GetNanos()/10000000)
}
