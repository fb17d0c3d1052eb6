package main

// The chat's OAuth logins: an -mcp-http server that answers 401 has the
// user log in through their browser (mcptools.Login), and the tokens are
// kept for the next run in a file only they can read.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/toolnexus/toolnexus-go/mcptools"
)

// logins makes the logins of the chat's -mcp-http servers.
type logins struct {
	out     io.Writer // where the user is told to log in
	store   mcptools.LoginStore
	file    string // the store's file, "" when none
	timeout time.Duration
	browser func(url string) error
}

// loginsFile is the file, in the user's config directory, that keeps the
// chat's logins to MCP servers.
const loginsFile = "chat-mcp-logins.json"

func newLogins(opts options) *logins {
	l := &logins{out: opts.loginOut, file: opts.loginFile, timeout: opts.loginTimeout, browser: opts.browser}
	if l.out == nil {
		// Standard error: the prompt must not mix into an answer being
		// written to standard output, nor into a pipe that reads it.
		l.out = os.Stderr
	}
	if l.timeout <= 0 {
		l.timeout = mcptools.DefaultLoginTimeout
	}
	if l.browser == nil {
		l.browser = openBrowser
	}
	if l.file == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			l.file = filepath.Join(dir, "toolnexus", loginsFile)
		}
	}
	if l.file != "" {
		l.store = mcptools.TokenFile(l.file)
	}
	return l
}

// login returns the login for the server at serverURL (spec as given).
// When the logins file cannot be used (others may read it, say), the
// login is not kept, and the user is told why.
func (l *logins) login(spec, serverURL string) (*mcptools.Login, error) {
	opts := &mcptools.LoginOptions{
		ClientName: "toolnexus chat",
		Store:      l.store,
		Timeout:    l.timeout,
		Open: func(_ context.Context, authURL string) error {
			opened := "opening it in your browser"
			if err := l.browser(authURL); err != nil {
				opened = "open it in a browser"
			}
			kept := "the login is not kept"
			if l.file != "" {
				kept = "the login is kept in " + l.file
			}
			fmt.Fprintf(l.out, "MCP server %q asks you to log in (%s; waiting %v; %s):\n  %s\n", spec, opened, l.timeout, kept, authURL)
			return nil
		},
	}
	login, err := mcptools.NewLogin(serverURL, opts)
	if err != nil && l.store != nil {
		fmt.Fprintf(l.out, "MCP server %q: logins will not be kept: %v\n", spec, err)
		l.store, l.file = nil, ""
		opts.Store = nil
		login, err = mcptools.NewLogin(serverURL, opts)
	}
	return login, err
}

// errNoBrowser says that there is no browser to open.
var errNoBrowser = errors.New("no browser")

// openBrowser opens u in the user's browser, where there is one.
func openBrowser(u string) error {
	cmd, err := browserCommand(u)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaped whenever the opener exits
	return nil
}

// browserCommand is the command that opens the web page u: $BROWSER, else
// the system's opener, on Linux only in a graphical session.
func browserCommand(u string) (*exec.Cmd, error) {
	if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") {
		return nil, errNoBrowser // only web pages
	}
	switch b := os.Getenv("BROWSER"); {
	case b != "":
		return exec.Command(b, u), nil
	case runtime.GOOS == "darwin":
		return exec.Command("open", u), nil
	case runtime.GOOS == "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", u), nil
	case os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "":
		return exec.Command("xdg-open", u), nil
	}
	return nil, errNoBrowser
}
