// Checkout service: PlaceOrder turns a user's cart into a paid, shipped order, mails the
// confirmation and publishes the order to Kafka for accounting and fraud detection.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"
	flagd "github.com/open-feature/go-sdk-contrib/providers/flagd/pkg"
	"github.com/open-feature/go-sdk/openfeature"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/open-telemetry/opentelemetry-demo/src/checkout/genproto/oteldemo"
	"github.com/open-telemetry/opentelemetry-demo/src/checkout/kafka"
	"github.com/open-telemetry/opentelemetry-demo/src/checkout/money"
)

var log = logrus.New()

const (
	// paymentUnreachable makes checkout dial this address instead of PAYMENT_ADDR.
	badPaymentAddr = "badAddress:50051"
	httpTimeout    = 5 * time.Second
)

type checkout struct {
	pb.UnimplementedCheckoutServiceServer
	productCatalogSvcAddr string
	cartSvcAddr           string
	currencySvcAddr       string
	shippingSvcAddr       string // http://shipping:8080
	emailSvcAddr          string // http://email:8080
	paymentSvcAddr        string
	kafkaBrokerSvcAddr    string
	conns                 map[string]*grpc.ClientConn
	httpClient            *http.Client
	producer              *kafka.OrderProducer
	flags                 *openfeature.Client
}

func mustMapEnv(target *string, key string) {
	v := os.Getenv(key)
	if v == "" {
		log.Fatalf("environment variable %q not set", key)
	}
	*target = v
}

func (cs *checkout) conn(addr string) *grpc.ClientConn {
	if c, ok := cs.conns[addr]; ok {
		return c
	}
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("could not create client for %s: %v", addr, err)
	}
	cs.conns[addr] = c
	return c
}

// PlaceOrder charges the card for the cart plus shipping, ships it, empties the cart, then
// mails a confirmation and publishes the order. The last two are best effort: their
// failures are logged and the order still succeeds.
func (cs *checkout) PlaceOrder(ctx context.Context, req *pb.PlaceOrderRequest) (*pb.PlaceOrderResponse, error) {
	if err := validateOrderRequest(req); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	log.Infof("[PlaceOrder] user_id=%q user_currency=%q", req.UserId, req.UserCurrency)

	orderID := uuid.New()
	prep, err := cs.prepareOrderItemsAndShippingQuoteFromCart(ctx, req.UserId, req.UserCurrency, req.Address)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}

	total := &pb.Money{CurrencyCode: req.UserCurrency, Units: 0, Nanos: 0}
	total = money.Must(money.Sum(total, prep.shippingCostLocalized))
	for _, it := range prep.orderItems {
		lineTotal := money.MultiplySlow(it.Cost, uint32(it.GetItem().GetQuantity()))
		total = money.Must(money.Sum(total, lineTotal))
	}

	txID, err := cs.chargeCard(ctx, total, req.CreditCard)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "failed to charge card: %+v", err)
	}
	log.Infof("payment went through (transaction_id: %s)", txID)

	shippingTrackingID, err := cs.shipOrder(ctx, req.Address, prep.cartItems)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "shipping error: %+v", err)
	}

	if err := cs.emptyUserCart(ctx, req.UserId); err != nil {
		return nil, status.Errorf(codes.Internal, "failed to empty user cart during checkout: %+v", err)
	}

	orderResult := &pb.OrderResult{
		OrderId:            orderID.String(),
		ShippingTrackingId: shippingTrackingID,
		ShippingCost:       prep.shippingCostLocalized,
		ShippingAddress:    req.Address,
		Items:              prep.orderItems,
	}

	if err := cs.sendOrderConfirmation(ctx, req.Email, orderResult); err != nil {
		log.Warnf("failed to send order confirmation to %q: %+v", req.Email, err)
	} else {
		log.Infof("order confirmation email sent to %q", req.Email)
	}

	if cs.producer != nil {
		extra := cs.intFlag(ctx, kafka.QueueProblemsFlag)
		if err := cs.producer.Publish(ctx, orderResult, extra); err != nil {
			log.Errorf("failed to publish order %s to Kafka: %v", orderResult.OrderId, err)
		}
	}

	return &pb.PlaceOrderResponse{Order: orderResult}, nil
}

type orderPrep struct {
	orderItems            []*pb.OrderItem
	cartItems             []*pb.CartItem
	shippingCostLocalized *pb.Money
}

func (cs *checkout) prepareOrderItemsAndShippingQuoteFromCart(ctx context.Context, userID, userCurrency string, address *pb.Address) (orderPrep, error) {
	var out orderPrep
	cart, err := pb.NewCartServiceClient(cs.conn(cs.cartSvcAddr)).GetCart(ctx, &pb.GetCartRequest{UserId: userID})
	if err != nil {
		return out, fmt.Errorf("failed to get user cart during checkout: %+v", err)
	}
	if len(cart.GetItems()) == 0 {
		return out, fmt.Errorf("cart of user %q is empty", userID)
	}
	orderItems, err := cs.prepOrderItems(ctx, cart.GetItems(), userCurrency)
	if err != nil {
		return out, fmt.Errorf("failed to prepare order: %+v", err)
	}
	shippingUSD, err := cs.quoteShipping(ctx, address, cart.GetItems())
	if err != nil {
		return out, fmt.Errorf("shipping quote failure: %+v", err)
	}
	shippingPrice, err := cs.convertCurrency(ctx, shippingUSD, userCurrency)
	if err != nil {
		return out, fmt.Errorf("failed to convert shipping cost to currency: %+v", err)
	}
	out.shippingCostLocalized = shippingPrice
	out.cartItems = cart.GetItems()
	out.orderItems = orderItems
	return out, nil
}

