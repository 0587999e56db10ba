//! Client of the quote service (QUOTE_ADDR, e.g. http://quote:8080) and the Money type of
//! demo.proto.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// Deadline of one quote request.
pub const QUOTE_TIMEOUT: Duration = Duration::from_secs(3);
const NANOS_PER_UNIT: i64 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Money {
    pub currency_code: &'static str,
    pub units: i64,
    pub nanos: i32,
}

impl Money {
    pub fn zero_usd() -> Self {
        Money {
            currency_code: "USD",
            units: 0,
            nanos: 0,
        }
    }

    /// USD amount from a decimal number of dollars, rounded to whole cents.
    pub fn from_usd(amount: f64) -> Result<Self, QuoteError> {
        if !amount.is_finite() || amount < 0.0 {
            return Err(QuoteError::InvalidAmount(amount));
        }
        let cents = (amount * 100.0).round() as i64;
        Ok(Money {
            currency_code: "USD",
            units: cents / 100,
            nanos: ((cents % 100) * (NANOS_PER_UNIT / 100)) as i32,
        })
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}.{:02}",
            self.currency_code,
            self.units,
            self.nanos / 10_000_000
        )
    }
}

#[derive(Debug)]
pub enum QuoteError {
    /// The quote service could not be reached or did not answer in time.
    Unavailable(String),
    /// The quote service answered with a non-success status.
    Rejected(u16),
    /// The answer was not a JSON number.
    Malformed(String),
    /// A negative or non-finite amount.
    InvalidAmount(f64),
}

impl fmt::Display for QuoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuoteError::Unavailable(e) => write!(f, "quote service unavailable: {}", e),
            QuoteError::Rejected(s) => write!(f, "quote service answered HTTP {}", s),
            QuoteError::Malformed(e) => write!(f, "malformed quote: {}", e),
            QuoteError::InvalidAmount(a) => write!(f, "invalid quote amount {}", a),
        }
    }
}

impl std::error::Error for QuoteError {}

#[derive(Serialize)]
struct QuoteRequest {
    #[serde(rename = "numberOfItems")]
    number_of_items: u32,
}

/// Asks the quote service what shipping `count` items costs.
pub async fn create_quote_from_count(
    http: &reqwest::Client,
    quote_addr: &str,
    count: u32,
) -> Result<Money, QuoteError> {
    let url = format!("{}/getquote", quote_addr.trim_end_matches('/'));
    let response = http
        .post(&url)
        .timeout(QUOTE_TIMEOUT)
        .json(&QuoteRequest {
            number_of_items: count,
        })
        .send()
        .await
        .map_err(|e| QuoteError::Unavailable(e.to_string()))?;

    let status = response.status();
    if !status.is_success() {
        return Err(QuoteError::Rejected(status.as_u16()));
    }
    let body = response
        .text()
        .await
        .map_err(|e| QuoteError::Unavailable(e.to_string()))?;
    let amount: f64 = body
        .trim()
        .parse()
        .map_err(|e: std::num::ParseFloatError| {
            QuoteError::Malformed(format!("{:?}: {}", body, e))
        })?;
    Money::from_usd(amount)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_cents() {
        let m = Money::from_usd(12.345).unwrap();
        assert_eq!((m.units, m.nanos), (12, 350_000_000));
    }

    #[test]
    fn refuses_negative() {
        assert!(Money::from_usd(-1.0).is_err());
    }
}
