// Package browsertest drives package devui's page in a headless Chromium
// (Debian's chromium) over the DevTools protocol, with chromedp: every view
// of the page against an in-process server on a scripted fake model, and
// examples/chat -web as a user runs it; and the React app of examples/web
// (built with its own Vite) against examples/server -approve -cors, on both
// of its pages. The tests skip when no Chromium is installed, and fail
// instead when TOOLNEXUS_BROWSER_REQUIRED=1 (CI); examples/web's skip
// without npm ci there, and fail instead when TOOLNEXUS_JS_REQUIRED=1.
//
//	go test ./...                       # the tests
//	go test -run TestExample -readme    # also rewrites docs/serving.md's screenshot
package browsertest
