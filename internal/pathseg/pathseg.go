// Package pathseg escapes a string to one segment of a path, safe as a
// file name on every system and as a part of an object store's key: what
// package artifact's directory store and the blobstore module name a
// user's, a thread's and a file's folders with.
package pathseg

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxLen is the longest segment Escape returns, its prefix included.
const MaxLen = 200 + 65

// Escape returns s as one path segment after prefix (a letter, so that
// no segment is empty or starts with a dot): the bytes that are safe in a
// file name on every system (letters, digits, "-", "_", ".") kept, every
// other as %XX, or, when that is longer than 200 bytes, "~" and s's
// SHA-256 in hex. Two strings never share a segment but through the hash.
func Escape(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() > 200 {
		sum := sha256.Sum256([]byte(s))
		return prefix + "~" + hex.EncodeToString(sum[:])
	}
	return b.String()
}
