<?php
// Quote service entry point: a Slim application served by the ReactPHP HTTP server on
// QUOTE_PORT. OpenTelemetry auto-loading (OTEL_PHP_AUTOLOAD_ENABLED=true) instruments
// Slim and exports to OTEL_EXPORTER_OTLP_ENDPOINT.

declare(strict_types=1);

use DI\ContainerBuilder;
use Monolog\Handler\StreamHandler;
use Monolog\Level;
use Monolog\Logger;
use Psr\Container\ContainerInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Log\LoggerInterface;
use React\EventLoop\Loop;
use React\Http\HttpServer;
use React\Socket\SocketServer;
use Slim\Factory\AppFactory;

require __DIR__ . '/../vendor/autoload.php';

$port = getenv('QUOTE_PORT');
if ($port === false || !ctype_digit($port)) {
    fwrite(STDERR, "QUOTE_PORT environment variable is required and must be a port number\n");
    exit(1);
}

$containerBuilder = new ContainerBuilder();
$containerBuilder->addDefinitions([
    LoggerInterface::class => function (ContainerInterface $c) {
        $logger = new Logger('quote');
        $logger->pushHandler(new StreamHandler('php://stdout', Level::Info));
        return $logger;
    },
]);
$container = $containerBuilder->build();

AppFactory::setContainer($container);
$app = AppFactory::create();

// JSON bodies arrive as application/json from the shipping service.
$app->addBodyParsingMiddleware();
$app->addRoutingMiddleware();

// Errors are logged and answered as 500; details go to the log, not to the caller.
$logger = $container->get(LoggerInterface::class);
$errorMiddleware = $app->addErrorMiddleware(false, true, true, $logger);

$routes = require __DIR__ . '/../app/routes.php';
$routes($app);

$app->get('/health', function ($request, $response) {
    $response->getBody()->write('ok');
    return $response;
});

$server = new HttpServer(function (ServerRequestInterface $request) use ($app, $logger) {
    $start = microtime(true);
    $response = $app->handle($request);
    $logger->info(sprintf(
        '%s %s %d %.1fms',
        $request->getMethod(),
        $request->getUri()->getPath(),
        $response->getStatusCode(),
        (microtime(true) - $start) * 1000
    ));
    return $response;
});

$address = '0.0.0.0:' . $port;
$socket = new SocketServer($address);
$server->listen($socket);

$logger->info('Quote service listening on ' . $address);

Loop::addSignal(SIGTERM, function () use ($socket, $logger) {
    $logger->info('SIGTERM received, closing the listener');
    $socket->close();
    Loop::stop();
});

Loop::run();
