// productcatalogservice serves the shop's products from products.json over gRPC.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/productcatalogservice/genproto"
)

const defaultPort = "3550"

var (
	log = logrus.New()

	// extraLatency is added to every request when EXTRA_LATENCY is set (e.g. "5.5s");
	// the release manifest leaves it unset.
	extraLatency time.Duration
)

func init() {
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

type productCatalog struct {
	pb.UnimplementedProductCatalogServiceServer
	catalog *catalog
}

func main() {
	if os.Getenv("DISABLE_PROFILER") == "" {
		log.Info("profiling enabled")
	}
	if s := os.Getenv("EXTRA_LATENCY"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil {
			log.Fatalf("failed to parse EXTRA_LATENCY (%s) as time.Duration: %+v", s, err)
		}
		extraLatency = v
		log.Infof("extra latency enabled (duration: %v)", extraLatency)
	}

	svc := &productCatalog{catalog: &catalog{}}
	if err := svc.catalog.load(catalogFile); err != nil {
		log.Fatalf("cannot start without a catalog: %v", err)
	}

	// SIGUSR1 reloads products.json; SIGUSR2 is kept for parity with the other Go services.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGUSR1 {
				if err := svc.catalog.load(catalogFile); err != nil {
					log.Warnf("catalog reload failed, keeping the previous one: %v", err)
				}
			}
		}
	}()

	port := defaultPort
	if value, ok := os.LookupEnv("PORT"); ok {
		port = value
	}
	if _, err := strconv.Atoi(port); err != nil {
		log.Fatalf("PORT must be a number, got %q", port)
	}
	lis, err := net.Listen("tcp", fmt.Sprintf(":%s", port))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterProductCatalogServiceServer(srv, svc)
	healthpb.RegisterHealthServer(srv, svc)
	log.Infof("starting grpc server at :%s", port)
	log.Fatal(srv.Serve(lis))
}

func (p *productCatalog) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if len(p.catalog.all()) == 0 {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (p *productCatalog) Watch(req *healthpb.HealthCheckRequest, ws healthpb.Health_WatchServer) error {
	return status.Errorf(codes.Unimplemented, "health check via Watch not implemented")
}

// ListProducts returns the whole catalog, in file order.
func (p *productCatalog) ListProducts(ctx context.Context, _ *pb.Empty) (*pb.ListProductsResponse, error) {
	time.Sleep(extraLatency)
	return &pb.ListProductsResponse{Products: p.catalog.all()}, nil
}

// GetProduct returns one product by id; an unknown id is NOT_FOUND.
func (p *productCatalog) GetProduct(ctx context.Context, req *pb.GetProductRequest) (*pb.Product, error) {
	time.Sleep(extraLatency)
	id := strings.TrimSpace(req.GetId())
	if !validProductID(id) {
		return nil, status.Errorf(codes.InvalidArgument, "malformed product id %q", req.GetId())
	}
	found, ok := p.catalog.lookup(id)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no product with ID %s", id)
	}
	return found, nil
}

// SearchProducts matches the query against names, descriptions and categories.
func (p *productCatalog) SearchProducts(ctx context.Context, req *pb.SearchProductsRequest) (*pb.SearchProductsResponse, error) {
	time.Sleep(extraLatency)
	return &pb.SearchProductsResponse{Results: p.catalog.search(req.GetQuery())}, nil
}
