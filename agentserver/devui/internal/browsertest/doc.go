// Package browsertest drives package devui's page in a headless Chromium
// (Debian's chromium) over the DevTools protocol, with chromedp: every view
// of the page against an in-process server on a scripted fake model, and
// examples/chat -web as a user runs it. The tests skip when no Chromium is
// installed, and fail instead when TOOLNEXUS_BROWSER_REQUIRED=1 (CI).
//
//	go test ./...                       # the tests
//	go test -run TestExample -readme    # also rewrites the README's screenshot
package browsertest
