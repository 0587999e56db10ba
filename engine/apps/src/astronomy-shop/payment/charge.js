// Charges a credit card (mock): validates the card and the amount, then returns a
// transaction id. No money moves anywhere.

const crypto = require('crypto');
const { context, propagation, trace, metrics } = require('@opentelemetry/api');
const { OpenFeature } = require('@openfeature/server-sdk');
const logger = require('pino')({ name: 'payment-charge', messageKey: 'message', formatters: { level: label => ({ severity: label }) } });

const tracer = trace.getTracer('payment');
const meter = metrics.getMeter('payment');
const transactionsCounter = meter.createCounter('app.payment.transactions');

// Card networks the shop accepts.
const ACCEPTED_CARD_TYPES = ['visa', 'mastercard'];
const LOYALTY_LEVELS = ['platinum', 'gold', 'silver', 'bronze'];
const NANOS_PER_UNIT = 1e9;

class CreditCardError extends Error {
  constructor(message) {
    super(message);
    this.code = 400; // Invalid argument error
  }
}

class InvalidCreditCard extends CreditCardError {
  constructor() {
    super('Credit card info is invalid.');
  }
}

class UnacceptedCreditCard extends CreditCardError {
  constructor(cardType) {
    super(`Sorry, we cannot process ${cardType} credit cards. Only VISA or MasterCard is accepted.`);
  }
}

class ExpiredCreditCard extends CreditCardError {
  constructor(number, month, year) {
    super(`The credit card (ending ${number.slice(-4)}) expired on ${month}/${year}.`);
  }
}

// Luhn checksum over the digits of the card number.
function luhnValid(number) {
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let digit = number.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) {
      return false;
    }
    if (double) {
      digit *= 2;
      if (digit > 9) {
        digit -= 9;
      }
    }
    sum += digit;
    double = !double;
  }
  return number.length >= 12 && sum % 10 === 0;
}

function cardType(number) {
  if (/^4\d{12}(\d{3})?(\d{3})?$/.test(number)) return 'visa';
  if (/^(5[1-5]\d{14}|2(2[2-9]\d|[3-6]\d\d|7[01]\d|720)\d{12})$/.test(number)) return 'mastercard';
  if (/^3[47]\d{13}$/.test(number)) return 'amex';
  return 'unknown';
}

function validateAmount(amount) {
  const units = Number(amount?.units ?? 0);
  const nanos = Number(amount?.nanos ?? 0);
  if (!amount || !/^[A-Z]{3}$/.test(amount.currencyCode || '')) {
    throw new CreditCardError('amount must carry an ISO 4217 currency code');
  }
  if (Math.abs(nanos) >= NANOS_PER_UNIT || (units > 0 && nanos < 0) || (units < 0 && nanos > 0)) {
    throw new CreditCardError(`invalid amount ${units} units ${nanos} nanos`);
  }
  if (units < 0 || (units === 0 && nanos <= 0)) {
    throw new CreditCardError('amount must be positive');
  }
  return { units, nanos };
}

// paymentFailure is the share of charges to fail (0, 0.1, ..., 1). An evaluation error
// falls back to 0.
async function failureRate() {
  try {
    return await OpenFeature.getClient().getNumberValue('paymentFailure', 0);
  } catch (err) {
    logger.warn({ err }, 'paymentFailure evaluation failed, using 0');
    return 0;
  }
}

module.exports.charge = async function charge(request) {
  const span = tracer.startSpan('charge');
  try {
    const rate = await failureRate();
    if (rate > 0 && Math.random() < rate) {
      span.setAttributes({ 'app.loyalty.level': 'gold' });
      throw new Error('Payment request failed. Invalid token. app.loyalty.level=gold');
    }

    const { creditCardNumber: rawNumber, creditCardExpirationYear: year, creditCardExpirationMonth: month } =
      request.creditCard || {};
    const number = String(rawNumber || '').replace(/[\s-]/g, '');
    const currentMonth = new Date().getMonth() + 1;
    const currentYear = new Date().getFullYear();

    if (!luhnValid(number)) {
      throw new InvalidCreditCard();
    }
    const type = cardType(number);
    if (!ACCEPTED_CARD_TYPES.includes(type)) {
      throw new UnacceptedCreditCard(type);
    }
    if (currentYear * 12 + currentMonth > year * 12 + month) {
      throw new ExpiredCreditCard(number, month, year);
    }
    const { units, nanos } = validateAmount(request.amount);

    // Synthetic requests from the load generator carry baggage synthetic_request=true.
    const baggage = propagation.getBaggage(context.active());
    const synthetic = baggage?.getEntry('synthetic_request')?.value === 'true';
    const loyalty = LOYALTY_LEVELS[Math.floor(Math.random() * LOYALTY_LEVELS.length)];

    span.setAttributes({
      'app.payment.card_type': type,
      'app.payment.card_valid': true,
      'app.loyalty.level': loyalty,
      'app.payment.charged': !synthetic,
    });

    const transactionId = crypto.randomUUID();
    const { currencyCode } = request.amount;
    logger.info(
      { transactionId, cardType: type, lastFourDigits: number.slice(-4), amount: { units, nanos, currencyCode }, loyalty },
      'Transaction complete.'
    );
    transactionsCounter.add(1, { 'app.payment.currency': currencyCode });
    return { transactionId };
  } catch (err) {
    span.recordException(err);
    throw err;
  } finally {
    span.end();
  }
};

module.exports.luhnValid = luhnValid;
module.exports.cardType = cardType;
