package geminitest

import "testing"

// RoundTripExchange writes an exchange to a recording and reads it back,
// for the tests of the file format.
func RoundTripExchange(tb testing.TB, e Exchange) Exchange {
	tb.Helper()
	data := formatCassette([]Exchange{e})
	parsed, err := parseCassette(data)
	if err != nil {
		tb.Fatalf("parseCassette of formatCassette's output: %v\n%s", err, data)
	}
	return parsed[0].Exchange
}
