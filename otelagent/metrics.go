package otelagent

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The bucket boundaries the conventions give for the two histograms:
// powers of 4 tokens, and powers of 2 times 10 ms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// A measure names the attributes of one metric recording: each distinct
// one is an attribute set built once.
type measure struct {
	op, model, responseModel, errType, tokenType string
}

// options returns the record options carrying m's attribute set.
func (o *Observer) options(m measure) []metric.RecordOption {
	return o.measures.get(m, func(m measure) []metric.RecordOption {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(m.op), o.provider, semconv.GenAIRequestModel(m.model)}
		if m.op == o.operation { // a model call's
			attrs = append(attrs, o.server...)
		}
		if m.responseModel != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(m.responseModel))
		}
		if m.errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(m.errType))
		}
		if m.tokenType != "" {
			attrs = append(attrs, semconv.GenAITokenTypeKey.String(m.tokenType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// recordDuration records an operation's duration since start.
func (o *Observer) recordDuration(ctx context.Context, start time.Time, m measure) {
	if o.duration.Enabled(ctx) {
		o.duration.Record(ctx, time.Since(start).Seconds(), o.options(m)...)
	}
}
