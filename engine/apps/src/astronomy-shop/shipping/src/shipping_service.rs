//! HTTP handlers: POST /get-quote prices a shipment through the quote service, POST
//! /ship-order "ships" it and answers a tracking id.

use actix_web::{post, web, HttpResponse, Responder};
use log::{info, warn};
use opentelemetry::trace::{get_active_span, Status};
use opentelemetry::KeyValue;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::quote::{create_quote_from_count, Money, QuoteError};
use crate::AppState;

/// Lines above this many items in one order are refused; the cart caps a line at 10.
const MAX_ITEMS_PER_ORDER: u32 = 250;

#[derive(Debug, Deserialize, Serialize, Clone)]
pub struct Address {
    #[serde(default)]
    pub street_address: String,
    #[serde(default)]
    pub city: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub country: String,
    #[serde(default)]
    pub zip_code: String,
}

#[derive(Debug, Deserialize, Serialize, Clone)]
pub struct CartItem {
    pub product_id: String,
    pub quantity: i32,
}

#[derive(Debug, Deserialize)]
pub struct ShipmentRequest {
    pub address: Option<Address>,
    #[serde(default)]
    pub items: Vec<CartItem>,
}

#[derive(Debug, Serialize)]
pub struct GetQuoteResponse {
    pub cost_usd: Money,
}

#[derive(Debug, Serialize)]
pub struct ShipOrderResponse {
    pub tracking_id: String,
}

/// Total number of items to ship, refusing negative quantities and absurd totals.
fn item_count(items: &[CartItem]) -> Result<u32, String> {
    let mut total: u32 = 0;
    for item in items {
        if item.quantity <= 0 {
            return Err(format!(
                "invalid quantity {} for product {}",
                item.quantity, item.product_id
            ));
        }
        total = total.saturating_add(item.quantity as u32);
    }
    if total > MAX_ITEMS_PER_ORDER {
        return Err(format!(
            "{} items exceed the {} item limit",
            total, MAX_ITEMS_PER_ORDER
        ));
    }
    Ok(total)
}

fn bad_request(message: String) -> HttpResponse {
    warn!("rejected shipping request: {}", message);
    HttpResponse::BadRequest().json(serde_json::json!({ "error": message }))
}

#[post("/get-quote")]
pub async fn get_quote(
    state: web::Data<AppState>,
    req: web::Json<ShipmentRequest>,
) -> impl Responder {
    let count = match item_count(&req.items) {
        Ok(0) => {
            return HttpResponse::Ok().json(GetQuoteResponse {
                cost_usd: Money::zero_usd(),
            })
        }
        Ok(n) => n,
        Err(message) => return bad_request(message),
    };

    match create_quote_from_count(&state.http, &state.quote_addr, count).await {
        Ok(cost) => {
            get_active_span(|span| {
                span.add_event(
                    "Received Quote".to_string(),
                    vec![KeyValue::new("app.shipping.cost.total", cost.to_string())],
                );
                span.set_attribute(KeyValue::new("app.shipping.items.count", count as i64));
            });
            info!("sending shipping quote of {} for {} items", cost, count);
            HttpResponse::Ok().json(GetQuoteResponse { cost_usd: cost })
        }
        Err(err) => {
            get_active_span(|span| span.set_status(Status::error(err.to_string())));
            match &err {
                QuoteError::Rejected(400) => bad_request(err.to_string()),
                _ => {
                    HttpResponse::BadGateway().json(serde_json::json!({ "error": err.to_string() }))
                }
            }
        }
    }
}

#[post("/ship-order")]
pub async fn ship_order(req: web::Json<ShipmentRequest>) -> impl Responder {
    let address = match &req.address {
        Some(a) if !a.country.trim().is_empty() && !a.zip_code.trim().is_empty() => a,
        _ => return bad_request("an address with country and zip code is required".to_string()),
    };
    if let Err(message) = item_count(&req.items) {
        return bad_request(message);
    }

    let tracking_id = create_tracking_id();
    get_active_span(|span| {
        span.set_attribute(KeyValue::new(
            "app.shipping.tracking.id",
            tracking_id.clone(),
        ));
        span.set_attribute(KeyValue::new(
            "app.shipping.zip_code",
            address.zip_code.clone(),
        ));
    });
    info!(
        "shipping order to {}, {}: tracking id {}",
        address.city, address.country, tracking_id
    );
    HttpResponse::Ok().json(ShipOrderResponse { tracking_id })
}

/// Tracking ids are version-4 UUIDs, as the carrier mock expects.
fn create_tracking_id() -> String {
    Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_items() {
        let items = vec![
            CartItem {
                product_id: "OLJCESPC7Z".into(),
                quantity: 2,
            },
            CartItem {
                product_id: "66VCHSJNUP".into(),
                quantity: 3,
            },
        ];
        assert_eq!(item_count(&items), Ok(5));
    }

    #[test]
    fn refuses_non_positive_quantity() {
        let items = vec![CartItem {
            product_id: "OLJCESPC7Z".into(),
            quantity: 0,
        }];
        assert!(item_count(&items).is_err());
    }
}
