using System;
using System.Linq;
using System.Threading.Tasks;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using cartservice.cartstore;
using Hipstershop;

namespace cartservice.services
{
    /// <summary>
    /// gRPC implementation of hipstershop.CartService. Validates requests and delegates
    /// storage to an <see cref="ICartStore"/> (Redis in the cluster).
    /// </summary>
    public class CartService : Hipstershop.CartService.CartServiceBase
    {
        // Quantities accepted in one AddItem call: the product page offers 1 to 10.
        public const int MinQuantityPerAdd = 1;
        public const int MaxQuantityPerAdd = 10;

        // A cart line never grows past this many units, whatever the number of adds.
        public const int MaxQuantityPerLine = 1000;

        // A cart holds at most this many distinct products.
        public const int MaxLinesPerCart = 50;

        // Product ids in the catalog are 10 upper-case letters and digits, e.g. OLJCESPC7Z.
        public const int ProductIdLength = 10;

        private static readonly Empty EmptyResponse = new Empty();

        private readonly ICartStore _cartStore;
        private readonly ILogger<CartService> _logger;

        public CartService(ICartStore cartStore, ILogger<CartService> logger)
        {
            _cartStore = cartStore;
            _logger = logger;
        }

        public override async Task<Empty> AddItem(AddItemRequest request, ServerCallContext context)
        {
            ValidateUserId(request.UserId);
            var item = request.Item ?? throw new RpcException(
                new Status(StatusCode.InvalidArgument, "item is required"));
            ValidateProductId(item.ProductId);

            if (item.Quantity < MinQuantityPerAdd || item.Quantity > MaxQuantityPerAdd)
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument,
                    $"quantity must be between {MinQuantityPerAdd} and {MaxQuantityPerAdd}, got {item.Quantity}"));
            }

            var cart = await _cartStore.GetCartAsync(request.UserId);
            var line = cart.Items.SingleOrDefault(i => i.ProductId == item.ProductId);
            if (line == null)
            {
                if (cart.Items.Count >= MaxLinesPerCart)
                {
                    throw new RpcException(new Status(StatusCode.FailedPrecondition,
                        $"cart of {request.UserId} already holds {MaxLinesPerCart} products"));
                }
                cart.Items.Add(new CartItem { ProductId = item.ProductId, Quantity = item.Quantity });
            }
            else
            {
                var merged = line.Quantity + item.Quantity;
                if (merged > MaxQuantityPerLine)
                {
                    throw new RpcException(new Status(StatusCode.FailedPrecondition,
                        $"quantity of {item.ProductId} would reach {merged}, limit is {MaxQuantityPerLine}"));
                }
                line.Quantity = merged;
            }

            await _cartStore.SaveCartAsync(cart);
            _logger.LogInformation("AddItem user={UserId} product={ProductId} quantity={Quantity} lines={Lines}",
                request.UserId, item.ProductId, item.Quantity, cart.Items.Count);
            return EmptyResponse;
        }

        public override async Task<Cart> GetCart(GetCartRequest request, ServerCallContext context)
        {
            ValidateUserId(request.UserId);
            var cart = await _cartStore.GetCartAsync(request.UserId);

            // Lines left at zero by an older client are not shown.
            var visible = new Cart { UserId = cart.UserId };
            visible.Items.AddRange(cart.Items.Where(i => i.Quantity > 0));
            return visible;
        }

        public override async Task<Empty> EmptyCart(EmptyCartRequest request, ServerCallContext context)
        {
            ValidateUserId(request.UserId);
            await _cartStore.EmptyCartAsync(request.UserId);
            _logger.LogInformation("EmptyCart user={UserId}", request.UserId);
            return EmptyResponse;
        }

        private static void ValidateUserId(string userId)
        {
            if (string.IsNullOrWhiteSpace(userId))
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument, "user_id is required"));
            }
        }

        private static void ValidateProductId(string productId)
        {
            if (string.IsNullOrEmpty(productId) || productId.Length != ProductIdLength ||
                !productId.All(c => char.IsDigit(c) || (c >= 'A' && c <= 'Z')))
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument,
                    $"malformed product_id {productId}"));
            }
        }
    }
}
