// Package demotools holds the tools of the examples: get_weather (made-up,
// deterministic weather), current_time (the time in an IANA zone) and
// calculate (exact arithmetic). The chat gives them to the model directly;
// examples/mcpserver serves them over MCP.
package demotools
