// The accounting schema in PostgreSQL (database "otel", schema "accounting"): orders, their
// line items and their shipments. Money is kept as the proto's currency/units/nanos triple
// so that no rounding happens on the way in.

using System.ComponentModel.DataAnnotations;
using System.ComponentModel.DataAnnotations.Schema;
using Microsoft.EntityFrameworkCore;

namespace Accounting;

[Table("order", Schema = "accounting")]
public class OrderEntity
{
    [Key]
    [Column("order_id")]
    [MaxLength(64)]
    public required string Id { get; set; }
}

[Table("orderitem", Schema = "accounting")]
[PrimaryKey(nameof(OrderId), nameof(ProductId))]
public class OrderItemEntity
{
    [Column("order_id")]
    public required string OrderId { get; set; }

    [Column("product_id")]
    [MaxLength(16)]
    public required string ProductId { get; set; }

    [Column("quantity")]
    public required int Quantity { get; set; }

    [Column("item_cost_currency_code")]
    [MaxLength(3)]
    public required string ItemCostCurrencyCode { get; set; }

    [Column("item_cost_units")]
    public required long ItemCostUnits { get; set; }

    [Column("item_cost_nanos")]
    public required int ItemCostNanos { get; set; }
}

[Table("shipping", Schema = "accounting")]
public class ShippingEntity
{
    [Key]
    [Column("shipping_tracking_id")]
    public required string ShippingTrackingId { get; set; }

    [Column("order_id")]
    public required string OrderId { get; set; }

    [Column("shipping_cost_currency_code")]
    [MaxLength(3)]
    public required string ShippingCostCurrencyCode { get; set; }

    [Column("shipping_cost_units")]
    public required long ShippingCostUnits { get; set; }

    [Column("shipping_cost_nanos")]
    public required int ShippingCostNanos { get; set; }

    [Column("street_address")]
    public required string StreetAddress { get; set; }

    [Column("city")]
    public required string City { get; set; }

    [Column("state")]
    public required string State { get; set; }

    [Column("country")]
    public required string Country { get; set; }

    [Column("zip_code")]
    public required string ZipCode { get; set; }
}

public class AccountingContext : DbContext
{
    public AccountingContext(DbContextOptions<AccountingContext> options) : base(options)
    {
    }

    public DbSet<OrderEntity> Orders => Set<OrderEntity>();
    public DbSet<OrderItemEntity> CartItems => Set<OrderItemEntity>();
    public DbSet<ShippingEntity> Shipping => Set<ShippingEntity>();

    protected override void OnModelCreating(ModelBuilder modelBuilder)
    {
        modelBuilder.Entity<OrderItemEntity>()
            .HasOne<OrderEntity>()
            .WithMany()
            .HasForeignKey(i => i.OrderId)
            .OnDelete(DeleteBehavior.Cascade);

        modelBuilder.Entity<ShippingEntity>()
            .HasOne<OrderEntity>()
            .WithOne()
            .HasForeignKey<ShippingEntity>(s => s.OrderId)
            .OnDelete(DeleteBehavior.Cascade);

        // Nanos must agree in sign with units and stay below one unit.
        modelBuilder.Entity<OrderItemEntity>()
            .ToTable(t => t.HasCheckConstraint("ck_item_cost_nanos",
                "item_cost_nanos > -1000000000 AND item_cost_nanos < 1000000000"));
    }
}
