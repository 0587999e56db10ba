// Accounting worker: no listening port, just a Kafka consumer (KAFKA_ADDR) writing to
// PostgreSQL (DB_CONNECTION_STRING). The pod's init container waits for kafka:9092.

using System;
using System.Threading;
using System.Threading.Tasks;
using Accounting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

var builder = Host.CreateApplicationBuilder(args);

string kafkaAddress = builder.Configuration["KAFKA_ADDR"];
if (string.IsNullOrEmpty(kafkaAddress))
{
    Console.Error.WriteLine("KAFKA_ADDR environment variable is required.");
    return 1;
}
string dbConnectionString = builder.Configuration["DB_CONNECTION_STRING"];
if (string.IsNullOrEmpty(dbConnectionString))
{
    Console.Error.WriteLine("DB_CONNECTION_STRING environment variable is required.");
    return 1;
}

builder.Logging.ClearProviders().AddConsole();
builder.Services.AddSingleton(sp =>
    new Consumer(sp.GetRequiredService<ILogger<Consumer>>(), kafkaAddress, dbConnectionString));
builder.Services.AddHostedService<ConsumerWorker>();

using var host = builder.Build();
await host.RunAsync();
return 0;

// Runs the blocking consume loop on its own thread so that shutdown signals still reach
// the host; a fatal database error stops the process and Kubernetes restarts it.
internal sealed class ConsumerWorker : BackgroundService
{
    private readonly Consumer _consumer;
    private readonly IHostApplicationLifetime _lifetime;
    private readonly ILogger<ConsumerWorker> _logger;

    public ConsumerWorker(Consumer consumer, IHostApplicationLifetime lifetime, ILogger<ConsumerWorker> logger)
    {
        _consumer = consumer;
        _lifetime = lifetime;
        _logger = logger;
    }

    protected override Task ExecuteAsync(CancellationToken stoppingToken) =>
        Task.Factory.StartNew(() =>
        {
            try
            {
                _consumer.StartListening(stoppingToken);
            }
            catch (Exception e)
            {
                _logger.LogCritical(e, "Accounting consumer stopped");
                Environment.ExitCode = 1;
                _lifetime.StopApplication();
            }
        }, stoppingToken, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
