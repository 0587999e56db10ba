/*
 * currencyservice: hipstershop.CurrencyService over gRPC. Rates are European Central
 * Bank reference rates against EUR, read from data/currency_conversion.json.
 * It is the busiest service of the shop: the home page alone converts every product.
 */
'use strict';

const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const pino = require('pino');

const money = require('./money');

const MAIN_PROTO_PATH = path.join(__dirname, './proto/demo.proto');
const HEALTH_PROTO_PATH = path.join(__dirname, './proto/grpc/health/v1/health.proto');
const RATES_PATH = path.join(__dirname, './data/currency_conversion.json');

const PORT = process.env.PORT || '7000';

const logger = pino({
  name: 'currencyservice-server',
  messageKey: 'message',
  formatters: {
    level (logLevelString) {
      return { severity: logLevelString };
    }
  }
});

if (process.env.DISABLE_PROFILER) {
  logger.info('Profiler disabled.');
} else {
  logger.info('Profiler enabled.');
}

function loadProto (protoPath) {
  const packageDefinition = protoLoader.loadSync(protoPath, {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true
  });
  return grpc.loadPackageDefinition(packageDefinition);
}

const shopProto = loadProto(MAIN_PROTO_PATH).hipstershop;
const healthProto = loadProto(HEALTH_PROTO_PATH).grpc.health.v1;

let rates = null;

/** Reads and parses the rate table once; later calls reuse it. */
function getCurrencyData () {
  if (rates === null) {
    const raw = JSON.parse(fs.readFileSync(RATES_PATH, 'utf8'));
    rates = money.parseRates(raw);
    logger.info(`loaded ${Object.keys(rates).length} conversion rates`);
  }
  return rates;
}

/**
 * GetSupportedCurrencies: the ISO codes of the rate table, sorted so that callers get a
 * stable list.
 */
function getSupportedCurrencies (call, callback) {
  logger.info('Getting supported currencies...');
  try {
    const data = getCurrencyData();
    callback(null, { currency_codes: Object.keys(data).sort() });
  } catch (err) {
    logger.error(`conversion table unavailable: ${err.message}`);
    callback({ code: grpc.status.INTERNAL, message: err.message });
  }
}

/**
 * Convert: converts request.from into request.to_code (see money.convertVia).
 */
function convert (call, callback) {
  const request = call.request;
  try {
    money.validate(request.from, 'from');
    if (!/^[A-Z]{3}$/.test(request.to_code || '')) {
      throw new money.MoneyError(`to_code "${request.to_code}" is not an ISO 4217 code`);
    }
    const data = getCurrencyData();
    const result = money.convertVia(data, request.from, request.to_code);
    logger.info(`conversion request successful: ${request.from.currency_code} -> ${request.to_code}`);
    callback(null, result);
  } catch (err) {
    logger.error(`conversion request failed: ${err.message}`);
    const code = err instanceof money.MoneyError ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
    callback({ code, message: err.message });
  }
}

/** grpc.health.v1 Check for the kubelet's gRPC probes on port 7000. */
function check (call, callback) {
  try {
    getCurrencyData();
    callback(null, { status: 'SERVING' });
  } catch (err) {
    callback(null, { status: 'NOT_SERVING' });
  }
}

function main () {
  logger.info(`Starting gRPC server on port ${PORT}...`);
  const server = new grpc.Server();
  server.addService(shopProto.CurrencyService.service, { getSupportedCurrencies, convert });
  server.addService(healthProto.Health.service, { check });

  server.bindAsync(
    `[::]:${PORT}`,
    grpc.ServerCredentials.createInsecure(),
    function (err, port) {
      if (err) {
        logger.error(`failed to bind on ${PORT}: ${err.message}`);
        process.exit(1);
      }
      logger.info(`CurrencyService gRPC server started on port ${port}`);
      server.start();
    }
  );

  process.on('SIGTERM', () => {
    logger.info('SIGTERM received, draining');
    server.tryShutdown(() => process.exit(0));
  });
}

main();
