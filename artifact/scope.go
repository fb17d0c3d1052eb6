package artifact

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// UserPrefix starts the name of a user's own file, which every thread of
// theirs reaches ("user:logo.png"), in references, in the tool and in
// [Scope.Key]; other names are the thread's. The store keeps such a file
// under the thread "" and its name without the prefix.
const UserPrefix = "user:"

// A Scope is whose files a run reaches: a user's thread, and the user's
// own files.
type Scope struct {
	User   string
	Thread string
}

type scopeKey struct{}

// WithScope returns ctx naming the user's thread whose files the runs
// under it keep and read: the [Keeper] saves a tool's files there and
// resolves a history's references there. Package agentserver sets it for
// each served run; a program that runs an agent itself sets it around
// the run.
func WithScope(ctx context.Context, user, thread string) context.Context {
	return context.WithValue(ctx, scopeKey{}, Scope{User: user, Thread: thread})
}

// ScopeOf returns the scope [WithScope] put in ctx, and false when there
// is none.
func ScopeOf(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// Key returns the key of the file a reference, a tool or a person names
// in s: a name with [UserPrefix] names the user's own file (thread ""),
// another the thread's. It checks the key as [CheckKey] does.
func (s Scope) Key(name string) (Key, error) {
	k := Key{User: s.User, Thread: s.Thread, Name: name}
	if rest, ok := strings.CutPrefix(name, UserPrefix); ok {
		k.Thread, k.Name = "", rest
	}
	return k, CheckKey(k)
}

// DisplayName returns the name a reference, a tool and a person use for
// info's file: its name, with [UserPrefix] for a user's own file.
func DisplayName(info Info) string {
	if info.Thread == "" {
		return UserPrefix + info.Name
	}
	return info.Name
}

// URIScheme is the scheme of an artifact's reference: the URI of the
// fileData parts of a history that refer to a kept file, and of
// toolset.Media that name one.
const URIScheme = "artifact"

// URI returns the reference to version of the file named name (a
// [DisplayName]): "artifact:" then the name, escaped, then
// "?version=N". A reference is relative to a [Scope]: the same URI in two
// threads names each thread's file.
func URI(name string, version int) string {
	return URIScheme + ":" + url.PathEscape(name) + "?version=" + strconv.Itoa(version)
}

// ParseURI reads a reference made by [URI]: the file's name (a
// [DisplayName]) and version. ok is false for a URI of another scheme; a
// reference that does not parse is an error.
func ParseURI(uri string) (name string, version int, ok bool, err error) {
	rest, ok := strings.CutPrefix(uri, URIScheme+":")
	if !ok {
		return "", 0, false, nil
	}
	escaped, query, _ := strings.Cut(rest, "?")
	name, err = url.PathUnescape(escaped)
	if err == nil {
		var q url.Values
		if q, err = url.ParseQuery(query); err == nil {
			version, err = strconv.Atoi(q.Get("version"))
		}
	}
	if err != nil || version <= 0 || CheckName(strings.TrimPrefix(name, UserPrefix)) != nil {
		return "", 0, true, fmt.Errorf("%w: the reference %q does not parse", ErrBadKey, truncate(uri, 120))
	}
	return name, version, true, nil
}
