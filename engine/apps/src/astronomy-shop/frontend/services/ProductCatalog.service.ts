// Product lookups with prices in the shopper's currency, and the money arithmetic the
// API routes share.
//
// Money follows demo.proto: whole `units` plus `nanos` (10^-9 units), both carrying the same
// sign, |nanos| < 1e9.

import { CartItem, Money, Product } from '../protos/demo';
import { CurrencyGateway, ProductCatalogGateway } from '../gateways/rpc';

export const DEFAULT_CURRENCY_CODE = 'USD';
const NANOS_PER_UNIT = 1_000_000_000;

// The cart page offers 1-10 of an item; the load generator adds 1, 2, 3, 4, 5 or 10.
export const MIN_ITEM_QUANTITY = 1;
export const MAX_ITEM_QUANTITY = 10;
const PRODUCT_ID_PATTERN = /^[A-Z0-9]{10}$/;
const CURRENCY_CODE_PATTERN = /^[A-Z]{3}$/;

export function isValidMoney(money: Money): boolean {
  const units = Number(money.units);
  const nanos = money.nanos;
  if (!Number.isInteger(nanos) || Math.abs(nanos) >= NANOS_PER_UNIT) {
    return false;
  }
  return (units >= 0 && nanos >= 0) || (units <= 0 && nanos <= 0);
}

export function sumMoney(a: Money, b: Money): Money {
  if (a.currencyCode !== b.currencyCode) {
    throw new Error(`cannot add ${a.currencyCode} to ${b.currencyCode}`);
  }
  let units = Number(a.units) + Number(b.units);
  let nanos = a.nanos + b.nanos;
  // Carry so that nanos stays within one unit and agrees in sign with units.
  if ((units === 0 && nanos === 0) || (units > 0 && nanos >= 0) || (units < 0 && nanos <= 0)) {
    units += Math.trunc(nanos / NANOS_PER_UNIT);
    nanos %= NANOS_PER_UNIT;
  } else if (units > 0) {
    units -= 1;
    nanos += NANOS_PER_UNIT;
  } else {
    units += 1;
    nanos -= NANOS_PER_UNIT;
  }
  return { currencyCode: a.currencyCode, units, nanos };
}

export function multiplyMoney(money: Money, quantity: number): Money {
  let total: Money = { currencyCode: money.currencyCode, units: 0, nanos: 0 };
  for (let i = 0; i < quantity; i++) {
    total = sumMoney(total, money);
  }
  return total;
}

export function formatMoney(money: Money): string {
  const cents = Math.round(money.nanos / 10_000_000);
  return `${money.currencyCode} ${Number(money.units)}.${String(Math.abs(cents)).padStart(2, '0')}`;
}

export function normalizeCurrencyCode(raw: unknown): string {
  const code = typeof raw === 'string' ? raw.trim().toUpperCase() : '';
  return CURRENCY_CODE_PATTERN.test(code) ? code : '';
}

// Rejects a cart line before it reaches the cart service.
export function validateCartItem(item: CartItem | undefined): string | null {
  if (!item) {
    return 'missing item';
  }
  if (!PRODUCT_ID_PATTERN.test(item.productId)) {
    return `invalid product id ${JSON.stringify(item.productId)}`;
  }
  if (!Number.isInteger(item.quantity) || item.quantity < MIN_ITEM_QUANTITY || item.quantity > MAX_ITEM_QUANTITY) {
    return `quantity must be between ${MIN_ITEM_QUANTITY} and ${MAX_ITEM_QUANTITY}`;
  }
  return null;
}

const ProductCatalogService = {
  // Converts only when the shopper chose another currency; USD prices pass through, which
  // is why most product lookups never reach the currency service.
  async getProductPrice(price: Money, currencyCode: string): Promise<Money> {
    if (!currencyCode || currencyCode === DEFAULT_CURRENCY_CODE) {
      return price;
    }
    const converted = await CurrencyGateway.convert(price, currencyCode);
    if (!isValidMoney(converted)) {
      throw new Error(`currency service returned an invalid amount for ${currencyCode}`);
    }
    return converted;
  },

  async listProducts(currencyCode: string): Promise<Product[]> {
    const { products } = await ProductCatalogGateway.listProducts();
    return Promise.all(
      products.map(async product => ({
        ...product,
        priceUsd: await this.getProductPrice(product.priceUsd!, currencyCode),
      }))
    );
  },

  async getProduct(id: string, currencyCode: string): Promise<Product> {
    const product = await ProductCatalogGateway.getProduct(id);
    return {
      ...product,
      priceUsd: await this.getProductPrice(product.priceUsd!, currencyCode),
    };
  },

  // Subtotal of a cart in the display currency, for the cart page footer.
  cartSubtotal(lines: { quantity: number; product: Product }[], currencyCode: string): Money {
    const code = currencyCode || DEFAULT_CURRENCY_CODE;
    return lines.reduce<Money>(
      (total, line) => sumMoney(total, multiplyMoney(line.product.priceUsd!, line.quantity)),
      { currencyCode: code, units: 0, nanos: 0 }
    );
  },
};

export default ProductCatalogService;
