using System;
using System.Threading.Tasks;
using Grpc.Core;
using Grpc.Health.V1;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using cartservice.cartstore;
using cartservice.services;

namespace cartservice
{
    public class Program
    {
        // The Deployment sets no PORT; the container port and the Service port are 7070.
        public const string DefaultPort = "7070";

        public static void Main(string[] args)
        {
            CreateHostBuilder(args).Build().Run();
        }

        public static IHostBuilder CreateHostBuilder(string[] args) =>
            Host.CreateDefaultBuilder(args)
                .ConfigureWebHostDefaults(webBuilder =>
                {
                    var port = Environment.GetEnvironmentVariable("PORT") ?? DefaultPort;
                    webBuilder.ConfigureKestrel(options =>
                    {
                        // gRPC without TLS needs HTTP/2 only on the listening port.
                        options.ListenAnyIP(int.Parse(port), listen => listen.Protocols = HttpProtocols.Http2);
                    });
                    webBuilder.UseStartup<Startup>();
                });
    }

    public class Startup
    {
        public Startup(IConfiguration configuration)
        {
            Configuration = configuration;
        }

        public IConfiguration Configuration { get; }

        public void ConfigureServices(IServiceCollection services)
        {
            // REDIS_ADDR is host:port of the cart store, "redis-cart:6379" in the manifest.
            string redisAddress = Configuration["REDIS_ADDR"];
            if (string.IsNullOrEmpty(redisAddress))
            {
                throw new InvalidOperationException(
                    "REDIS_ADDR is not set: cartservice has no other place to keep carts");
            }

            services.AddSingleton<ICartStore>(sp =>
                new RedisCartStore(redisAddress, sp.GetRequiredService<ILogger<RedisCartStore>>()));
            services.AddGrpc(options =>
            {
                options.EnableDetailedErrors = false;
                options.MaxReceiveMessageSize = 1 * 1024 * 1024;
            });
        }

        public void Configure(IApplicationBuilder app, IWebHostEnvironment env, ICartStore cartStore)
        {
            // Connect eagerly so a missing Redis shows up in the first readiness probes.
            cartStore.InitializeAsync().GetAwaiter().GetResult();

            app.UseRouting();
            app.UseEndpoints(endpoints =>
            {
                endpoints.MapGrpcService<CartService>();
                endpoints.MapGrpcService<HealthCheckService>();
                endpoints.MapGet("/", async context =>
                {
                    await context.Response.WriteAsync(
                        "Communication with gRPC endpoints must be made through a gRPC client.");
                });
            });
        }
    }

    /// <summary>
    /// grpc.health.v1 for the kubelet's gRPC readiness and liveness probes (port 7070):
    /// SERVING only while Redis answers a PING.
    /// </summary>
    public class HealthCheckService : Health.HealthBase
    {
        private readonly ICartStore _cartStore;
        private readonly ILogger<HealthCheckService> _logger;

        public HealthCheckService(ICartStore cartStore, ILogger<HealthCheckService> logger)
        {
            _cartStore = cartStore;
            _logger = logger;
        }

        public override Task<HealthCheckResponse> Check(HealthCheckRequest request, ServerCallContext context)
        {
            var serving = _cartStore.Ping();
            if (!serving)
            {
                _logger.LogWarning("health check: cart store is not reachable");
            }
            return Task.FromResult(new HealthCheckResponse
            {
                Status = serving
                    ? HealthCheckResponse.Types.ServingStatus.Serving
                    : HealthCheckResponse.Types.ServingStatus.NotServing
            });
        }
    }
}
