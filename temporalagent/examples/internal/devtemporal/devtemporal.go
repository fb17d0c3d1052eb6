// Package devtemporal starts a complete Temporal server in the calling
// process, for the examples and tests of this module: nothing is
// downloaded, and nothing leaves the machine.
package devtemporal

import (
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
)

// QuietLogger drops the Temporal SDK's logs.
var QuietLogger = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// Start starts a complete Temporal server in this process: SQLite in
// memory, loopback ports only, and its version check (a DNS lookup of
// version-info.temporal.io) turned off, so that nothing leaves the
// machine. settings are added to its dynamic config. The server picks its
// ports by probing, so a port that another process takes meanwhile fails
// the start: it is tried again a few times.
//
// The server's one history shard reads its transfer queue (the tasks that
// hand a scheduled activity or workflow task to matching) at most 20 times
// a second by default, which put about 48 ms on every task-queue round
// trip, every turn of a durable run: the embedded server reads it at up to
// 1,000 a second (see BENCHMARKS.md).
func Start(settings dynamicconfig.StaticClient) (*temporaltest.TestServer, error) {
	config := dynamicconfig.StaticClient{
		// temporaltest's own setting, which a config client of our own
		// would otherwise drop.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		dynamicconfig.EnableServerVersionCheck.Key():                false,
		dynamicconfig.TransferProcessorMaxPollRPS.Key():             1000,
	}
	for k, v := range settings {
		config[k] = v
	}
	var err error
	for range 5 {
		var ts *temporaltest.TestServer
		if ts, err = tryServer(config); err == nil {
			return ts, nil
		}
	}
	return nil, err
}

// tryServer makes one attempt at starting the server; temporaltest panics
// when it cannot.
func tryServer(config dynamicconfig.StaticClient) (ts *temporaltest.TestServer, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("starting the Temporal server: %v", v)
		}
	}()
	return temporaltest.NewServer(
		temporaltest.WithBaseServerOptions(temporal.WithDynamicConfigClient(config)),
		temporaltest.WithBaseClientOptions(client.Options{Logger: QuietLogger}),
		temporaltest.WithBaseWorkerOptions(worker.Options{}),
	), nil
}
