/*
 * Card checks and the (mock) charge. No payment network is called: a card that passes
 * the checks is charged and gets a fresh transaction id.
 */
'use strict';

const { v4: uuidv4 } = require('uuid');
const pino = require('pino');

const logger = pino({
  name: 'paymentservice-charge',
  messageKey: 'message',
  formatters: {
    level (logLevelString) {
      return { severity: logLevelString };
    }
  }
});

// Only these networks are accepted; amex, diners, discover and the rest are refused.
const ACCEPTED_CARD_TYPES = ['visa', 'mastercard'];

// Issuer prefixes (IIN ranges) and valid lengths per network.
const CARD_TYPES = [
  { type: 'visa', pattern: /^4/, lengths: [13, 16, 19] },
  { type: 'mastercard', pattern: /^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] },
  { type: 'amex', pattern: /^3[47]/, lengths: [15] },
  { type: 'dinersclub', pattern: /^3(0[0-5]|[689])/, lengths: [14, 16] },
  { type: 'discover', pattern: /^(6011|65|64[4-9])/, lengths: [16, 19] },
  { type: 'jcb', pattern: /^35(2[89]|[3-8]\d)/, lengths: [16, 19] }
];

class CreditCardError extends Error {
  constructor (message) {
    super(message);
    this.code = 400; // Invalid argument error
  }
}

class InvalidCreditCard extends CreditCardError {
  constructor () {
    super('Credit card info is invalid');
  }
}

class UnacceptedCreditCard extends CreditCardError {
  constructor (cardType) {
    super(`Sorry, we cannot process ${cardType} credit cards. Only VISA or MasterCard is accepted.`);
  }
}

class ExpiredCreditCard extends CreditCardError {
  constructor (number, month, year) {
    super(`Your credit card (ending ${number.substr(-4)}) expired on ${month}/${year}`);
  }
}

class InvalidAmount extends CreditCardError {
  constructor (amount) {
    super(`Invalid charge amount ${amount.currency_code} ${amount.units}.${amount.nanos}`);
  }
}

/** Luhn (mod 10) checksum over the digits of a card number. */
function luhnValid (digits) {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) {
        d -= 9;
      }
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Network of a card number from its prefix and length, or 'unknown'. */
function cardTypeOf (digits) {
  const match = CARD_TYPES.find(c => c.pattern.test(digits) && c.lengths.includes(digits.length));
  return match ? match.type : 'unknown';
}

/** True when the card's last valid month is before the current month. */
function isExpired (month, year, now = new Date()) {
  const currentMonth = now.getMonth() + 1;
  const currentYear = now.getFullYear();
  return (currentYear * 12 + currentMonth) > (year * 12 + month);
}

/**
 * Verifies the card and "charges" it.
 *
 * @param {{amount: object, credit_card: object}} request a hipstershop.ChargeRequest
 * @returns {{transaction_id: string}}
 * @throws {CreditCardError} invalid, unaccepted or expired card, or a bad amount
 */
module.exports = function charge (request) {
  const { amount, credit_card: creditCard } = request;
  if (!amount || Number(amount.units) < 0 || Number(amount.nanos) < 0 ||
      (Number(amount.units) === 0 && Number(amount.nanos) === 0)) {
    throw new InvalidAmount(amount || { currency_code: '', units: 0, nanos: 0 });
  }

  const cardNumber = String(creditCard.credit_card_number || '');
  const digits = cardNumber.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits) || !luhnValid(digits)) {
    throw new InvalidCreditCard();
  }

  const cardType = cardTypeOf(digits);
  if (!ACCEPTED_CARD_TYPES.includes(cardType)) {
    throw new UnacceptedCreditCard(cardType);
  }

  const cvv = Number(creditCard.credit_card_cvv);
  if (!Number.isInteger(cvv) || cvv < 100 || cvv > 9999) {
    throw new InvalidCreditCard();
  }

  const {
    credit_card_expiration_year: year,
    credit_card_expiration_month: month
  } = creditCard;
  if (!(month >= 1 && month <= 12)) {
    throw new InvalidCreditCard();
  }
  if (isExpired(month, year)) {
    throw new ExpiredCreditCard(digits, month, year);
  }

  logger.info(`Transaction processed: ${cardType} ending ${digits.substr(-4)} ` +
    `Amount: ${amount.currency_code}${amount.units}.${amount.nanos}`);

  return { transaction_id: uuidv4() };
};

module.exports.luhnValid = luhnValid;
module.exports.cardTypeOf = cardTypeOf;
module.exports.isExpired = isExpired;
module.exports.CreditCardError = CreditCardError;
