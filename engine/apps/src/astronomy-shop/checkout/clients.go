// HTTP clients for shipping and email, flag lookups, and request validation.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"

	pb "github.com/open-telemetry/opentelemetry-demo/src/checkout/genproto/oteldemo"
)

func (cs *checkout) quoteShipping(ctx context.Context, address *pb.Address, items []*pb.CartItem) (*pb.Money, error) {
	var quote struct {
		CostUsd *pb.Money `json:"cost_usd"`
	}
	if err := cs.postJSON(ctx, cs.shippingSvcAddr+"/get-quote", map[string]any{"address": address, "items": items}, &quote); err != nil {
		return nil, err
	}
	if quote.CostUsd == nil {
		return nil, fmt.Errorf("shipping quote without cost")
	}
	return quote.CostUsd, nil
}

func (cs *checkout) shipOrder(ctx context.Context, address *pb.Address, items []*pb.CartItem) (string, error) {
	var shipped struct {
		TrackingID string `json:"tracking_id"`
	}
	if err := cs.postJSON(ctx, cs.shippingSvcAddr+"/ship-order", map[string]any{"address": address, "items": items}, &shipped); err != nil {
		return "", err
	}
	return shipped.TrackingID, nil
}

func (cs *checkout) sendOrderConfirmation(ctx context.Context, email string, order *pb.OrderResult) error {
	return cs.postJSON(ctx, cs.emailSvcAddr+"/send_order_confirmation", map[string]any{"email": email, "order": order}, nil)
}

func (cs *checkout) postJSON(ctx context.Context, url string, body any, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := cs.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d", url, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Flag lookups fall back to their defaults when flagd cannot answer.
func (cs *checkout) boolFlag(ctx context.Context, key string) bool {
	v, err := cs.flags.BooleanValue(ctx, key, false, openfeature.EvaluationContext{})
	if err != nil {
		log.Warnf("flag %s: %v (using false)", key, err)
	}
	return v
}

func (cs *checkout) intFlag(ctx context.Context, key string) int {
	v, err := cs.flags.IntValue(ctx, key, 0, openfeature.EvaluationContext{})
	if err != nil {
		log.Warnf("flag %s: %v (using 0)", key, err)
	}
	return int(v)
}

func validateOrderRequest(req *pb.PlaceOrderRequest) error {
	switch {
	case req.GetUserId() == "":
		return fmt.Errorf("user_id is required")
	case len(req.GetUserCurrency()) != 3 || strings.ToUpper(req.GetUserCurrency()) != req.GetUserCurrency():
		return fmt.Errorf("user_currency must be an ISO 4217 code, got %q", req.GetUserCurrency())
	case !strings.Contains(req.GetEmail(), "@"):
		return fmt.Errorf("invalid email %q", req.GetEmail())
	case req.GetAddress() == nil || req.GetAddress().GetCountry() == "":
		return fmt.Errorf("a shipping address with a country is required")
	case req.GetCreditCard() == nil:
		return fmt.Errorf("credit card is required")
	}
	return nil
}
