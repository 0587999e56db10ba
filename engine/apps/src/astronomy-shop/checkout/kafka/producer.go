// Package kafka publishes placed orders to the "orders" topic, which accounting and
// fraud-detection consume.
package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	pb "github.com/open-telemetry/opentelemetry-demo/src/checkout/genproto/oteldemo"
)

const (
	Topic = "orders"
	// QueueProblemsFlag is the flagd key: when > 0, every order is published that many extra
	// times, and fraud-detection slows down per record, so consumer lag grows.
	QueueProblemsFlag = "kafkaQueueProblems"
	// The broker must acknowledge within this budget; PlaceOrder does not wait longer.
	ackTimeout = 2 * time.Second
)

// OrderProducer wraps an async producer whose successes and errors are both returned, so
// each publish can wait for its acknowledgement.
type OrderProducer struct {
	producer sarama.AsyncProducer
	log      *logrus.Logger
}

// NewOrderProducer connects to the brokers (KAFKA_ADDR, e.g. kafka:9092).
func NewOrderProducer(brokers []string, log *logrus.Logger) (*OrderProducer, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	// One ack from the (single) broker is enough; the demo runs one KRaft node.
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Retry.Max = 3
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Net.DialTimeout = 3 * time.Second
	producer, err := sarama.NewAsyncProducer(brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka producer for %v: %w", brokers, err)
	}
	return &OrderProducer{producer: producer, log: log}, nil
}

func (p *OrderProducer) message(order *pb.OrderResult) (*sarama.ProducerMessage, error) {
	payload, err := proto.Marshal(order)
	if err != nil {
		return nil, fmt.Errorf("marshal order %s: %w", order.GetOrderId(), err)
	}
	return &sarama.ProducerMessage{
		Topic: Topic,
		Key:   sarama.StringEncoder(order.GetOrderId()),
		Value: sarama.ByteEncoder(payload),
	}, nil
}

// Publish sends the order and waits for the broker's acknowledgement. With extraCopies > 0
// (kafkaQueueProblems) it then floods the topic with that many duplicates in the background.
func (p *OrderProducer) Publish(ctx context.Context, order *pb.OrderResult, extraCopies int) error {
	msg, err := p.message(order)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()

	select {
	case p.producer.Input() <- msg:
	case <-ctx.Done():
		return fmt.Errorf("enqueue order %s: %w", order.GetOrderId(), ctx.Err())
	}
	select {
	case ok := <-p.producer.Successes():
		p.log.Infof("order %s published to %s partition %d offset %d", order.GetOrderId(), ok.Topic, ok.Partition, ok.Offset)
	case perr := <-p.producer.Errors():
		return fmt.Errorf("publish order %s: %w", order.GetOrderId(), perr.Err)
	case <-ctx.Done():
		return fmt.Errorf("no ack for order %s: %w", order.GetOrderId(), ctx.Err())
	}

	if extraCopies > 0 {
		p.log.Warnf("feature flag %s is on: publishing %d extra copies of order %s", QueueProblemsFlag, extraCopies, order.GetOrderId())
		for i := 0; i < extraCopies; i++ {
			go func(m sarama.ProducerMessage) {
				p.producer.Input() <- &m
				select {
				case <-p.producer.Successes():
				case <-p.producer.Errors():
				}
			}(*msg)
		}
	}
	return nil
}

// Close flushes pending messages.
func (p *OrderProducer) Close() error {
	return p.producer.Close()
}
