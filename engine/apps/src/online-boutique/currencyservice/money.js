/*
 * Money arithmetic for hipstershop.Money: an amount is whole `units` plus `nanos`
 * (10^-9 units), nanos within +-999,999,999 and of the same sign as units.
 */
'use strict';

const NANOS_PER_UNIT = 1e9;
const NANOS_MAX = 999999999;
const CURRENCY_CODE = /^[A-Z]{3}$/;

class MoneyError extends Error {
  constructor (message) {
    super(message);
    this.name = 'MoneyError';
  }
}

/**
 * Moves the fractional part of `units` into `nanos` and whole units out of `nanos`.
 * Division by a rate leaves fractions in both fields; this puts them back in range.
 */
function carry (amount) {
  const fractionSize = NANOS_PER_UNIT;
  amount.nanos += (amount.units % 1) * fractionSize;
  amount.units = Math.floor(amount.units) + Math.floor(amount.nanos / fractionSize);
  amount.nanos = amount.nanos % fractionSize;
  return amount;
}

/** Throws MoneyError unless `m` is a well-formed, non-negative amount. */
function validate (m, field) {
  if (!m) {
    throw new MoneyError(`${field} is required`);
  }
  if (!CURRENCY_CODE.test(m.currency_code || '')) {
    throw new MoneyError(`${field}.currency_code "${m.currency_code}" is not an ISO 4217 code`);
  }
  const units = Number(m.units);
  const nanos = Number(m.nanos);
  if (!Number.isSafeInteger(units) || !Number.isInteger(nanos)) {
    throw new MoneyError(`${field} must have integer units and nanos`);
  }
  if (Math.abs(nanos) > NANOS_MAX) {
    throw new MoneyError(`${field}.nanos ${nanos} out of range`);
  }
  if (units < 0 || nanos < 0) {
    throw new MoneyError(`${field} must not be negative`);
  }
}

/**
 * Parses the rate table once: code -> rate against EUR as a Number. A rate that does not
 * parse to a positive number is a broken data file, not a request error.
 */
function parseRates (raw) {
  const rates = {};
  for (const [code, value] of Object.entries(raw)) {
    const rate = parseFloat(value);
    if (!CURRENCY_CODE.test(code) || !(rate > 0)) {
      throw new MoneyError(`bad conversion rate for ${code}: ${value}`);
    }
    rates[code] = rate;
  }
  if (rates.EUR !== 1) {
    throw new MoneyError('conversion table must be based on EUR = 1.0');
  }
  return rates;
}

/**
 * Converts `from` into `toCode` through EUR: from -> EUR by dividing by the source rate,
 * EUR -> target by multiplying by the target rate. Nanos are rounded at the EUR step and
 * truncated at the end, so a conversion never rounds a price up.
 */
function convertVia (rates, from, toCode) {
  const fromRate = rates[from.currency_code];
  const toRate = rates[toCode];
  if (fromRate === undefined) {
    throw new MoneyError(`unsupported currency ${from.currency_code}`);
  }
  if (toRate === undefined) {
    throw new MoneyError(`unsupported currency ${toCode}`);
  }

  const euros = carry({
    units: Number(from.units) / fromRate,
    nanos: Number(from.nanos) / fromRate
  });
  euros.nanos = Math.round(euros.nanos);

  const result = carry({
    units: euros.units * toRate,
    nanos: euros.nanos * toRate
  });
  result.units = Math.floor(result.units);
  result.nanos = Math.floor(result.nanos);
  result.currency_code = toCode;
  return result;
}

module.exports = { carry, validate, parseRates, convertVia, MoneyError, NANOS_PER_UNIT };
