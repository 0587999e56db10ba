// Currency service: converts Money between the currencies of currency_rates.h and lists
// them. Stateless and the busiest leaf of the shop: every product price shown in a currency
// other than USD and every checkout line passes through Convert.

#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "currency_rates.h"
#include "demo.grpc.pb.h"
#include "logger_common.h"

using grpc::Server;
using grpc::ServerBuilder;
using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;

using oteldemo::CurrencyConversionRequest;
using oteldemo::CurrencyService;
using oteldemo::Empty;
using oteldemo::GetSupportedCurrenciesResponse;
using oteldemo::Money;

namespace {

std::string version = "unknown";

// Money from demo.proto: nanos within (-1e9, 1e9) and with the sign of units.
bool IsValidMoney(const Money& m) {
  if (m.nanos() <= -currency::kNanosPerUnit || m.nanos() >= currency::kNanosPerUnit) {
    return false;
  }
  if (m.units() > 0 && m.nanos() < 0) return false;
  if (m.units() < 0 && m.nanos() > 0) return false;
  return true;
}

class CurrencyServiceImpl final : public CurrencyService::Service {
 public:
  Status GetSupportedCurrencies(ServerContext* context, const Empty* request,
                                GetSupportedCurrenciesResponse* response) override {
    for (const auto& [code, rate] : currency::EurRates()) {
      response->add_currency_codes(code);
    }
    logger::Info("get supported currencies: " + std::to_string(response->currency_codes_size()) + " codes");
    return Status::OK;
  }

  Status Convert(ServerContext* context, const CurrencyConversionRequest* request, Money* response) override {
    const Money& from = request->from();
    const std::string& from_code = from.currency_code();
    const std::string& to_code = request->to_code();

    if (!currency::IsSupported(from_code)) {
      return Status(StatusCode::INVALID_ARGUMENT, "unsupported source currency " + from_code);
    }
    if (!currency::IsSupported(to_code)) {
      return Status(StatusCode::INVALID_ARGUMENT, "unsupported target currency " + to_code);
    }
    if (!IsValidMoney(from)) {
      std::ostringstream msg;
      msg << "invalid amount units=" << from.units() << " nanos=" << from.nanos();
      return Status(StatusCode::INVALID_ARGUMENT, msg.str());
    }

    if (from_code == to_code) {
      *response = from;
      return Status::OK;
    }

    // Through EUR: divide by the source rate, multiply by the target rate.
    const auto& rates = currency::EurRates();
    double amount = currency::JoinAmount(from.units(), from.nanos());
    double euros = amount / rates.at(from_code);
    double converted = euros * rates.at(to_code);

    int64_t units = 0;
    int32_t nanos = 0;
    currency::SplitAmount(converted, &units, &nanos);

    response->set_currency_code(to_code);
    response->set_units(units);
    response->set_nanos(nanos);

    std::ostringstream log;
    log << "conversion request successful: " << amount << " " << from_code << " -> " << converted << " " << to_code;
    logger::Info(log.str());
    return Status::OK;
  }
};

void RunServer(uint16_t port) {
  std::string address = "0.0.0.0:" + std::to_string(port);
  CurrencyServiceImpl service;

  grpc::EnableDefaultHealthCheckService(true);
  ServerBuilder builder;
  builder.RegisterService(&service);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());

  std::unique_ptr<Server> server(builder.BuildAndStart());
  if (!server) {
    logger::Error("failed to listen on " + address);
    std::exit(1);
  }
  server->GetHealthCheckService()->SetServingStatus("oteldemo.CurrencyService", true);
  logger::Info("Currency Server (version " + version + ") listening on " + address);
  server->Wait();
}

}  // namespace

int main(int argc, char** argv) {
  const char* port_env = std::getenv("CURRENCY_PORT");
  if (port_env == nullptr) {
    std::cerr << "CURRENCY_PORT environment variable is required" << std::endl;
    return 1;
  }
  if (const char* v = std::getenv("VERSION")) {
    version = v;
  }
  long port = std::strtol(port_env, nullptr, 10);
  if (port <= 0 || port > 65535) {
    std::cerr << "CURRENCY_PORT must be a TCP port, got " << port_env << std::endl;
    return 1;
  }
  RunServer(static_cast<uint16_t>(port));
  return 0;
}
