# Renders the confirmation template and hands the mail to the in-process test mailer.
#
# The test mailer keeps every delivered message in Mail::TestMailer.deliveries. The healthy
# service clears that list after each send; with the emailMemoryLeak flag on it does not,
# and each body is padded to `padding` times its length, so the pod's memory grows with
# every order until the 100Mi limit kills it.

require "erb"
require "mail"
require "ostruct"

Mail.defaults do
  delivery_method :test
end

class ConfirmationMailer
  FROM = "noreply@example.com"
  SUBJECT = "Your confirmation email"
  NANOS_PER_UNIT = 1_000_000_000

  def initialize(template_dir:)
    path = File.join(template_dir, "confirmation.erb")
    @template = ERB.new(File.read(path), trim_mode: "-")
  end

  # Returns the delivered Mail::Message.
  def deliver(to:, order:, padding: 0)
    html = render(order)
    html *= padding if padding > 1
    recipient = to

    message = Mail.new do
      from FROM
      to recipient
      subject SUBJECT
      content_type "text/html; charset=UTF-8"
      body html
    end
    message.deliver!
    Mail::TestMailer.deliveries.clear if padding.zero?
    message
  end

  def retained_count
    Mail::TestMailer.deliveries.length
  end

  def render(order)
    view = ConfirmationView.new(order)
    @template.result(view.instance_binding)
  end

  # The template's view of one order: line totals and the order total in its currency.
  class ConfirmationView
    attr_reader :order

    def initialize(order)
      @order = order
    end

    def lines
      Array(order.items).map do |line|
        quantity = line.item.quantity.to_i
        unit = to_decimal(line.cost)
        OpenStruct.new(
          product_id: line.item.product_id,
          quantity: quantity,
          unit_price: format_money(unit, line.cost.currency_code),
          line_total: format_money(unit * quantity, line.cost.currency_code),
        )
      end
    end

    def currency_code
      order.shipping_cost&.currency_code || Array(order.items).first&.cost&.currency_code || "USD"
    end

    def shipping_cost
      format_money(to_decimal(order.shipping_cost), currency_code)
    end

    def total
      items = Array(order.items).sum { |l| to_decimal(l.cost) * l.item.quantity.to_i }
      format_money(items + to_decimal(order.shipping_cost), currency_code)
    end

    def address_lines
      a = order.shipping_address
      return [] if a.nil?

      [a.street_address, "#{a.city}, #{a.state} #{a.zip_code}", a.country].reject { |s| s.to_s.strip.empty? }
    end

    def instance_binding
      binding
    end

    private

    # Money as a Rational to keep cents exact: units + nanos / 1e9.
    def to_decimal(money)
      return Rational(0) if money.nil?

      Rational(money.units.to_i) + Rational(money.nanos.to_i, NANOS_PER_UNIT)
    end

    def format_money(amount, code)
      format("%<code>s %<amount>.2f", code: code, amount: amount.round(2).to_f)
    end
  end
end
