// The in-memory catalog, loaded from the JSON files of the products directory (ConfigMap
// product-catalog-products, mounted at /usr/src/app/products) and reloaded every
// PRODUCT_CATALOG_RELOAD_INTERVAL seconds so that ConfigMap edits take effect without a
// restart.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/open-telemetry/opentelemetry-demo/src/product-catalog/genproto/oteldemo"
)

const (
	productsDir           = "./products"
	defaultReloadInterval = 10 * time.Second
	nanosPerUnit          = 1_000_000_000
)

var productIDPattern = regexp.MustCompile(`^[A-Z0-9]{10}$`)

type catalog struct {
	mu       sync.RWMutex
	products []*pb.Product
	byID     map[string]*pb.Product
}

func (c *catalog) all() []*pb.Product {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.products
}

func (c *catalog) lookup(id string) (*pb.Product, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.byID[id]
	return p, ok
}

// load reads every *.json file of dir and swaps the catalog in whole. A file that does not
// parse, or a product that fails validation, keeps the previous catalog.
func (c *catalog) load(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no product files in %s", dir)
	}
	sort.Strings(files)

	var products []*pb.Product
	byID := make(map[string]*pb.Product)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		var res pb.ListProductsResponse
		if err := protojson.Unmarshal(data, &res); err != nil {
			return fmt.Errorf("parse %s: %w", f, err)
		}
		for _, p := range res.GetProducts() {
			if err := validateProduct(p); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if _, dup := byID[p.GetId()]; dup {
				return fmt.Errorf("%s: duplicate product id %s", f, p.GetId())
			}
			byID[p.GetId()] = p
			products = append(products, p)
		}
	}

	c.mu.Lock()
	c.products = products
	c.byID = byID
	c.mu.Unlock()
	log.Infof("loaded %d products from %d file(s)", len(products), len(files))
	return nil
}

func validateProduct(p *pb.Product) error {
	if !productIDPattern.MatchString(p.GetId()) {
		return fmt.Errorf("invalid product id %q", p.GetId())
	}
	price := p.GetPriceUsd()
	if price == nil || price.GetCurrencyCode() != "USD" {
		return fmt.Errorf("product %s: price must be in USD", p.GetId())
	}
	if price.GetUnits() < 0 || price.GetNanos() < 0 || price.GetNanos() >= nanosPerUnit {
		return fmt.Errorf("product %s: invalid price %d.%09d", p.GetId(), price.GetUnits(), price.GetNanos())
	}
	if strings.TrimSpace(p.GetName()) == "" || p.GetPicture() == "" {
		return fmt.Errorf("product %s: name and picture are required", p.GetId())
	}
	return nil
}

// search matches the query against names and descriptions, case-insensitively.
func (c *catalog) search(query string) []*pb.Product {
	q := strings.ToLower(strings.TrimSpace(query))
	var out []*pb.Product
	if q == "" {
		return out
	}
	for _, p := range c.all() {
		if strings.Contains(strings.ToLower(p.GetName()), q) ||
			strings.Contains(strings.ToLower(p.GetDescription()), q) {
			out = append(out, p)
		}
	}
	return out
}

func reloadInterval() time.Duration {
	raw := os.Getenv("PRODUCT_CATALOG_RELOAD_INTERVAL")
	if raw == "" {
		return defaultReloadInterval
	}
	seconds, err := strconv.Atoi(raw)
	if err != nil || seconds <= 0 {
		log.Warnf("invalid PRODUCT_CATALOG_RELOAD_INTERVAL %q, using %s", raw, defaultReloadInterval)
		return defaultReloadInterval
	}
	return time.Duration(seconds) * time.Second
}

// watch reloads the catalog until stop is closed; a failed reload is logged and the old
// catalog keeps serving.
func (c *catalog) watch(dir string, every time.Duration, stop <-chan struct{}) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			if err := c.load(dir); err != nil {
				log.Errorf("catalog reload failed, keeping %d products: %v", len(c.all()), err)
			}
		case <-stop:
			return
		}
	}
}
