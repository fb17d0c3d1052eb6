// Package toolname makes names that follow Gemini's rule for function
// names out of names that may not: an MCP server's tool names, an OpenAPI
// description's operation ids.
package toolname

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// Gemini returns prefix and name joined, each character Gemini refuses
// replaced by '_' (one per character, not per byte), '_' put in front of a
// name that does not start with a letter or an underscore, and a name
// longer than [toolset.MaxNameLen] shortened in the middle, where an
// 8-digit hash of the whole original name keeps two long names that share
// their ends apart.
func Gemini(prefix, name string) string {
	var b strings.Builder
	for _, r := range prefix + name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '_') {
		s = "_" + s
	}
	return Shorten(s, prefix+name, toolset.MaxNameLen)
}

// Shorten returns s when it is at most max bytes of ASCII long; otherwise
// s shortened in the middle around an 8-digit hash of original, max bytes
// long.
func Shorten(s, original string, max int) string {
	if len(s) <= max {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(original))
	mark := fmt.Sprintf("_%08x_", h.Sum32())
	keep := max - len(mark)
	head := (keep + 1) / 2
	return s[:head] + mark + s[len(s)-(keep-head):]
}
