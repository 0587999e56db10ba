// The home page. The server renders the shell (header, banner, an empty product grid and
// the ad slot); the browser then fills the grid from /api/products and the ad from
// /api/data, so rendering "/" makes no backend call.

import type { GetServerSideProps, NextPage } from 'next';
import Head from 'next/head';
import { useEffect, useState } from 'react';
import type { Ad, Product } from '../protos/demo';
import { formatMoney } from '../services/ProductCatalog.service';

interface HomeProps {
  platform: string;
  renderedAt: string;
}

// Categories the banner ad rotates through, as the load generator's get_ads task does.
const AD_CONTEXT_KEYS = ['telescopes', 'binoculars', 'accessories', 'assembly', 'travel', 'books'];
const SESSION_KEY = 'session';
const CURRENCY_KEY = 'currencyCode';

function sessionQuery(): string {
  const session = window.localStorage.getItem(SESSION_KEY) ?? '';
  const currency = window.localStorage.getItem(CURRENCY_KEY) ?? 'USD';
  return `sessionId=${encodeURIComponent(session)}&currencyCode=${encodeURIComponent(currency)}`;
}

function ProductGrid({ products }: { products: Product[] }) {
  if (products.length === 0) {
    return <p className="grid-empty">Loading the catalog...</p>;
  }
  return (
    <ul className="product-grid">
      {products.map(product => (
        <li key={product.id} className="product-card">
          <a href={`/product/${product.id}`}>
            <img src={`/images/products/${product.picture}`} alt={product.name} loading="lazy" />
            <span className="product-name">{product.name}</span>
            <span className="product-price">{formatMoney(product.priceUsd!)}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}

const Home: NextPage<HomeProps> = ({ platform, renderedAt }) => {
  const [products, setProducts] = useState<Product[]>([]);
  const [ad, setAd] = useState<Ad | null>(null);

  useEffect(() => {
    const query = sessionQuery();
    fetch(`/api/products?${query}`)
      .then(r => (r.ok ? r.json() : []))
      .then(setProducts)
      .catch(() => setProducts([]));
    const key = AD_CONTEXT_KEYS[Math.floor(Math.random() * AD_CONTEXT_KEYS.length)];
    fetch(`/api/data?contextKeys=${key}`)
      .then(r => (r.ok ? r.json() : []))
      .then((ads: Ad[]) => setAd(ads[0] ?? null))
      .catch(() => setAd(null));
  }, []);

  return (
    <>
      <Head>
        <title>OTel demo - Astronomy Shop</title>
      </Head>
      <header className="banner">
        <h1>The best telescopes to see the world closer</h1>
        <a href="#hot-products">Go shopping</a>
      </header>
      <main id="hot-products">
        <ProductGrid products={products} />
        {ad && (
          <aside className="ad">
            <a href={ad.redirectUrl}>{ad.text}</a>
          </aside>
        )}
      </main>
      <footer data-platform={platform} data-rendered-at={renderedAt}>
        This website is hosted for demo purpose only.
      </footer>
    </>
  );
};

// GET / on the server: only environment data, no RPC, so the page renders even when every
// backend is down (the grid then shows its loading state).
export const renderHomePage: GetServerSideProps<HomeProps> = async ({ res }) => {
  res.setHeader('Cache-Control', 'no-store');
  return {
    props: {
      platform: process.env.ENV_PLATFORM ?? 'local',
      renderedAt: new Date().toISOString(),
    },
  };
};

export const getServerSideProps = renderHomePage;

export default Home;
