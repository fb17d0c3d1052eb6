package main

import (
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporaltest"
)

// quietLogger drops the Temporal SDK's logs.
var quietLogger = devtemporal.QuietLogger

// startServer starts a Temporal server in this process (see
// devtemporal.Start).
func startServer(settings dynamicconfig.StaticClient) (*temporaltest.TestServer, error) {
	return devtemporal.Start(settings)
}
