package main

import (
	"context"
	"time"

	"github.com/pkg/errors"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/frontend/genproto"
)

const (
	// adTimeout keeps a slow adservice from holding up page renders; ads are optional.
	adTimeout = 100 * time.Millisecond
	// recommendationsFetched is how many recommended ids are resolved to products
	// before the page trims them to recommendationsShown.
	recommendationsFetched = 5
)

func (fe *frontendServer) getCurrencies(ctx context.Context) ([]string, error) {
	currs, err := pb.NewCurrencyServiceClient(fe.currencySvcConn).
		GetSupportedCurrencies(ctx, &pb.Empty{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range currs.GetCurrencyCodes() {
		if whitelistedCurrencies[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

func (fe *frontendServer) getProducts(ctx context.Context) ([]*pb.Product, error) {
	resp, err := pb.NewProductCatalogServiceClient(fe.productCatalogSvcConn).
		ListProducts(ctx, &pb.Empty{})
	return resp.GetProducts(), err
}

func (fe *frontendServer) getProduct(ctx context.Context, id string) (*pb.Product, error) {
	resp, err := pb.NewProductCatalogServiceClient(fe.productCatalogSvcConn).
		GetProduct(ctx, &pb.GetProductRequest{Id: id})
	return resp, err
}

func (fe *frontendServer) getCart(ctx context.Context, userID string) ([]*pb.CartItem, error) {
	resp, err := pb.NewCartServiceClient(fe.cartSvcConn).GetCart(ctx, &pb.GetCartRequest{UserId: userID})
	return resp.GetItems(), err
}

func (fe *frontendServer) emptyCart(ctx context.Context, userID string) error {
	_, err := pb.NewCartServiceClient(fe.cartSvcConn).EmptyCart(ctx, &pb.EmptyCartRequest{UserId: userID})
	return err
}

func (fe *frontendServer) insertCart(ctx context.Context, userID, productID string, quantity int32) error {
	_, err := pb.NewCartServiceClient(fe.cartSvcConn).AddItem(ctx, &pb.AddItemRequest{
		UserId: userID,
		Item: &pb.CartItem{
			ProductId: productID,
			Quantity:  quantity,
		},
	})
	return err
}

// convertCurrency converts money to currency. Every price goes through the
// currencyservice, even USD to USD, so that rounding is the same for all currencies.
func (fe *frontendServer) convertCurrency(ctx context.Context, money *pb.Money, currency string) (*pb.Money, error) {
	if !IsValid(*money) {
		return nil, errors.Errorf("invalid money amount %d.%09d %s", money.GetUnits(), money.GetNanos(), money.GetCurrencyCode())
	}
	return pb.NewCurrencyServiceClient(fe.currencySvcConn).
		Convert(ctx, &pb.CurrencyConversionRequest{
			From:   money,
			ToCode: currency,
		})
}

// getShippingQuote asks for the USD cost of shipping the cart and converts it.
func (fe *frontendServer) getShippingQuote(ctx context.Context, items []*pb.CartItem, currency string) (*pb.Money, error) {
	quote, err := pb.NewShippingServiceClient(fe.shippingSvcConn).GetQuote(ctx,
		&pb.GetQuoteRequest{
			Address: nil,
			Items:   items,
		})
	if err != nil {
		return nil, err
	}
	localized, err := fe.convertCurrency(ctx, quote.GetCostUsd(), currency)
	return localized, errors.Wrap(err, "failed to convert currency for shipping cost")
}

// getRecommendations resolves the recommended ids to products; any failure to resolve
// one fails the whole list.
func (fe *frontendServer) getRecommendations(ctx context.Context, userID string, productIDs []string) ([]*pb.Product, error) {
	resp, err := pb.NewRecommendationServiceClient(fe.recommendationSvcConn).ListRecommendations(ctx,
		&pb.ListRecommendationsRequest{UserId: userID, ProductIds: productIDs})
	if err != nil {
		return nil, err
	}
	ids := resp.GetProductIds()
	if len(ids) > recommendationsFetched {
		ids = ids[:recommendationsFetched]
	}
	out := make([]*pb.Product, len(ids))
	for i, v := range ids {
		p, err := fe.getProduct(ctx, v)
		if err != nil {
			return nil, errors.Wrapf(err, "failed to get recommended product info (#%s)", v)
		}
		out[i] = p
	}
	if len(out) > recommendationsShown {
		out = out[:recommendationsShown]
	}
	return out, nil
}

func (fe *frontendServer) getAd(ctx context.Context, ctxKeys []string) ([]*pb.Ad, error) {
	ctx, cancel := context.WithTimeout(ctx, adTimeout)
	defer cancel()
	resp, err := pb.NewAdServiceClient(fe.adSvcConn).GetAds(ctx, &pb.AdRequest{
		ContextKeys: ctxKeys,
	})
	return resp.GetAds(), errors.Wrap(err, "failed to get ads")
}

// placeOrder runs the checkout; the returned order carries the localized prices.
func (fe *frontendServer) placeOrder(ctx context.Context, req *pb.PlaceOrderRequest) (*pb.OrderResult, error) {
	if req.GetEmail() == "" || req.GetCreditCard().GetCreditCardNumber() == "" {
		return nil, errors.New("email and credit card number are required")
	}
	resp, err := pb.NewCheckoutServiceClient(fe.checkoutSvcConn).PlaceOrder(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.GetOrder(), nil
}
