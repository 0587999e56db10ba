// Carts in Valkey: one hash per user, field "cart" holding the serialized Cart message,
// expiring an hour after the last write.

using System;
using System.Linq;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;

namespace cart.cartstore;

public interface ICartStore
{
    Task AddItemAsync(string userId, string productId, int quantity);
    Task EmptyCartAsync(string userId);
    Task<Oteldemo.Cart> GetCartAsync(string userId);
    bool Ping();
}

public static class CartRules
{
    public const int MinQuantity = 1;
    // One line never holds more than this; adding beyond it is capped, not rejected.
    public const int MaxQuantityPerLine = 10;
    // Distinct products per cart; the catalog holds ten.
    public const int MaxLinesPerCart = 25;
    public const int MaxUserIdLength = 64;
    public static readonly TimeSpan CartTtl = TimeSpan.FromMinutes(60);

    private static readonly Regex ProductIdPattern = new("^[A-Z0-9]{10}$", RegexOptions.Compiled);

    public static bool IsValidProductId(string productId) =>
        !string.IsNullOrEmpty(productId) && ProductIdPattern.IsMatch(productId);
}

public class ValkeyCartStore : ICartStore
{
    private const string CartFieldName = "cart";
    private const int ConnectRetries = 30;

    private readonly ILogger _logger;
    private readonly ConfigurationOptions _options;
    private readonly object _locker = new();
    private volatile ConnectionMultiplexer _connection;
    private volatile bool _isConnected;

    public ValkeyCartStore(ILogger<ValkeyCartStore> logger, string valkeyAddress)
    {
        _logger = logger;
        // abortConnect=false lets the service start before valkey-cart is reachable; commands
        // then fail fast instead of hanging the gRPC call.
        _options = ConfigurationOptions.Parse($"{valkeyAddress},ssl=false,allowAdmin=true,abortConnect=false");
        _options.ConnectRetry = ConnectRetries;
        _options.ConnectTimeout = 2000;
        _options.SyncTimeout = 1000;
        _options.KeepAlive = 180;
    }

    private void EnsureConnected()
    {
        if (_isConnected)
        {
            return;
        }
        lock (_locker)
        {
            if (_isConnected)
            {
                return;
            }
            _logger.LogDebug("Connecting to Valkey at {Endpoints}", string.Join(",", _options.EndPoints));
            _connection = ConnectionMultiplexer.Connect(_options);
            if (_connection is null || !_connection.IsConnected)
            {
                throw new ApplicationException("Wasn't able to connect to valkey");
            }
            _connection.ConnectionRestored += (_, _) => _isConnected = true;
            _connection.ConnectionFailed += (_, _) => _isConnected = false;
            _isConnected = true;
        }
    }

    private IDatabase Db()
    {
        EnsureConnected();
        return _connection.GetDatabase();
    }

    public async Task AddItemAsync(string userId, string productId, int quantity)
    {
        try
        {
            var db = Db();
            var value = await db.HashGetAsync(userId, CartFieldName);
            var cart = value.IsNull ? new Oteldemo.Cart { UserId = userId } : Oteldemo.Cart.Parser.ParseFrom(value);

            var existing = cart.Items.SingleOrDefault(i => i.ProductId == productId);
            if (existing is null)
            {
                if (cart.Items.Count >= CartRules.MaxLinesPerCart)
                {
                    throw new RpcException(new Status(StatusCode.ResourceExhausted,
                        $"cart already holds {CartRules.MaxLinesPerCart} products"));
                }
                cart.Items.Add(new Oteldemo.CartItem { ProductId = productId, Quantity = quantity });
            }
            else
            {
                existing.Quantity = Math.Min(existing.Quantity + quantity, CartRules.MaxQuantityPerLine);
            }

            await db.HashSetAsync(userId, new[] { new HashEntry(CartFieldName, cart.ToByteArray()) });
            await db.KeyExpireAsync(userId, CartRules.CartTtl);
        }
        catch (RedisException ex)
        {
            throw new RpcException(new Status(StatusCode.FailedPrecondition,
                $"Can't access cart storage. {ex}"));
        }
    }

    public async Task EmptyCartAsync(string userId)
    {
        try
        {
            var db = Db();
            // An empty Cart message rather than DEL: the key keeps its TTL semantics.
            var empty = new Oteldemo.Cart { UserId = userId };
            await db.HashSetAsync(userId, new[] { new HashEntry(CartFieldName, empty.ToByteArray()) });
            await db.KeyExpireAsync(userId, CartRules.CartTtl);
        }
        catch (RedisException ex)
        {
            throw new RpcException(new Status(StatusCode.FailedPrecondition,
                $"Can't access cart storage. {ex}"));
        }
    }

    public async Task<Oteldemo.Cart> GetCartAsync(string userId)
    {
        try
        {
            var value = await Db().HashGetAsync(userId, CartFieldName);
            // A user without a cart gets an empty one, not an error.
            return value.IsNull ? new Oteldemo.Cart() : Oteldemo.Cart.Parser.ParseFrom(value);
        }
        catch (RedisException ex)
        {
            throw new RpcException(new Status(StatusCode.FailedPrecondition,
                $"Can't access cart storage. {ex}"));
        }
    }

    public bool Ping()
    {
        try
        {
            return Db().Ping() < TimeSpan.FromSeconds(1);
        }
        catch (Exception)
        {
            return false;
        }
    }
}

// The store cartFailure switches EmptyCart to: same code, an address that cannot resolve.
public class BadCartStore : ValkeyCartStore
{
    public const string BadAddress = "badhost:1234";

    public BadCartStore(ILogger<ValkeyCartStore> logger) : base(logger, BadAddress)
    {
    }
}
