package mcptools

import "github.com/toolnexus/toolnexus-go/internal/toolname"

// geminiName returns the name the model calls a server's tool by: prefix
// and name joined, each character Gemini refuses replaced by '_' (one per
// character, not per byte), '_' put in front of a name that does not start
// with a letter or an underscore, and a name longer than 64
// characters shortened in the middle, where an 8-digit hash of the
// whole original name keeps two long names that share their ends apart.
// MCP allows names Gemini refuses (spaces, slashes, non-ASCII letters,
// names longer than 64 characters): the model calls the tool by this name,
// and the server is called with the original.
func geminiName(prefix, name string) string {
	return toolname.Gemini(prefix, name)
}
