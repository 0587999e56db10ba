package main

import (
	"errors"
	"fmt"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/checkoutservice/genproto"
)

// Amounts are hipstershop.Money: units plus nanos (10^-9 units); nanos lies in
// [-999999999, 999999999] and never has the opposite sign of units.
const (
	nanosMin = -999999999
	nanosMax = +999999999
	nanosMod = 1000000000
)

var (
	ErrInvalidValue        = errors.New("one of the specified money values is invalid")
	ErrMismatchingCurrency = errors.New("mismatching currency codes")
)

// IsValid checks the sign agreement and range of nanos.
func IsValid(m pb.Money) bool {
	return signMatches(m) && validNanos(m.GetNanos())
}

func signMatches(m pb.Money) bool {
	return m.GetNanos() == 0 || m.GetUnits() == 0 || (m.GetNanos() < 0) == (m.GetUnits() < 0)
}

func validNanos(nanos int32) bool { return nanosMin <= nanos && nanos <= nanosMax }

// IsZero reports whether the amount is zero.
func IsZero(m pb.Money) bool { return m.GetUnits() == 0 && m.GetNanos() == 0 }

// IsPositive reports whether the amount is valid and greater than zero.
func IsPositive(m pb.Money) bool {
	return IsValid(m) && (m.GetUnits() > 0 || (m.GetUnits() == 0 && m.GetNanos() > 0))
}

// IsNegative reports whether the amount is valid and less than zero.
func IsNegative(m pb.Money) bool {
	return IsValid(m) && (m.GetUnits() < 0 || (m.GetUnits() == 0 && m.GetNanos() < 0))
}

// AreSameCurrency reports whether both amounts carry the same non-empty currency code.
func AreSameCurrency(l, r pb.Money) bool {
	return l.GetCurrencyCode() == r.GetCurrencyCode() && l.GetCurrencyCode() != ""
}

// Sum adds two amounts of one currency, normalising the nanos carry.
func Sum(l, r pb.Money) (pb.Money, error) {
	if !IsValid(l) || !IsValid(r) {
		return pb.Money{}, ErrInvalidValue
	}
	if !AreSameCurrency(l, r) {
		return pb.Money{}, fmt.Errorf("%w: %q and %q", ErrMismatchingCurrency, l.GetCurrencyCode(), r.GetCurrencyCode())
	}
	units := l.GetUnits() + r.GetUnits()
	nanos := int64(l.GetNanos()) + int64(r.GetNanos())

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

// Must panics on err; for sums of amounts already validated.
func Must(v pb.Money, err error) pb.Money {
	if err != nil {
		panic(err)
	}
	return v
}

// MultiplySlow returns m times n by repeated addition (n >= 1); cart quantities are small.
func MultiplySlow(m pb.Money, n uint32) pb.Money {
	out := m
	for n > 1 {
		out = Must(Sum(out, m))
		n--
	}
	return out
}

// Negate returns the amount with the opposite sign.
func Negate(m pb.Money) pb.Money {
	return pb.Money{
		Units:        -m.GetUnits(),
		Nanos:        -m.GetNanos(),
		CurrencyCode: m.GetCurrencyCode(),
	}
}
