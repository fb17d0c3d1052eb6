package mcptools

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// geminiName returns the name the model calls a server's tool by: prefix
// and name joined, each character Gemini refuses replaced by '_' (one per
// character, not per byte), '_' put in front of a name that does not start
// with a letter or an underscore, and a name longer than
// [toolset.MaxNameLen] shortened in the middle, where an 8-digit hash of the
// whole original name keeps two long names that share their ends apart.
// MCP allows names Gemini refuses (spaces, slashes, non-ASCII letters,
// names longer than 64 characters): the model calls the tool by this name,
// and the server is called with the original.
func geminiName(prefix, name string) string {
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
	if len(s) <= toolset.MaxNameLen {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(prefix + name))
	mark := fmt.Sprintf("_%08x_", h.Sum32())
	keep := toolset.MaxNameLen - len(mark)
	head := (keep + 1) / 2
	return s[:head] + mark + s[len(s)-(keep-head):]
}