func (cs *checkout) prepOrderItems(ctx context.Context, items []*pb.CartItem, userCurrency string) ([]*pb.OrderItem, error) {
	out := make([]*pb.OrderItem, len(items))
	catalog := pb.NewProductCatalogServiceClient(cs.conn(cs.productCatalogSvcAddr))
	for i, item := range items {
		product, err := catalog.GetProduct(ctx, &pb.GetProductRequest{Id: item.GetProductId()})
		if err != nil {
			return nil, fmt.Errorf("failed to get product #%q", item.GetProductId())
		}
		price, err := cs.convertCurrency(ctx, product.GetPriceUsd(), userCurrency)
		if err != nil {
			return nil, fmt.Errorf("failed to convert price of %q to %s", item.GetProductId(), userCurrency)
		}
		out[i] = &pb.OrderItem{Item: item, Cost: price}
	}
	return out, nil
}

func (cs *checkout) convertCurrency(ctx context.Context, from *pb.Money, toCurrency string) (*pb.Money, error) {
	result, err := pb.NewCurrencyServiceClient(cs.conn(cs.currencySvcAddr)).Convert(ctx, &pb.CurrencyConversionRequest{From: from, ToCode: toCurrency})
	if err != nil {
		return nil, fmt.Errorf("failed to convert currency: %+v", err)
	}
	if !money.IsValid(result) {
		return nil, fmt.Errorf("currency service returned invalid money %v", result)
	}
	return result, nil
}

func (cs *checkout) chargeCard(ctx context.Context, amount *pb.Money, card *pb.CreditCardInfo) (string, error) {
	addr := cs.paymentSvcAddr
	if cs.boolFlag(ctx, "paymentUnreachable") {
		addr = badPaymentAddr
	}
	resp, err := pb.NewPaymentServiceClient(cs.conn(addr)).Charge(ctx, &pb.ChargeRequest{Amount: amount, CreditCard: card})
	if err != nil {
		return "", fmt.Errorf("could not charge the card: %+v", err)
	}
	return resp.GetTransactionId(), nil
}

func (cs *checkout) emptyUserCart(ctx context.Context, userID string) error {
	_, err := pb.NewCartServiceClient(cs.conn(cs.cartSvcAddr)).EmptyCart(ctx, &pb.EmptyCartRequest{UserId: userID})
	return err
}

// recoverPanics turns a panic in a handler (money.Must on a bad amount, a nil message)
// into an Internal error for that one request instead of taking the whole process, and
// every order in flight on it, down.
func recoverPanics(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Errorf("panic in %s: %v", info.FullMethod, r)
			err = status.Errorf(codes.Internal, "internal error: %v", r)
		}
	}()
	return handler(ctx, req)
}

func main() {
	var port string
	mustMapEnv(&port, "CHECKOUT_PORT")
	cs := &checkout{conns: map[string]*grpc.ClientConn{}, httpClient: &http.Client{Timeout: httpTimeout}}
	mustMapEnv(&cs.shippingSvcAddr, "SHIPPING_ADDR")
	mustMapEnv(&cs.productCatalogSvcAddr, "PRODUCT_CATALOG_ADDR")
	mustMapEnv(&cs.cartSvcAddr, "CART_ADDR")
	mustMapEnv(&cs.currencySvcAddr, "CURRENCY_ADDR")
	mustMapEnv(&cs.emailSvcAddr, "EMAIL_ADDR")
	mustMapEnv(&cs.paymentSvcAddr, "PAYMENT_ADDR")
	cs.kafkaBrokerSvcAddr = os.Getenv("KAFKA_ADDR")

	provider, err := flagd.NewProvider() // reads FLAGD_HOST and FLAGD_PORT
	if err != nil {
		log.Fatal(err)
	}
	_ = openfeature.SetProvider(provider)
	cs.flags = openfeature.NewClient("checkout")

	if cs.kafkaBrokerSvcAddr != "" {
		cs.producer, err = kafka.NewOrderProducer([]string{cs.kafkaBrokerSvcAddr}, log)
		if err != nil {
			log.Fatal(err)
		}
	}

	lis, err := net.Listen("tcp", fmt.Sprintf(":%s", port))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(recoverPanics))
	pb.RegisterCheckoutServiceServer(srv, cs)
	log.Infof("starting to listen on tcp: %q", lis.Addr().String())
	if err := srv.Serve(lis); err != nil {
		log.Fatal(err)
	}
}
