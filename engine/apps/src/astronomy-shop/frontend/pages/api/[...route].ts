// The frontend's JSON API, one Next.js catch-all route dispatching to a handler per
// endpoint. The browser and the load generator reach it through frontend-proxy.
//
//   GET  /api/products            listProductsHandler
//   GET  /api/products/{id}       getProductHandler
//   GET  /api/recommendations     recommendationsHandler
//   GET  /api/data                adsHandler
//   GET  /api/cart                getCartHandler
//   POST /api/cart                addToCartHandler
//   POST /api/checkout            checkoutHandler
//   GET  /api/currency            currencyHandler
//   GET  /api/shipping            shippingHandler

import type { NextApiRequest, NextApiResponse } from 'next';
import type { ServiceError } from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  AdGateway,
  CartGateway,
  CheckoutGateway,
  CurrencyGateway,
  RecommendationsGateway,
  ShippingGateway,
} from '../../gateways/rpc';
import ProductCatalogService, { normalizeCurrencyCode, validateCartItem } from '../../services/ProductCatalog.service';
import type { AddItemRequest, Address, CartItem, PlaceOrderRequest } from '../../protos/demo';

type Handler = (req: NextApiRequest, res: NextApiResponse) => Promise<void>;

// The product page shows at most four recommendations.
const MAX_RECOMMENDATIONS_SHOWN = 4;

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter(v => v !== '');
}

function httpStatusFor(error: unknown): number {
  const code = (error as ServiceError)?.code;
  if (code === GrpcStatus.NOT_FOUND) return 404;
  if (code === GrpcStatus.INVALID_ARGUMENT) return 400;
  if (code === GrpcStatus.DEADLINE_EXCEEDED) return 504;
  return 500;
}

function fail(res: NextApiResponse, error: unknown, fallback: string): void {
  const message = (error as ServiceError)?.details || (error as Error)?.message || fallback;
  res.status(httpStatusFor(error)).json({ error: message });
}

export async function listProductsHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode);
  const products = await ProductCatalogService.listProducts(currencyCode);
  res.status(200).json(products);
}

export async function getProductHandler(req: NextApiRequest, res: NextApiResponse, productId: string): Promise<void> {
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode);
  try {
    const product = await ProductCatalogService.getProduct(productId, currencyCode);
    res.status(200).json(product);
  } catch (error) {
    fail(res, error, `Failed to load product ${productId}`);
  }
}

export async function recommendationsHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const productIds = asList(req.query.productIds);
  const sessionId = typeof req.query.sessionId === 'string' ? req.query.sessionId : '';
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode);
  try {
    const { productIds: recommended } = await RecommendationsGateway.listRecommendations(sessionId, productIds);
    const shown = recommended.filter(id => !productIds.includes(id)).slice(0, MAX_RECOMMENDATIONS_SHOWN);
    const products = await Promise.all(shown.map(id => ProductCatalogService.getProduct(id, currencyCode)));
    res.status(200).json(products);
  } catch (error) {
    fail(res, error, 'Failed to load recommendations');
  }
}

export async function adsHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const contextKeys = asList(req.query.contextKeys);
  try {
    const { ads } = await AdGateway.listAds(contextKeys);
    res.status(200).json(ads);
  } catch (error) {
    fail(res, error, 'Failed to load ads');
  }
}

export async function getCartHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const sessionId = typeof req.query.sessionId === 'string' ? req.query.sessionId : '';
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode);
  try {
    const { userId, items } = await CartGateway.getCart(sessionId);
    const lines = await Promise.all(
      items.map(async ({ productId, quantity }) => ({
        productId,
        quantity,
        product: await ProductCatalogService.getProduct(productId, currencyCode),
      }))
    );
    const subtotal = ProductCatalogService.cartSubtotal(lines, currencyCode);
    res.status(200).json({ userId, items: lines, subtotal });
  } catch (error) {
    fail(res, error, 'Failed to load cart');
  }
}

export async function addToCartHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const { userId, item } = req.body as AddItemRequest;
  const problem = validateCartItem(item);
  if (problem !== null || !userId) {
    res.status(400).json({ error: problem ?? 'missing userId' });
    return;
  }
  try {
    await CartGateway.addItem(userId, item as CartItem);
    const cart = await CartGateway.getCart(userId);
    res.status(200).json(cart);
  } catch (error) {
    fail(res, error, 'Failed to add item to cart');
  }
}

export async function checkoutHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode);
  const orderRequest = req.body as PlaceOrderRequest;
  if (!orderRequest?.userId || !orderRequest.email || !orderRequest.creditCard) {
    res.status(400).json({ error: 'userId, email and creditCard are required' });
    return;
  }
  try {
    const { order } = await CheckoutGateway.placeOrder({
      ...orderRequest,
      userCurrency: orderRequest.userCurrency || currencyCode || 'USD',
    });
    const { items = [], ...summary } = order ?? {};
    const lines = await Promise.all(
      items.map(async ({ item, cost }) => ({
        cost,
        item: {
          productId: item?.productId ?? '',
          quantity: item?.quantity ?? 0,
          product: await ProductCatalogService.getProduct(item?.productId ?? '', currencyCode),
        },
      }))
    );
    res.status(200).json({ ...summary, items: lines });
  } catch (error) {
    fail(res, error, 'Failed to place order.');
  }
}

export async function currencyHandler(_req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const { currencyCodes } = await CurrencyGateway.getSupportedCurrencies();
  res.status(200).json([...currencyCodes].sort());
}

export async function shippingHandler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const currencyCode = normalizeCurrencyCode(req.query.currencyCode) || 'USD';
  let items: CartItem[];
  let address: Address;
  try {
    items = JSON.parse(String(req.query.itemList ?? '[]')) as CartItem[];
    address = JSON.parse(String(req.query.address ?? '{}')) as Address;
  } catch {
    res.status(400).json({ error: 'itemList and address must be JSON' });
    return;
  }
  try {
    const { costUsd } = await ShippingGateway.getShippingCost(items, address);
    const cost = await CurrencyGateway.convert(costUsd, currencyCode);
    res.status(200).json(cost);
  } catch (error) {
    fail(res, error, 'Failed to quote shipping');
  }
}

const routes: Record<string, Handler> = {
  'GET products': listProductsHandler,
  'GET recommendations': recommendationsHandler,
  'GET data': adsHandler,
  'GET cart': getCartHandler,
  'POST cart': addToCartHandler,
  'POST checkout': checkoutHandler,
  'GET currency': currencyHandler,
  'GET shipping': shippingHandler,
};

export default async function apiRouter(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const segments = asList(req.query.route);
  const method = req.method ?? 'GET';
  if (method === 'GET' && segments.length === 2 && segments[0] === 'products') {
    return getProductHandler(req, res, segments[1]);
  }
  const handler = segments.length === 1 ? routes[`${method} ${segments[0]}`] : undefined;
  if (!handler) {
    res.status(segments.length === 1 && Object.keys(routes).some(k => k.endsWith(` ${segments[0]}`)) ? 405 : 404).end();
    return;
  }
  try {
    await handler(req, res);
  } catch (error) {
    fail(res, error, 'Internal Server Error');
  }
}
