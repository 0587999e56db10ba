// Product catalog service: ListProducts, GetProduct and SearchProducts over the catalog
// loaded by catalog.go, on PRODUCT_CATALOG_PORT.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	flagd "github.com/open-feature/go-sdk-contrib/providers/flagd/pkg"
	"github.com/open-feature/go-sdk/openfeature"
	"github.com/sirupsen/logrus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/open-telemetry/opentelemetry-demo/src/product-catalog/genproto/oteldemo"
)

var log = logrus.New()

const (
	// productCatalogFailure only ever breaks this one product.
	failingProductID = "OLJCESPC7Z"
	failureFlag      = "productCatalogFailure"
	// SearchProducts answers at most this many matches.
	maxSearchResults = 20
)

type productCatalog struct {
	pb.UnimplementedProductCatalogServiceServer
	catalog *catalog
	flags   *openfeature.Client
}

func (p *productCatalog) ListProducts(ctx context.Context, req *pb.Empty) (*pb.ListProductsResponse, error) {
	span := trace.SpanFromContext(ctx)
	products := p.catalog.all()
	span.SetAttributes(attribute.Int("app.products.count", len(products)))
	return &pb.ListProductsResponse{Products: products}, nil
}

func (p *productCatalog) GetProduct(ctx context.Context, req *pb.GetProductRequest) (*pb.Product, error) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("app.product.id", req.GetId()))

	if p.checkProductFailure(ctx, req.GetId()) {
		msg := "Error: Product Catalog Fail Feature Flag Enabled"
		span.AddEvent(msg)
		return nil, status.Error(codes.Internal, msg)
	}

	if !productIDPattern.MatchString(req.GetId()) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid product id %q", req.GetId())
	}
	found, ok := p.catalog.lookup(req.GetId())
	if !ok {
		msg := fmt.Sprintf("Product Not Found: %s", req.GetId())
		span.AddEvent(msg)
		return nil, status.Error(codes.NotFound, msg)
	}
	span.SetAttributes(attribute.String("app.product.name", found.GetName()))
	return found, nil
}

func (p *productCatalog) SearchProducts(ctx context.Context, req *pb.SearchProductsRequest) (*pb.SearchProductsResponse, error) {
	span := trace.SpanFromContext(ctx)
	results := p.catalog.search(req.GetQuery())
	if len(results) > maxSearchResults {
		results = results[:maxSearchResults]
	}
	span.SetAttributes(attribute.Int("app.products_search.count", len(results)))
	return &pb.SearchProductsResponse{Results: results}, nil
}

// checkProductFailure evaluates the flag only for the one product it can break, so the
// other products never wait on flagd. An evaluation error means off.
func (p *productCatalog) checkProductFailure(ctx context.Context, id string) bool {
	if id != failingProductID {
		return false
	}
	enabled, err := p.flags.BooleanValue(ctx, failureFlag, false, openfeature.EvaluationContext{})
	if err != nil {
		log.Warnf("flag %s: %v (using false)", failureFlag, err)
		return false
	}
	return enabled
}

func main() {
	port := os.Getenv("PRODUCT_CATALOG_PORT")
	if port == "" {
		log.Fatal("PRODUCT_CATALOG_PORT environment variable is required")
	}

	cat := &catalog{}
	if err := cat.load(productsDir); err != nil {
		log.Fatalf("cannot start without a catalog: %v", err)
	}
	stop := make(chan struct{})
	go cat.watch(productsDir, reloadInterval(), stop)

	provider, err := flagd.NewProvider() // FLAGD_HOST, FLAGD_PORT
	if err != nil {
		log.Fatal(err)
	}
	_ = openfeature.SetProvider(provider)

	svc := &productCatalog{catalog: cat, flags: openfeature.NewClient("product-catalog")}

	lis, err := net.Listen("tcp", fmt.Sprintf(":%s", port))
	if err != nil {
		log.Fatalf("TCP Listen: %v", err)
	}
	srv := grpc.NewServer()
	healthSrv := health.NewServer()
	healthpb.RegisterHealthServer(srv, healthSrv)
	healthSrv.SetServingStatus("oteldemo.ProductCatalogService", healthpb.HealthCheckResponse_SERVING)
	pb.RegisterProductCatalogServiceServer(srv, svc)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		healthSrv.SetServingStatus("oteldemo.ProductCatalogService", healthpb.HealthCheckResponse_NOT_SERVING)
		close(stop)
		srv.GracefulStop()
	}()

	log.Infof("product catalog gRPC server started on port %s", port)
	if err := srv.Serve(lis); err != nil {
		log.Fatalf("failed to serve gRPC server, err: %v", err)
	}
}
