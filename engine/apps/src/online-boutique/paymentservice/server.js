/*
 * paymentservice: hipstershop.PaymentService over gRPC. Charge validates the card
 * (charge.js) and returns a transaction id; card problems are INVALID_ARGUMENT, which
 * checkoutservice turns into a failed order.
 */
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const pino = require('pino');

const charge = require('./charge');

const MAIN_PROTO_PATH = path.join(__dirname, './proto/demo.proto');
const HEALTH_PROTO_PATH = path.join(__dirname, './proto/grpc/health/v1/health.proto');

const PORT = process.env.PORT || '50051';

// A charge that takes longer than this is logged: the checkout is waiting on it.
const SLOW_CHARGE_MS = 500;

const logger = pino({
  name: 'paymentservice-server',
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

class HipsterShopServer {
  constructor (protoRoot, port = PORT) {
    this.port = port;
    this.packages = {
      hipsterShop: loadProto(path.join(protoRoot, 'demo.proto')),
      health: loadProto(path.join(protoRoot, 'grpc/health/v1/health.proto'))
    };
    this.server = new grpc.Server();
    this.loadAllProtos();
  }

  /**
   * Handler for PaymentService.Charge.
   * @param {*} call  { request: { amount, credit_card } }
   * @param {*} callback  fn(err, ChargeResponse)
   */
  static chargeServiceHandler (call, callback) {
    const started = Date.now();
    try {
      const amount = call.request.amount || {};
      logger.info(`PaymentService#Charge invoked with request ${amount.currency_code} ${amount.units}.${amount.nanos}`);
      const response = charge(call.request);
      const took = Date.now() - started;
      if (took > SLOW_CHARGE_MS) {
        logger.warn(`slow charge: ${took} ms`);
      }
      callback(null, response);
    } catch (err) {
      logger.warn(err.message);
      const code = err instanceof charge.CreditCardError
        ? grpc.status.INVALID_ARGUMENT
        : grpc.status.INTERNAL;
      callback({ code, message: err.message });
    }
  }

  static checkHandler (call, callback) {
    callback(null, { status: 'SERVING' });
  }

  listen () {
    const server = this.server;
    const port = this.port;
    server.bindAsync(
      `[::]:${port}`,
      grpc.ServerCredentials.createInsecure(),
      function (err) {
        if (err) {
          logger.error(`failed to bind on ${port}: ${err.message}`);
          process.exit(1);
        }
        logger.info(`PaymentService gRPC server started on port ${port}`);
        server.start();
      }
    );
  }

  loadAllProtos () {
    const hipsterShopPackage = this.packages.hipsterShop.hipstershop;
    const healthPackage = this.packages.health.grpc.health.v1;

    this.server.addService(
      hipsterShopPackage.PaymentService.service,
      { charge: HipsterShopServer.chargeServiceHandler.bind(this) }
    );
    this.server.addService(
      healthPackage.Health.service,
      { check: HipsterShopServer.checkHandler.bind(this) }
    );
  }
}

logger.info(`main proto ${MAIN_PROTO_PATH}, health proto ${HEALTH_PROTO_PATH}`);
const server = new HipsterShopServer(path.dirname(MAIN_PROTO_PATH), PORT);
server.listen();

process.on('SIGTERM', () => {
  logger.info('SIGTERM received, draining');
  server.server.tryShutdown(() => process.exit(0));
});
