using System;
using System.Threading.Tasks;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;
using Hipstershop;

namespace cartservice.cartstore
{
    public interface ICartStore
    {
        Task InitializeAsync();
        Task<Cart> GetCartAsync(string userId);
        Task SaveCartAsync(Cart cart);
        Task EmptyCartAsync(string userId);
        bool Ping();
    }

    /// <summary>
    /// Keeps each cart in Redis. Layout: one hash per user, key = the user id (the
    /// frontend's session id), field "cart" = the serialized hipstershop.Cart message.
    /// GetCart is one HGET, AddItem is HGET then HSET, EmptyCart is DEL.
    /// The store runs on an emptyDir volume: a restarted redis-cart pod has no carts.
    /// </summary>
    public class RedisCartStore : ICartStore
    {
        public const string CartFieldName = "cart";

        private const int ConnectRetries = 5;
        private const int ConnectTimeoutMs = 5000;
        private const int SyncTimeoutMs = 1000;

        private readonly string _connectionString;
        private readonly ILogger<RedisCartStore> _logger;
        private volatile ConnectionMultiplexer _redis;
        private readonly object _lock = new object();

        public RedisCartStore(string redisAddress, ILogger<RedisCartStore> logger)
        {
            if (string.IsNullOrEmpty(redisAddress))
            {
                throw new ArgumentException("redis address is required", nameof(redisAddress));
            }
            // abortConnect=false keeps retrying in the background instead of failing start-up.
            _connectionString = $"{redisAddress},ssl=false,allowAdmin=false,abortConnect=false," +
                                $"connectRetry={ConnectRetries},connectTimeout={ConnectTimeoutMs},syncTimeout={SyncTimeoutMs}";
            _logger = logger;
        }

        public Task InitializeAsync()
        {
            EnsureConnected();
            return Task.CompletedTask;
        }

        private IDatabase Database
        {
            get
            {
                EnsureConnected();
                return _redis.GetDatabase();
            }
        }

        private void EnsureConnected()
        {
            if (_redis != null && _redis.IsConnected)
            {
                return;
            }
            lock (_lock)
            {
                if (_redis != null && _redis.IsConnected)
                {
                    return;
                }
                _logger.LogInformation("Connecting to Redis: {ConnectionString}", _connectionString);
                _redis?.Dispose();
                _redis = ConnectionMultiplexer.Connect(_connectionString);
                _redis.ConnectionRestored += (_, e) => _logger.LogInformation("Redis connection restored: {Endpoint}", e.EndPoint);
                _redis.ConnectionFailed += (_, e) => _logger.LogWarning("Redis connection failed: {Failure}", e.FailureType);
            }
        }

        public async Task<Cart> GetCartAsync(string userId)
        {
            try
            {
                // HGET <userId> cart
                var value = await Database.HashGetAsync(userId, CartFieldName);
                if (value.IsNull)
                {
                    return new Cart { UserId = userId };
                }
                return Cart.Parser.ParseFrom((byte[])value);
            }
            catch (RedisException ex)
            {
                throw new RpcException(new Status(StatusCode.FailedPrecondition,
                    $"Can't access cart storage. {ex.Message}"));
            }
        }

        public async Task SaveCartAsync(Cart cart)
        {
            try
            {
                // HSET <userId> cart <bytes>. Carts carry no TTL: they live until checkout
                // empties them or the redis-cart pod is replaced.
                await Database.HashSetAsync(cart.UserId, new[] { new HashEntry(CartFieldName, cart.ToByteArray()) });
            }
            catch (RedisException ex)
            {
                throw new RpcException(new Status(StatusCode.FailedPrecondition,
                    $"Can't access cart storage. {ex.Message}"));
            }
        }

        public async Task EmptyCartAsync(string userId)
        {
            try
            {
                // DEL <userId>
                await Database.KeyDeleteAsync(userId);
            }
            catch (RedisException ex)
            {
                throw new RpcException(new Status(StatusCode.FailedPrecondition,
                    $"Can't access cart storage. {ex.Message}"));
            }
        }

        public bool Ping()
        {
            try
            {
                var latency = Database.Ping();
                return latency < TimeSpan.FromMilliseconds(SyncTimeoutMs);
            }
            catch (RedisException)
            {
                return false;
            }
        }
    }
}
