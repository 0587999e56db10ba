// gRPC CartService: GetCart, AddItem and EmptyCart over a Valkey-backed store.

using System;
using System.Diagnostics;
using System.Threading.Tasks;
using cart.cartstore;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using OpenFeature;
using Oteldemo;

namespace cart.services;

public class CartService : Oteldemo.CartService.CartServiceBase
{
    // Flag key as in demo.flagd.json.
    internal const string CartFailureFlag = "cartFailure";

    private static readonly Empty EmptyResponse = new();
    private static readonly ActivitySource ActivitySource = new("OpenTelemetry.Demo.Cart");

    private readonly ICartStore _cartStore;
    private readonly ICartStore _badCartStore;
    private readonly IFeatureClient _featureFlagHelper;
    private readonly ILogger<CartService> _logger;

    public CartService(ICartStore cartStore, BadCartStore badCartStore, IFeatureClient featureFlagService,
        ILogger<CartService> logger)
    {
        _cartStore = cartStore;
        _badCartStore = badCartStore;
        _featureFlagHelper = featureFlagService;
        _logger = logger;
    }

    public override async Task<Empty> AddItem(AddItemRequest request, ServerCallContext context)
    {
        var activity = Activity.Current;
        activity?.SetTag("app.user.id", request.UserId);
        activity?.SetTag("app.product.id", request.Item?.ProductId);
        activity?.SetTag("app.product.quantity", request.Item?.Quantity);

        ValidateUserId(request.UserId);
        if (request.Item is null)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "item is required"));
        }
        if (!CartRules.IsValidProductId(request.Item.ProductId))
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument,
                $"invalid product id '{request.Item.ProductId}'"));
        }
        if (request.Item.Quantity < CartRules.MinQuantity || request.Item.Quantity > CartRules.MaxQuantityPerLine)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument,
                $"quantity must be between {CartRules.MinQuantity} and {CartRules.MaxQuantityPerLine}"));
        }

        try
        {
            await _cartStore.AddItemAsync(request.UserId, request.Item.ProductId, request.Item.Quantity);
            return EmptyResponse;
        }
        catch (RpcException ex)
        {
            activity?.AddException(ex);
            activity?.SetStatus(ActivityStatusCode.Error, ex.Message);
            throw;
        }
    }

    public override async Task<Cart> GetCart(GetCartRequest request, ServerCallContext context)
    {
        var activity = Activity.Current;
        activity?.SetTag("app.user.id", request.UserId);
        activity?.AddEvent(new("Fetch cart"));

        try
        {
            var cart = await _cartStore.GetCartAsync(request.UserId);
            var totalCart = 0;
            foreach (var item in cart.Items)
            {
                totalCart += item.Quantity;
            }
            activity?.SetTag("app.cart.items.count", totalCart);
            return cart;
        }
        catch (RpcException ex)
        {
            activity?.AddException(ex);
            activity?.SetStatus(ActivityStatusCode.Error, ex.Message);
            throw;
        }
    }

    public override async Task<Empty> EmptyCart(EmptyCartRequest request, ServerCallContext context)
    {
        var activity = Activity.Current;
        activity?.SetTag("app.user.id", request.UserId);
        activity?.AddEvent(new("Empty cart"));
        ValidateUserId(request.UserId);

        try
        {
            // cartFailure routes the call to a store whose Valkey address does not resolve, so
            // every EmptyCart (and therefore every checkout) fails while the flag is on.
            if (await CartFailureEnabled())
            {
                await _badCartStore.EmptyCartAsync(request.UserId);
            }
            else
            {
                await _cartStore.EmptyCartAsync(request.UserId);
            }
        }
        catch (RpcException ex)
        {
            activity?.AddException(ex);
            activity?.SetStatus(ActivityStatusCode.Error, ex.Message);
            throw;
        }

        return EmptyResponse;
    }

    // A flag evaluation that fails (flagd unreachable) falls back to the default, off.
    private async Task<bool> CartFailureEnabled()
    {
        try
        {
            return await _featureFlagHelper.GetBooleanValueAsync(CartFailureFlag, false);
        }
        catch (Exception ex)
        {
            _logger.LogWarning(ex, "Evaluating {Flag} failed, using false", CartFailureFlag);
            return false;
        }
    }

    private static void ValidateUserId(string userId)
    {
        if (userId is null || userId.Length > CartRules.MaxUserIdLength)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "invalid user id"));
        }
    }
}
