//! Shipping service: HTTP on SHIPPING_PORT, quotes from QUOTE_ADDR.

use std::env;
use std::time::Duration;

use actix_web::{get, middleware, web, App, HttpResponse, HttpServer, Responder};
use log::info;

mod quote;
mod shipping_service;

/// Shared by every worker: the quote service address and one pooled HTTP client.
pub struct AppState {
    pub quote_addr: String,
    pub http: reqwest::Client,
}

fn required_env(name: &str) -> String {
    match env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!("{} environment variable must be set", name),
    }
}

#[get("/health")]
async fn health() -> impl Responder {
    HttpResponse::Ok().body("ok")
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();

    let port: u16 = required_env("SHIPPING_PORT")
        .parse()
        .expect("SHIPPING_PORT must be a TCP port number");
    let quote_addr = required_env("QUOTE_ADDR");
    if !quote_addr.starts_with("http://") && !quote_addr.starts_with("https://") {
        panic!("QUOTE_ADDR must be an http(s) URL, got {}", quote_addr);
    }

    let http = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(90))
        .connect_timeout(Duration::from_secs(1))
        .build()
        .expect("HTTP client");
    let state = web::Data::new(AppState {
        quote_addr: quote_addr.clone(),
        http,
    });

    info!(
        "Shipping service listening on 0.0.0.0:{}, quotes from {}",
        port, quote_addr
    );

    HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            // The checkout and frontend send small JSON bodies; refuse anything large.
            .app_data(web::JsonConfig::default().limit(64 * 1024))
            .wrap(middleware::Logger::default())
            .service(shipping_service::get_quote)
            .service(shipping_service::ship_order)
            .service(health)
    })
    .workers(2)
    .shutdown_timeout(5)
    .bind(("0.0.0.0", port))?
    .run()
    .await
}
