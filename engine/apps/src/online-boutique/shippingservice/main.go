// shippingservice quotes shipping costs and "ships" orders (mock): it returns a
// tracking id and books nothing.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/shippingservice/genproto"
)

const defaultPort = "50051"

var log *logrus.Logger

func init() {
	log = logrus.New()
	log.Level = logrus.DebugLevel
	log.Formatter = &logrus.JSONFormatter{
		FieldMap: logrus.FieldMap{
			logrus.FieldKeyTime:  "timestamp",
			logrus.FieldKeyLevel: "severity",
			logrus.FieldKeyMsg:   "message",
		},
		TimestampFormat: time.RFC3339Nano,
	}
	log.Out = os.Stdout
}

func main() {
	if os.Getenv("DISABLE_PROFILER") == "" {
		log.Info("profiling enabled")
	} else {
		log.Info("profiling disabled")
	}

	port := defaultPort
	if value, ok := os.LookupEnv("PORT"); ok {
		port = value
	}
	port = fmt.Sprintf(":%s", port)

	lis, err := net.Listen("tcp", port)
	if err != nil {
		log.Fatalf("failed to listen: %v", err)
	}
	srv := grpc.NewServer()
	svc := &server{}
	pb.RegisterShippingServiceServer(srv, svc)
	healthpb.RegisterHealthServer(srv, svc)
	log.Infof("Shipping Service listening on port %s", port)

	if err := srv.Serve(lis); err != nil {
		log.Fatalf("failed to serve: %v", err)
	}
}

// server implements hipstershop.ShippingService and grpc.health.v1.
type server struct {
	pb.UnimplementedShippingServiceServer
}

func (s *server) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *server) Watch(req *healthpb.HealthCheckRequest, ws healthpb.Health_WatchServer) error {
	return status.Errorf(codes.Unimplemented, "health check via Watch not implemented")
}

// GetQuote prices shipping for the cart's items. The address is optional here: the cart
// page asks for a quote before the shopper has typed one.
func (s *server) GetQuote(ctx context.Context, in *pb.GetQuoteRequest) (*pb.GetQuoteResponse, error) {
	log.Info("[GetQuote] received request")
	defer log.Info("[GetQuote] completed request")

	count, err := unitCount(in.GetItems())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "cannot quote: %v", err)
	}
	quote := CreateQuoteFromCount(count)
	log.WithField("units", count).WithField("quote", quote.String()).Debug("quoted shipping")

	return &pb.GetQuoteResponse{CostUsd: quote.Money()}, nil
}

// ShipOrder validates the destination and returns the parcel's tracking id.
func (s *server) ShipOrder(ctx context.Context, in *pb.ShipOrderRequest) (*pb.ShipOrderResponse, error) {
	log.Info("[ShipOrder] received request")
	defer log.Info("[ShipOrder] completed request")

	if err := validateAddress(in.GetAddress()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "cannot ship: %v", err)
	}
	count, err := unitCount(in.GetItems())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "cannot ship: %v", err)
	}
	if count == 0 {
		return nil, status.Error(codes.InvalidArgument, "cannot ship: the order has no items")
	}

	addr := in.GetAddress()
	id := CreateTrackingId(addressLine(addr.GetStreetAddress(), addr.GetCity(), addr.GetState()))
	if !ValidTrackingId(id) {
		return nil, status.Errorf(codes.Internal, "generated malformed tracking id %q", id)
	}
	log.WithField("tracking_id", id).WithField("units", count).WithField("request_id", requestID(ctx)).Info("order shipped")
	return &pb.ShipOrderResponse{TrackingId: id}, nil
}

// requestID returns the caller's x-request-id metadata, to correlate shipping logs with
// the checkout that booked the parcel; empty when the caller sent none.
func requestID(ctx context.Context) string {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("x-request-id"); len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// validateAddress requires the fields a carrier label needs.
func validateAddress(a *pb.Address) error {
	if a == nil {
		return fmt.Errorf("address is required")
	}
	missing := []string{}
	if strings.TrimSpace(a.GetStreetAddress()) == "" {
		missing = append(missing, "street_address")
	}
	if strings.TrimSpace(a.GetCity()) == "" {
		missing = append(missing, "city")
	}
	if strings.TrimSpace(a.GetCountry()) == "" {
		missing = append(missing, "country")
	}
	if len(missing) > 0 {
		return fmt.Errorf("address is missing %s", strings.Join(missing, ", "))
	}
	if a.GetZipCode() < 0 {
		return fmt.Errorf("zip code %d is negative", a.GetZipCode())
	}
	return nil
}
