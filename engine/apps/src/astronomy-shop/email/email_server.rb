# Email service: POST /send_order_confirmation renders the order confirmation and "sends"
# it through the in-process test mailer (the demo never talks to a real SMTP server).

require "json"
require "sinatra"
require "openfeature/sdk"
require "openfeature/flagd/provider"
require "opentelemetry/sdk"
require "opentelemetry/exporter/otlp"
require "opentelemetry/instrumentation/sinatra"

require_relative "mailer"

set :port, ENV.fetch("EMAIL_PORT")
set :bind, "0.0.0.0"
set :environment, ENV.fetch("APP_ENV", "production").to_sym

OpenTelemetry::SDK.configure do |c|
  c.use "OpenTelemetry::Instrumentation::Sinatra"
end

OpenFeature::SDK.configure do |config|
  config.set_provider(
    OpenFeature::Flagd::Provider.build_client do |flagd|
      flagd.host = ENV.fetch("FLAGD_HOST", "localhost")
      flagd.port = Integer(ENV.fetch("FLAGD_PORT", "8013"))
      flagd.tls = false
    end
  )
end

FLAG_CLIENT = OpenFeature::SDK.build_client
MAILER = ConfirmationMailer.new(template_dir: File.join(__dir__, "views"))

EMAIL_PATTERN = /\A[^@\s]+@[^@\s]+\.[^@\s]+\z/

class BadRequest < StandardError; end

# emailMemoryLeak: 0 (off), 1, 10, 100, 1000 or 10000. An evaluation error means off.
def memory_leak_multiplier
  value = FLAG_CLIENT.fetch_integer_value(flag_key: "emailMemoryLeak", default_value: 0)
  value.is_a?(Integer) && value.positive? ? value : 0
rescue StandardError => e
  logger.warn("emailMemoryLeak evaluation failed (#{e.class}: #{e.message}); using 0")
  0
end

def parse_order(body)
  data = JSON.parse(body, object_class: OpenStruct)
  raise BadRequest, "missing email" if data.email.to_s.empty?
  raise BadRequest, "invalid email #{data.email.inspect}" unless data.email.match?(EMAIL_PATTERN)
  raise BadRequest, "missing order" if data.order.nil?
  raise BadRequest, "order without items" if Array(data.order.items).empty?

  data
rescue JSON::ParserError => e
  raise BadRequest, "body is not JSON: #{e.message}"
end

def send_order_confirmation(body)
  data = parse_order(body)
  span = OpenTelemetry::Trace.current_span
  span.set_attribute("app.order.id", data.order.order_id.to_s)
  span.set_attribute("app.email.recipient", data.email)

  multiplier = memory_leak_multiplier
  span.set_attribute("app.email.memory_leak_multiplier", multiplier)

  message = MAILER.deliver(to: data.email, order: data.order, padding: multiplier)
  span.add_event("email sent", attributes: { "app.email.bytes" => message.body.to_s.bytesize })
  logger.info("order confirmation for #{data.order.order_id} sent to #{data.email} " \
              "(#{MAILER.retained_count} retained)")
end

post "/send_order_confirmation" do
  send_order_confirmation(request.body.read)
  status 200
  ""
rescue BadRequest => e
  logger.warn("rejected confirmation request: #{e.message}")
  halt 400, e.message
rescue StandardError => e
  OpenTelemetry::Trace.current_span.record_exception(e)
  OpenTelemetry::Trace.current_span.status = OpenTelemetry::Trace::Status.error(e.message)
  halt 500, "failed to send confirmation"
end

get "/_healthz" do
  "ok"
end

error do
  OpenTelemetry::Trace.current_span.record_exception(env["sinatra.error"])
end
