package pgstore

import (
	"net/url"
	"regexp"
	"strings"
)

// connStringError is a connection string that does not parse. Its message
// is the driver's, with every password the string may hold taken out: the
// driver's own redaction is best effort on malformed input.
type connStringError struct {
	err     error
	secrets []string
}

func (e *connStringError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return "pgstore: the connection string is not valid: " + msg
}

func (e *connStringError) Unwrap() error { return e.err }

// passwordSetting matches a password setting of a key=value connection
// string or of a URL's query: password=secret, password = 'se cret'.
var passwordSetting = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// secrets returns what of the connection string s may be a password, in
// whole and as the driver may quote it decoded: the user information of a
// URL (all of it, since a malformed one may be split anywhere) and the
// values of password settings.
func secrets(s string) []string {
	var out []string
	add := func(v string) {
		v = strings.Trim(v, "'")
		if v == "" {
			return
		}
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	if _, rest, ok := strings.Cut(s, "://"); ok {
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			userinfo := rest[:i]
			if _, pw, ok := strings.Cut(userinfo, ":"); ok {
				add(pw)
			}
		}
	}
	for _, m := range passwordSetting.FindAllStringSubmatch(s, -1) {
		add(m[1])
	}
	return out
}
