package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/pkg/errors"
	"github.com/sirupsen/logrus"

	pb "github.com/GoogleCloudPlatform/microservices-demo/src/frontend/genproto"
)

// Handlers that change state: the cart, the order and the currency cookie. Each answers
// with a redirect except placeOrderHandler, which renders the order confirmation.

func (fe *frontendServer) addToCartHandler(w http.ResponseWriter, r *http.Request) {
	log := r.Context().Value(ctxKeyLog{}).(logrus.FieldLogger)
	quantity, err := strconv.ParseUint(r.FormValue("quantity"), 10, 32)
	productID := r.FormValue("product_id")
	if err != nil || productID == "" || quantity < 1 || quantity > maxAddQuantity {
		renderHTTPError(log, r, w, errors.Errorf("invalid form input: product_id=%q quantity=%q", productID, r.FormValue("quantity")), http.StatusUnprocessableEntity)
		return
	}
	log.WithField("product", productID).WithField("quantity", quantity).Debug("adding to cart")

	p, err := fe.getProduct(r.Context(), productID)
	if err != nil {
		renderHTTPError(log, r, w, errors.Wrap(err, "could not retrieve product"), http.StatusInternalServerError)
		return
	}
	if err := fe.insertCart(r.Context(), sessionID(r), p.GetId(), int32(quantity)); err != nil {
		renderHTTPError(log, r, w, errors.Wrap(err, "failed to add to cart"), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Location", "/cart")
	w.WriteHeader(http.StatusFound)
}

func (fe *frontendServer) emptyCartHandler(w http.ResponseWriter, r *http.Request) {
	log := r.Context().Value(ctxKeyLog{}).(logrus.FieldLogger)
	log.Debug("emptying cart")
	if err := fe.emptyCart(r.Context(), sessionID(r)); err != nil {
		renderHTTPError(log, r, w, errors.Wrap(err, "failed to empty cart"), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Location", "/")
	w.WriteHeader(http.StatusFound)
}

func (fe *frontendServer) placeOrderHandler(w http.ResponseWriter, r *http.Request) {
	log := r.Context().Value(ctxKeyLog{}).(logrus.FieldLogger)
	log.Debug("placing order")
	zipCode, _ := strconv.ParseInt(r.FormValue("zip_code"), 10, 32)
	ccMonth, _ := strconv.ParseInt(r.FormValue("credit_card_expiration_month"), 10, 32)
	ccYear, _ := strconv.ParseInt(r.FormValue("credit_card_expiration_year"), 10, 32)
	ccCVV, _ := strconv.ParseInt(r.FormValue("credit_card_cvv"), 10, 32)

	order, err := fe.placeOrder(r.Context(), &pb.PlaceOrderRequest{
		Email: r.FormValue("email"),
		CreditCard: &pb.CreditCardInfo{
			CreditCardNumber:          r.FormValue("credit_card_number"),
			CreditCardExpirationMonth: int32(ccMonth),
			CreditCardExpirationYear:  int32(ccYear),
			CreditCardCvv:             int32(ccCVV),
		},
		UserId:       sessionID(r),
		UserCurrency: currentCurrency(r),
		Address: &pb.Address{
			StreetAddress: r.FormValue("street_address"),
			City:          r.FormValue("city"),
			State:         r.FormValue("state"),
			ZipCode:       int32(zipCode),
			Country:       r.FormValue("country"),
		},
	})
	if err != nil {
		renderHTTPError(log, r, w, errors.Wrap(err, "failed to complete the order"), http.StatusInternalServerError)
		return
	}
	log.WithField("order", order.GetOrderId()).Info("order placed")

	// The order page shows recommendations when they come; an order is never failed for them.
	recommendations, _ := fe.getRecommendations(r.Context(), sessionID(r), nil)

	totalPaid := *order.GetShippingCost()
	for _, v := range order.GetItems() {
		totalPaid = Must(Sum(totalPaid, MultiplySlow(*v.GetCost(), uint32(v.GetItem().GetQuantity()))))
	}
	currencies, err := fe.getCurrencies(r.Context())
	if err != nil {
		renderHTTPError(log, r, w, errors.Wrap(err, "could not retrieve currencies"), http.StatusInternalServerError)
		return
	}
	if err := templates.ExecuteTemplate(w, "order", map[string]interface{}{
		"session_id":      sessionID(r),
		"request_id":      r.Context().Value(ctxKeyRequestID{}),
		"user_currency":   currentCurrency(r),
		"show_currency":   false,
		"currencies":      currencies,
		"order":           order,
		"total_paid":      &totalPaid,
		"recommendations": recommendations,
	}); err != nil {
		log.Println(err)
	}
}

func (fe *frontendServer) logoutHandler(w http.ResponseWriter, r *http.Request) {
	for _, c := range r.Cookies() {
		c.Expires = time.Now().Add(-time.Hour * 24 * 365)
		c.MaxAge = -1
		http.SetCookie(w, c)
	}
	w.Header().Set("Location", "/")
	w.WriteHeader(http.StatusFound)
}

func (fe *frontendServer) setCurrencyHandler(w http.ResponseWriter, r *http.Request) {
	log := r.Context().Value(ctxKeyLog{}).(logrus.FieldLogger)
	cur := r.FormValue("currency_code")
	log.WithField("curr.new", cur).WithField("curr.old", currentCurrency(r)).Debug("setting currency")
	if !whitelistedCurrencies[cur] {
		renderHTTPError(log, r, w, errors.Errorf("currency %q is not supported", cur), http.StatusUnprocessableEntity)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieCurrency, Value: cur, MaxAge: cookieMaxAge})
	referer := r.Header.Get("referer")
	if referer == "" {
		referer = "/"
	}
	w.Header().Set("Location", referer)
	w.WriteHeader(http.StatusFound)
}
