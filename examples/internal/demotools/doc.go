// Package demotools holds the tools of the examples: get_weather (made-up,
// deterministic weather), current_time (the time in an IANA zone),
// calculate (exact arithmetic) and count_primes (the primes below a
// number, which takes a while for large ones and reports its progress). The chat gives them to the model directly;
// examples/mcpserver serves them over MCP. All four change nothing, and say
// so (toolset.Tool.ReadOnly).
package demotools
