// Clients for every backend the frontend talks to.
//
// gRPC services are dialled once per process from the *_ADDR env vars the Deployment sets
// (AD_ADDR=ad:8080, CART_ADDR=cart:8080, ...). Shipping is plain HTTP: SHIPPING_ADDR already
// carries the scheme (http://shipping:8080).

import { ChannelCredentials, credentials, Metadata, ServiceError } from '@grpc/grpc-js';
import {
  AdResponse,
  AdServiceClient,
  Cart,
  CartItem,
  CartServiceClient,
  CheckoutServiceClient,
  CurrencyServiceClient,
  GetSupportedCurrenciesResponse,
  ListProductsResponse,
  ListRecommendationsResponse,
  Money,
  PlaceOrderRequest,
  PlaceOrderResponse,
  Product,
  ProductCatalogServiceClient,
  RecommendationServiceClient,
  Address,
} from '../protos/demo';

// Deadlines per call, milliseconds. PlaceOrder fans out to seven services, so it gets the
// longest budget; everything else is a single hop.
const DEFAULT_DEADLINE_MS = 10_000;
const PLACE_ORDER_DEADLINE_MS = 15_000;
const SHIPPING_TIMEOUT_MS = 5_000;

const insecure: ChannelCredentials = credentials.createInsecure();

function requireAddr(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; the frontend cannot reach its backend`);
  }
  return value;
}

const adClient = new AdServiceClient(requireAddr('AD_ADDR'), insecure);
const cartClient = new CartServiceClient(requireAddr('CART_ADDR'), insecure);
const checkoutClient = new CheckoutServiceClient(requireAddr('CHECKOUT_ADDR'), insecure);
const currencyClient = new CurrencyServiceClient(requireAddr('CURRENCY_ADDR'), insecure);
const productCatalogClient = new ProductCatalogServiceClient(requireAddr('PRODUCT_CATALOG_ADDR'), insecure);
const recommendationClient = new RecommendationServiceClient(requireAddr('RECOMMENDATION_ADDR'), insecure);
const shippingAddr = requireAddr('SHIPPING_ADDR');

function deadline(ms: number): Date {
  return new Date(Date.now() + ms);
}

// Wraps a unary gRPC call in a promise with a deadline.
function unary<Req, Res>(
  call: (req: Req, md: Metadata, opts: { deadline: Date }, cb: (err: ServiceError | null, res: Res) => void) => unknown,
  req: Req,
  ms: number = DEFAULT_DEADLINE_MS
): Promise<Res> {
  return new Promise((resolve, reject) =>
    call(req, new Metadata(), { deadline: deadline(ms) }, (error, response) => (error ? reject(error) : resolve(response)))
  );
}

export const AdGateway = {
  listAds(contextKeys: string[]): Promise<AdResponse> {
    return unary(adClient.getAds.bind(adClient), { contextKeys });
  },
};

export const CartGateway = {
  getCart(userId: string): Promise<Cart> {
    return unary(cartClient.getCart.bind(cartClient), { userId });
  },
  addItem(userId: string, item: CartItem): Promise<void> {
    return unary(cartClient.addItem.bind(cartClient), { userId, item }).then(() => undefined);
  },
  emptyCart(userId: string): Promise<void> {
    return unary(cartClient.emptyCart.bind(cartClient), { userId }).then(() => undefined);
  },
};

export const CheckoutGateway = {
  placeOrder(order: PlaceOrderRequest): Promise<PlaceOrderResponse> {
    return unary(checkoutClient.placeOrder.bind(checkoutClient), order, PLACE_ORDER_DEADLINE_MS);
  },
};

export const CurrencyGateway = {
  convert(from: Money, toCode: string): Promise<Money> {
    return unary(currencyClient.convert.bind(currencyClient), { from, toCode });
  },
  getSupportedCurrencies(): Promise<GetSupportedCurrenciesResponse> {
    return unary(currencyClient.getSupportedCurrencies.bind(currencyClient), {});
  },
};

export const ProductCatalogGateway = {
  listProducts(): Promise<ListProductsResponse> {
    return unary(productCatalogClient.listProducts.bind(productCatalogClient), {});
  },
  getProduct(id: string): Promise<Product> {
    return unary(productCatalogClient.getProduct.bind(productCatalogClient), { id });
  },
};

export const RecommendationsGateway = {
  listRecommendations(userId: string, productIds: string[]): Promise<ListRecommendationsResponse> {
    return unary(recommendationClient.listRecommendations.bind(recommendationClient), { userId, productIds });
  },
};

export const ShippingGateway = {
  // POST {SHIPPING_ADDR}/get-quote with the cart lines and the destination address.
  async getShippingCost(items: CartItem[], address: Address): Promise<{ costUsd: Money }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), SHIPPING_TIMEOUT_MS);
    try {
      const response = await fetch(`${shippingAddr}/get-quote`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ items, address }),
        signal: controller.signal,
      });
      if (!response.ok) {
        throw new Error(`shipping quote failed: HTTP ${response.status}`);
      }
      const body = (await response.json()) as { cost_usd: Money };
      return { costUsd: body.cost_usd };
    } finally {
      clearTimeout(timer);
    }
  },
};
