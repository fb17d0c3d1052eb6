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

// MinCacheTokens returns the fewest tokens a context cache of model may
// hold, which is also the fewest a prompt prefix must share with an
// earlier one to be cached implicitly: one table of the Gemini API's
// documentation serves both (../shared/notes/caching.md §4). Its newest
// version (2026-06/07) gives 2048 for the Gemini 2.5 models, 4096 for
// Gemini 3.1 Pro and the Flash models from 3.5 on; the one before it 1024
// for Gemini 3 Flash Preview and 4096 for Gemini 3 Pro. Other models get
// 4096, the floor ADK hard-codes and an error showed for a model it did
// not name.
func MinCacheTokens(model string) int {
	major, tail, ok := Major(strings.ToLower(model))
	switch {
	case ok && major == 2 && strings.HasPrefix(tail, ".5"):
		return 2048
	case ok && major == 3 && strings.HasPrefix(tail, "-flash"):
		return 1024
	}
	return 4096
}
