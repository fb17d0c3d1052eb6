package pgmemory

import (
	"crypto/md5"
	"encoding/hex"
)

// md5hex is PostgreSQL's md5(text) of s: its hex digest.
func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
