package tracing

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) names another.
const DefaultServiceName = "platformapi"

// Enabled reports whether the environment (read with getenv) turns tracing
// on: an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_SDK_DISABLED is not true and
// OTEL_TRACES_EXPORTER is not none.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv is the process's tracing as the environment configures it: nil
// (off) unless Enabled, else spans batched to the OTLP/HTTP exporter (which
// reads the other OTEL_EXPORTER_OTLP_* variables itself: headers, timeout,
// TLS, compression), sampled as OTEL_TRACES_SAMPLER says (default: parent
// based, always on), under a resource naming service.name (default
// DefaultServiceName) and service.version version. It refuses an exporter
// or protocol it does not speak rather than send nothing silently.
func FromEnv(ctx context.Context, getenv func(string) string, version string) (*Tracing, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	if err := checkEnv(getenv); err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName), semconv.ServiceVersion(version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{provider: tp, propagator: Propagator(), shutdown: tp.Shutdown}, nil
}

// checkEnv refuses the exporters and protocols FromEnv does not speak.
func checkEnv(getenv func(string) string) error {
	if e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e != "" && e != "otlp" {
		return fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q is not supported (otlp or none)", e)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return fmt.Errorf("tracing: %s=%q is not supported (http/protobuf)", name, p)
			}
			return nil // the traces-specific one wins
		}
	}
	return nil
}
