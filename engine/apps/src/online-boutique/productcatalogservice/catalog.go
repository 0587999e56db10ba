package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/golang/protobuf/jsonpb"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/productcatalogservice/genproto"
)

const (
	// catalogFile is read at start-up and again on SIGUSR1.
	catalogFile = "products.json"
	// productIDLength is the length of every catalog id, e.g. "OLJCESPC7Z".
	productIDLength = 10
	// minQueryLength is the shortest search query served; shorter ones match nothing.
	minQueryLength = 2
)

// catalog is the in-memory product list, swapped whole on reload so that readers
// never see a half-parsed file.
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

// load parses path and replaces the catalog; on error the previous catalog stays.
func (c *catalog) load(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read catalog %s: %w", path, err)
	}
	var resp pb.ListProductsResponse
	if err := jsonpb.Unmarshal(bytes.NewReader(data), &resp); err != nil {
		return fmt.Errorf("parse catalog %s: %w", path, err)
	}
	byID := make(map[string]*pb.Product, len(resp.Products))
	for i, p := range resp.Products {
		if err := validateProduct(p); err != nil {
			return fmt.Errorf("catalog entry %d: %w", i, err)
		}
		if _, dup := byID[p.Id]; dup {
			return fmt.Errorf("catalog entry %d: duplicate id %s", i, p.Id)
		}
		byID[p.Id] = p
	}
	c.mu.Lock()
	c.products = resp.Products
	c.byID = byID
	c.mu.Unlock()
	log.Infof("loaded %d products from %s", len(resp.Products), path)
	return nil
}

// validateProduct rejects entries the frontend could not render or charge for.
func validateProduct(p *pb.Product) error {
	if !validProductID(p.GetId()) {
		return fmt.Errorf("malformed id %q", p.GetId())
	}
	if strings.TrimSpace(p.GetName()) == "" {
		return fmt.Errorf("product %s has no name", p.GetId())
	}
	price := p.GetPriceUsd()
	if price == nil || price.GetCurrencyCode() != "USD" {
		return fmt.Errorf("product %s: price must be in USD", p.GetId())
	}
	if price.GetUnits() < 0 || price.GetNanos() < 0 || price.GetNanos() > 999999999 {
		return fmt.Errorf("product %s: invalid price %d.%09d", p.GetId(), price.GetUnits(), price.GetNanos())
	}
	if price.GetUnits() == 0 && price.GetNanos() == 0 {
		return fmt.Errorf("product %s: price is zero", p.GetId())
	}
	return nil
}

func validProductID(id string) bool {
	if len(id) != productIDLength {
		return false
	}
	for _, r := range id {
		if !(unicode.IsDigit(r) || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}

// search returns the products whose name, description or one of whose categories
// contains every word of query, case-insensitively, in catalog order.
func (c *catalog) search(query string) []*pb.Product {
	words := strings.Fields(strings.ToLower(query))
	if len(strings.Join(words, "")) < minQueryLength {
		return nil
	}
	var out []*pb.Product
	for _, p := range c.all() {
		haystack := strings.ToLower(p.GetName() + " " + p.GetDescription() + " " + strings.Join(p.GetCategories(), " "))
		matched := true
		for _, w := range words {
			if !strings.Contains(haystack, w) {
				matched = false
				break
			}
		}
		if matched {
			out = append(out, p)
		}
	}
	return out
}
