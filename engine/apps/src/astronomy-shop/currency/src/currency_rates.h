// Exchange rates, units of each currency per 1 EUR (European Central Bank reference rates).
//
// Convert goes from the source currency to EUR and from EUR to the target, so every pair
// is supported through this one table. Keep the codes upper-case ISO 4217.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace currency {

inline const std::unordered_map<std::string, double>& EurRates() {
  static const std::unordered_map<std::string, double> rates = {
      {"EUR", 1.0},
      {"USD", 1.1305},
      {"JPY", 126.40},
      {"BGN", 1.9558},
      {"CZK", 25.592},
      {"DKK", 7.4609},
      {"GBP", 0.85970},
      {"HUF", 315.51},
      {"PLN", 4.2996},
      {"RON", 4.7463},
      {"SEK", 10.5375},
      {"CHF", 1.1360},
      {"ISK", 136.80},
      {"NOK", 9.8040},
      {"HRK", 7.4210},
      {"RUB", 74.4208},
      {"TRY", 6.1247},
      {"AUD", 1.6072},
      {"BRL", 4.2682},
      {"CAD", 1.5128},
      {"CNY", 7.5857},
      {"HKD", 8.8743},
      {"IDR", 15999.40},
      {"ILS", 4.0875},
      {"INR", 79.4320},
      {"KRW", 1275.05},
      {"MXN", 21.7999},
      {"MYR", 4.6289},
      {"NZD", 1.6679},
      {"PHP", 59.083},
      {"SGD", 1.5349},
      {"THB", 36.012},
      {"ZAR", 16.0583},
  };
  return rates;
}

// Nanos per unit in the Money message.
constexpr int64_t kNanosPerUnit = 1000000000;

// Amounts are rounded to this many nanos (one hundredth of a cent) after conversion, so
// repeated conversions do not accumulate binary floating-point noise.
constexpr int64_t kRoundingNanos = 100000;

inline bool IsSupported(const std::string& code) {
  return EurRates().count(code) == 1;
}

// Splits a decimal amount into whole units and nanos carrying the same sign.
inline void SplitAmount(double amount, int64_t* units, int32_t* nanos) {
  int64_t total_nanos = static_cast<int64_t>(amount * kNanosPerUnit + (amount >= 0 ? 0.5 : -0.5));
  total_nanos = (total_nanos / kRoundingNanos) * kRoundingNanos;
  *units = total_nanos / kNanosPerUnit;
  *nanos = static_cast<int32_t>(total_nanos % kNanosPerUnit);
}

inline double JoinAmount(int64_t units, int32_t nanos) {
  return static_cast<double>(units) + static_cast<double>(nanos) / kNanosPerUnit;
}

}  // namespace currency
