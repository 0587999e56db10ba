// Payment service: gRPC PaymentService/Charge on PAYMENT_PORT, flags from flagd at
// FLAGD_HOST:FLAGD_PORT.

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const health = require('grpc-js-health-check');
const { OpenFeature } = require('@openfeature/server-sdk');
const { FlagdProvider } = require('@openfeature/flagd-provider');
const { trace, SpanStatusCode } = require('@opentelemetry/api');

const charge = require('./charge');
const logger = require('pino')({ name: 'payment', messageKey: 'message', formatters: { level: label => ({ severity: label }) } });

const PROTO_PATH = 'demo.proto';

function requiredEnv(name) {
  const value = process.env[name];
  if (!value) {
    logger.fatal(`${name} environment variable is required`);
    process.exit(1);
  }
  return value;
}

const port = requiredEnv('PAYMENT_PORT');

OpenFeature.setProvider(
  new FlagdProvider({
    host: process.env.FLAGD_HOST || 'localhost',
    port: Number(process.env.FLAGD_PORT || 8013),
    // Flag lookups must not eat the checkout deadline.
    deadlineMs: 500,
  })
);

// A failed charge answers INVALID_ARGUMENT for card problems and INTERNAL otherwise, so
// checkout can tell a bad card from a broken payment service.
function toGrpcError(err) {
  const code = err.code === 400 ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
  return { code, message: err.message };
}

async function chargeServiceHandler(call, callback) {
  const span = trace.getActiveSpan();
  try {
    const amount = call.request.amount;
    span?.setAttributes({
      'app.payment.amount': parseFloat(`${amount.units}.${String(amount.nanos).padStart(9, '0')}`),
    });
    logger.info({ request: { amount } }, 'Charge request received.');

    const response = await charge.charge(call.request);
    callback(null, response);
  } catch (err) {
    logger.warn({ err }, 'charge failed');
    span?.recordException(err);
    span?.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    callback(toGrpcError(err));
  }
}

const healthStatus = {
  '': health.servingStatus.SERVING,
  'oteldemo.PaymentService': health.servingStatus.SERVING,
};

async function closeGracefully(signal) {
  logger.info(`received ${signal}, draining`);
  healthStatus['oteldemo.PaymentService'] = health.servingStatus.NOT_SERVING;
  server.tryShutdown(() => {
    OpenFeature.close().finally(() => process.exit(0));
  });
}

const packageDefinition = protoLoader.loadSync(PROTO_PATH, {
  keepCase: false,
  longs: String,
  defaults: true,
  oneofs: true,
});
const otelDemoPackage = grpc.loadPackageDefinition(packageDefinition).oteldemo;

const server = new grpc.Server();
server.addService(health.service, new health.Implementation(healthStatus));
server.addService(otelDemoPackage.PaymentService.service, { charge: chargeServiceHandler });

server.bindAsync(`0.0.0.0:${port}`, grpc.ServerCredentials.createInsecure(), (err, boundPort) => {
  if (err) {
    return logger.error({ err });
  }
  logger.info(`payment gRPC server started on port ${boundPort}`);
});

process.once('SIGINT', closeGracefully);
process.once('SIGTERM', closeGracefully);
