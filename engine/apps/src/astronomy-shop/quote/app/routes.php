<?php
// Shipping quotes: POST /getquote {"numberOfItems": N} answers the cost in USD as a JSON
// number with two decimals. Called only by the shipping service.

declare(strict_types=1);

use OpenTelemetry\API\Globals;
use OpenTelemetry\API\Trace\Span;
use OpenTelemetry\API\Trace\StatusCode;
use Psr\Http\Message\ResponseInterface as Response;
use Psr\Http\Message\ServerRequestInterface as Request;
use Slim\App;

// Handling fee charged once per shipment, USD.
const HANDLING_FEE_USD = 4.50;
// Cost per item for the first PER_ITEM_TIER items, then the bulk rate.
const PER_ITEM_USD = 3.75;
const BULK_ITEM_USD = 2.25;
const PER_ITEM_TIER = 10;
// Orders ship in boxes of this many items; each box adds a packaging fee.
const ITEMS_PER_BOX = 12;
const BOX_FEE_USD = 1.20;
// Refuse absurd requests instead of quoting them.
const MAX_ITEMS_PER_QUOTE = 500;

/**
 * Cost of shipping $numberOfItems items, USD, rounded to cents.
 *
 * @throws InvalidArgumentException for a count below 1 or above MAX_ITEMS_PER_QUOTE.
 */
function calculateQuote(int $numberOfItems): float
{
    if ($numberOfItems < 1 || $numberOfItems > MAX_ITEMS_PER_QUOTE) {
        throw new InvalidArgumentException(
            sprintf('numberOfItems must be between 1 and %d, got %d', MAX_ITEMS_PER_QUOTE, $numberOfItems)
        );
    }

    $span = Span::getCurrent();
    $span->addEvent('Calculating quote', ['app.quote.items' => $numberOfItems]);

    $regular = min($numberOfItems, PER_ITEM_TIER);
    $bulk = max(0, $numberOfItems - PER_ITEM_TIER);
    $boxes = intdiv($numberOfItems + ITEMS_PER_BOX - 1, ITEMS_PER_BOX);

    // Work in cents so that the sum does not pick up binary rounding noise.
    $cents = (int) round(HANDLING_FEE_USD * 100)
        + $regular * (int) round(PER_ITEM_USD * 100)
        + $bulk * (int) round(BULK_ITEM_USD * 100)
        + $boxes * (int) round(BOX_FEE_USD * 100);
    $quote = $cents / 100;

    $span->setAttribute('app.quote.cost.total', $quote);
    $span->setAttribute('app.quote.boxes', $boxes);

    $counter = Globals::meterProvider()
        ->getMeter('quotes')
        ->createCounter('quotes', 'quotes', 'number of quotes calculated');
    $counter->add(1, ['number_of_items' => $numberOfItems]);

    return $quote;
}

return function (App $app) {
    $app->post('/getquote', function (Request $request, Response $response) {
        $span = Span::getCurrent();
        $span->addEvent('Received get quote request, processing it');

        $body = $request->getParsedBody();
        if (!is_array($body)) {
            $body = json_decode((string) $request->getBody(), true);
        }
        $raw = is_array($body) ? ($body['numberOfItems'] ?? null) : null;
        if (!is_int($raw) && !(is_string($raw) && ctype_digit($raw))) {
            $response->getBody()->write(json_encode(['error' => 'numberOfItems must be an integer']));
            return $response->withStatus(400)->withHeader('Content-Type', 'application/json');
        }

        try {
            $quote = calculateQuote((int) $raw);
        } catch (InvalidArgumentException $e) {
            $span->recordException($e);
            $response->getBody()->write(json_encode(['error' => $e->getMessage()]));
            return $response->withStatus(400)->withHeader('Content-Type', 'application/json');
        } catch (Throwable $e) {
            $span->recordException($e);
            $span->setStatus(StatusCode::STATUS_ERROR, $e->getMessage());
            return $response->withStatus(500);
        }

        $payload = json_encode(round($quote, 2), JSON_PRESERVE_ZERO_FRACTION);
        $response->getBody()->write($payload);
        $span->addEvent('Quote processed, response sent back', ['app.quote.cost.total' => $quote]);

        return $response->withHeader('Content-Type', 'application/json');
    });
};
