// Cart service host: Kestrel serving gRPC on CART_PORT (ASPNETCORE_URLS), the Valkey store
// at VALKEY_ADDR, and the flagd provider at FLAGD_HOST:FLAGD_PORT.

using System;
using System.Threading;
using System.Threading.Tasks;
using cart.cartstore;
using cart.services;
using Grpc.Health.V1;
using Grpc.HealthCheck;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Logging;
using OpenFeature;
using OpenFeature.Contrib.Providers.Flagd;

var builder = WebApplication.CreateBuilder(args);

string valkeyAddress = builder.Configuration["VALKEY_ADDR"];
if (string.IsNullOrEmpty(valkeyAddress))
{
    Console.WriteLine("VALKEY_ADDR environment variable is required.");
    Environment.Exit(1);
}

string flagdHost = builder.Configuration["FLAGD_HOST"] ?? "localhost";
int flagdPort = int.TryParse(builder.Configuration["FLAGD_PORT"], out var port) ? port : 8013;

builder.Logging
    .AddConsole()
    .SetMinimumLevel(LogLevel.Information);

builder.Services.AddSingleton<ICartStore>(sp =>
{
    var store = new ValkeyCartStore(sp.GetRequiredService<ILogger<ValkeyCartStore>>(), valkeyAddress);
    return store;
});
builder.Services.AddSingleton(sp => new BadCartStore(sp.GetRequiredService<ILogger<ValkeyCartStore>>()));

builder.Services.AddOpenFeature(featureBuilder =>
{
    featureBuilder.AddProvider(_ => new FlagdProvider(new FlagdConfig
    {
        Host = flagdHost,
        Port = flagdPort,
        // Keep flag lookups well inside the caller's deadline.
        DeadlineMs = 500,
    }));
});
builder.Services.AddSingleton(sp => sp.GetRequiredService<IFeatureClient>());

builder.Services.AddGrpc();
builder.Services.AddGrpcHealthChecks()
    .AddCheck<CartStoreHealthCheck>("oteldemo.CartService", tags: new[] { "ready" });

var app = builder.Build();

var store = app.Services.GetRequiredService<ICartStore>();
if (!store.Ping())
{
    app.Logger.LogWarning("Valkey at {Address} is not answering yet; carts fail until it does", valkeyAddress);
}

app.MapGrpcService<CartService>();
app.MapGrpcHealthChecksService();

app.MapGet("/", async context =>
{
    await context.Response.WriteAsync(
        "Communication with gRPC endpoints must be made through a gRPC client.");
});

app.Logger.LogInformation("Cart service listening on {Urls}, Valkey {Valkey}, flagd {FlagdHost}:{FlagdPort}",
    builder.Configuration["ASPNETCORE_URLS"], valkeyAddress, flagdHost, flagdPort);

app.Run();

// Health follows the store: a cart service without Valkey cannot serve anything.
internal sealed class CartStoreHealthCheck : IHealthCheck
{
    private readonly ICartStore _store;

    public CartStoreHealthCheck(ICartStore store) => _store = store;

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context,
        CancellationToken cancellationToken = default) =>
        Task.FromResult(_store.Ping()
            ? HealthCheckResult.Healthy()
            : HealthCheckResult.Unhealthy("valkey-cart is not answering"));
}
