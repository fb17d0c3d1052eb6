package memory_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/memorytest"
)

func TestStoreContract(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return memory.NewStore() })
}
