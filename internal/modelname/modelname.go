// Package modelname reads Gemini model names, for the packages that decide
// by model version what the API accepts.
package modelname

import (
	"strconv"
	"strings"
)

// Major returns the major version of a Gemini model named
// "gemini-<major>[.<minor>]-…" ("gemini-2.5-flash": 2), after any path
// ("models/", "publishers/google/models/"), and what follows its digits
// (".5-flash"). ok is false for other names, aliases such as
// "gemini-flash-latest" included. The name is read as it is: lower it
// first to accept "Gemini-3".
func Major(model string) (major int, tail string, ok bool) {
	name := model[strings.LastIndexByte(model, '/')+1:]
	rest, found := strings.CutPrefix(name, "gemini-")
	if !found {
		return 0, "", false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	major, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0, "", false
	}
	return major, rest[end:], true
}
