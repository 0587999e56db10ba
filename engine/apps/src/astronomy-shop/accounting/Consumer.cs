// Consumes the "orders" topic and books every order into PostgreSQL: one row per order,
// one per line item and one for its shipment, written in a single transaction.

using System;
using System.Linq;
using System.Threading;
using Confluent.Kafka;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Oteldemo;

namespace Accounting;

public sealed class Consumer : IDisposable
{
    private const string TopicName = "orders";
    private const string GroupId = "accounting";
    private const long NanosPerUnit = 1_000_000_000;

    private readonly ILogger _logger;
    private readonly IConsumer<string, byte[]> _consumer;
    private readonly DbContextOptions<AccountingContext> _dbOptions;
    private bool _isListening;
    private long _ordersBooked;

    public Consumer(ILogger<Consumer> logger, string kafkaAddress, string dbConnectionString)
    {
        _logger = logger;
        _consumer = new ConsumerBuilder<string, byte[]>(new ConsumerConfig
        {
            BootstrapServers = kafkaAddress,
            GroupId = GroupId,
            AutoOffsetReset = AutoOffsetReset.Earliest,
            // Offsets are committed only after the order is in the database.
            EnableAutoCommit = false,
            SessionTimeoutMs = 10000,
        }).Build();
        _dbOptions = new DbContextOptionsBuilder<AccountingContext>()
            .UseNpgsql(dbConnectionString)
            .Options;
        _logger.LogInformation("Connecting to Kafka: {Address}", kafkaAddress);
    }

    public void StartListening(CancellationToken cancellationToken)
    {
        _isListening = true;
        _consumer.Subscribe(TopicName);
        try
        {
            while (_isListening && !cancellationToken.IsCancellationRequested)
            {
                try
                {
                    var result = _consumer.Consume(cancellationToken);
                    if (result?.Message is null)
                    {
                        continue;
                    }
                    ProcessMessage(result.Message);
                    _consumer.Commit(result);
                }
                catch (ConsumeException e)
                {
                    _logger.LogError(e, "Consume error: {Reason}", e.Error.Reason);
                }
                catch (DbUpdateException e)
                {
                    // Not committed: the order is consumed again after the restart.
                    _logger.LogError(e, "Could not book order, database write failed");
                    throw;
                }
            }
        }
        catch (OperationCanceledException)
        {
            _logger.LogInformation("Closing consumer after {Count} orders", _ordersBooked);
            _consumer.Close();
        }
    }

    public void ProcessMessage(Message<string, byte[]> message)
    {
        var order = OrderResult.Parser.ParseFrom(message.Value);
        if (string.IsNullOrEmpty(order.OrderId))
        {
            _logger.LogWarning("Skipping an order without id at key {Key}", message.Key);
            return;
        }

        var total = order.Items.Sum(i => ToDecimal(i.Cost) * i.Item.Quantity) + ToDecimal(order.ShippingCost);
        var currency = order.ShippingCost?.CurrencyCode ?? order.Items.FirstOrDefault()?.Cost.CurrencyCode ?? "USD";
        _logger.LogInformation("Order details: {OrderId}, {Items} items, total {Total} {Currency}",
            order.OrderId, order.Items.Count, total, currency);

        using var db = new AccountingContext(_dbOptions);
        if (db.Orders.Any(o => o.Id == order.OrderId))
        {
            // Redelivery after a crash between the write and the commit: already booked.
            _logger.LogInformation("Order {OrderId} already booked, skipping", order.OrderId);
            return;
        }

        using var tx = db.Database.BeginTransaction();
        db.Orders.Add(new OrderEntity { Id = order.OrderId });
        foreach (var line in order.Items)
        {
            db.CartItems.Add(new OrderItemEntity
            {
                OrderId = order.OrderId,
                ProductId = line.Item.ProductId,
                Quantity = line.Item.Quantity,
                ItemCostCurrencyCode = line.Cost.CurrencyCode,
                ItemCostUnits = line.Cost.Units,
                ItemCostNanos = line.Cost.Nanos,
            });
        }
        db.Shipping.Add(new ShippingEntity
        {
            ShippingTrackingId = order.ShippingTrackingId,
            OrderId = order.OrderId,
            ShippingCostCurrencyCode = order.ShippingCost?.CurrencyCode ?? currency,
            ShippingCostUnits = order.ShippingCost?.Units ?? 0,
            ShippingCostNanos = order.ShippingCost?.Nanos ?? 0,
            StreetAddress = order.ShippingAddress?.StreetAddress ?? "",
            City = order.ShippingAddress?.City ?? "",
            State = order.ShippingAddress?.State ?? "",
            Country = order.ShippingAddress?.Country ?? "",
            ZipCode = order.ShippingAddress?.ZipCode ?? "",
        });
        db.SaveChanges();
        tx.Commit();
        _ordersBooked++;
    }

    private static decimal ToDecimal(Money money) =>
        money is null ? 0m : money.Units + (decimal)money.Nanos / NanosPerUnit;

    public void Dispose()
    {
        _isListening = false;
        _consumer?.Dispose();
    }
}
