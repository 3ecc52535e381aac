package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// startTracing exports this process's spans as service when the OTEL_*
// variables ask for it (docs/decisions.md D38); the returned func flushes
// what is still batched. A setup that fails is reported on stderr and
// leaves tracing off: traces never keep cairn from serving.
func startTracing(service string) func() {
	stop, err := telemetry.Setup(context.Background(), service)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: traces are not exported: %v\n", err)
		return func() {}
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stop(ctx)
	}
}
