/*
 * Fraud detection: consumes the "orders" topic (KAFKA_ADDR) and scores every order with the
 * rules of FraudRules.kt. Orders that score high are logged as suspicious; nothing is
 * blocked (the checkout already completed).
 */
package frauddetection

import dev.openfeature.contrib.providers.flagd.FlagdOptions
import dev.openfeature.contrib.providers.flagd.FlagdProvider
import dev.openfeature.sdk.Client
import dev.openfeature.sdk.MutableContext
import dev.openfeature.sdk.OpenFeatureAPI
import org.apache.kafka.clients.consumer.ConsumerConfig.AUTO_OFFSET_RESET_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.MAX_POLL_RECORDS_CONFIG
import org.apache.kafka.clients.consumer.ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG
import org.apache.kafka.clients.consumer.ConsumerRecord
import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.common.errors.WakeupException
import org.apache.kafka.common.serialization.ByteArrayDeserializer
import org.apache.kafka.common.serialization.StringDeserializer
import org.apache.logging.log4j.LogManager
import org.apache.logging.log4j.Logger
import oteldemo.Demo.OrderResult
import java.time.Duration
import java.util.Properties
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess

const val TOPIC = "orders"
const val GROUP_ID = "fraud-detection"
const val QUEUE_PROBLEMS_FLAG = "kafkaQueueProblems"

// kafkaQueueProblems > 0: the consumer sleeps this long per record, so lag builds up while
// checkout floods the topic.
val SLOW_CONSUMER_DELAY: Duration = Duration.ofSeconds(1)
val POLL_TIMEOUT: Duration = Duration.ofMillis(100)

private val logger: Logger = LogManager.getLogger(GROUP_ID)
private val processed = AtomicLong()
private val suspicious = AtomicLong()

fun main() {
    val kafkaAddr = System.getenv("KAFKA_ADDR")
    if (kafkaAddr.isNullOrBlank()) {
        logger.error("KAFKA_ADDR is not supplied")
        exitProcess(1)
    }
    val flagdHost = System.getenv("FLAGD_HOST") ?: "localhost"
    val flagdPort = System.getenv("FLAGD_PORT")?.toIntOrNull() ?: 8013
    OpenFeatureAPI.getInstance().setProviderAndWait(
        FlagdProvider(FlagdOptions.builder().host(flagdHost).port(flagdPort).deadline(500).build())
    )
    val flags = OpenFeatureAPI.getInstance().client

    val props = Properties().apply {
        this[KEY_DESERIALIZER_CLASS_CONFIG] = StringDeserializer::class.java.name
        this[VALUE_DESERIALIZER_CLASS_CONFIG] = ByteArrayDeserializer::class.java.name
        this[GROUP_ID_CONFIG] = GROUP_ID
        this[BOOTSTRAP_SERVERS_CONFIG] = kafkaAddr
        this[AUTO_OFFSET_RESET_CONFIG] = "earliest"
        this[ENABLE_AUTO_COMMIT_CONFIG] = "true"
        this[MAX_POLL_RECORDS_CONFIG] = 100
    }
    val consumer = KafkaConsumer<String, ByteArray>(props).apply { subscribe(listOf(TOPIC)) }
    val rules = FraudRules()

    Runtime.getRuntime().addShutdownHook(Thread { consumer.wakeup() })
    logger.info("Consuming $TOPIC from $kafkaAddr as $GROUP_ID")

    consumer.use {
        try {
            while (true) {
                val records = consumer.poll(POLL_TIMEOUT)
                for (record in records) {
                    processOrder(record, rules, flags)
                }
            }
        } catch (e: WakeupException) {
            logger.info("Shutting down after ${processed.get()} orders (${suspicious.get()} suspicious)")
        }
    }
}

fun processOrder(record: ConsumerRecord<String, ByteArray>, rules: FraudRules, flags: Client) {
    val order = try {
        OrderResult.parseFrom(record.value())
    } catch (e: com.google.protobuf.InvalidProtocolBufferException) {
        logger.warn("Skipping unreadable record at offset ${record.offset()}: ${e.message}")
        return
    }
    val count = processed.incrementAndGet()

    val delayFactor = queueProblems(flags, order.orderId)
    if (delayFactor > 0) {
        Thread.sleep(SLOW_CONSUMER_DELAY.toMillis())
    }

    val verdict = rules.score(order)
    if (verdict.suspicious) {
        suspicious.incrementAndGet()
        logger.warn("Suspicious order ${order.orderId}: score ${verdict.score} (${verdict.reasons.joinToString()})")
    } else {
        logger.info("Consumed record with orderId: ${order.orderId}, and updated total count to: $count")
    }
}

// A failed evaluation (flagd unreachable) falls back to the default, 0.
fun queueProblems(flags: Client, orderId: String): Int =
    try {
        flags.getIntegerValue(QUEUE_PROBLEMS_FLAG, 0, MutableContext().add("orderId", orderId))
    } catch (e: RuntimeException) {
        logger.warn("Evaluating $QUEUE_PROBLEMS_FLAG failed, using 0: ${e.message}")
        0
    }
