package fake_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// start is the fixed time the cache tests begin at.
var start = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// longInstruction is a system instruction of about 4,500 tokens: above
// every model's minimum for caching.
var longInstruction = genai.NewContentFromText(strings.Repeat("Answer in one sentence. ", 750), "")

var weatherTools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
	Name: "get_weather", Description: "The weather in a city.",
	Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
}}}}

// backends runs f once with a client of each backend.
func backends(t *testing.T, f func(t *testing.T, srv *fake.Server, c *genai.Client, vertex bool)) {
	for _, vertex := range []bool{false, true} {
		name := "GeminiAPI"
		if vertex {
			name = "VertexAI"
		}
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			srv.SetTimeNowFunc(func() time.Time { return start })
			c := srv.Client()
			if vertex {
				c = srv.VertexClient()
			}
			f(t, srv, c, vertex)
		})
	}
}

// wantAPIError fails t unless err is an APIError with code, status and
// message.
func wantAPIError(t *testing.T, what string, err error, code int, status, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error; want %d %s %q", what, code, status, message)
	}
	e := asAPIError(t, err)
	if e.Code != code || e.Status != status || e.Message != message {
		t.Errorf("%s: error %d %s %q; want %d %s %q", what, e.Code, e.Status, e.Message, code, status, message)
	}
}

// cacheID is the last segment of a cache's name.
func cacheID(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}

// A cache is created, read, listed, used, refreshed, and gone once it
// expires or is deleted, through genai's Caches client, on both backends.
func TestCacheLifecycle(t *testing.T) {
	backends(t, func(t *testing.T, srv *fake.Server, c *genai.Client, vertex bool) {
		ctx := context.Background()
		cache, err := c.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{
			TTL: 10 * time.Minute, DisplayName: "rules", SystemInstruction: longInstruction, Tools: weatherTools,
			Contents: []*genai.Content{user("Remember: Paris is sunny.")},
		})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		wantName, wantModel := "cachedContents/", "models/"+model
		if vertex {
			wantName = "projects/fake-project/locations/us-central1/cachedContents/"
			wantModel = "projects/fake-project/locations/us-central1/publishers/google/models/" + model
		}
		if !strings.HasPrefix(cache.Name, wantName) || cache.Model != wantModel || cache.DisplayName != "rules" ||
			!cache.CreateTime.Equal(start) || !cache.ExpireTime.Equal(start.Add(10*time.Minute)) ||
			cache.UsageMetadata == nil || cache.UsageMetadata.TotalTokenCount < 4096 {
			t.Fatalf("created %+v; want a name %s…, model %s, created %v, expiring 10 minutes later, over 4096 tokens", cache, wantName, wantModel, start)
		}
		if vertex && strings.Trim(cacheID(cache.Name), "0123456789") != "" {
			t.Errorf("Vertex AI cache id %q is not a number", cacheID(cache.Name))
		}
		if create := srv.LastRequest(); create.Method != fake.MethodCreateCachedContent || create.Model != model ||
			create.SystemInstruction == nil || len(create.Tools) != 1 || len(create.Contents) != 1 {
			t.Errorf("the create was recorded as %+v; want its method, model and what the cache holds", create)
		}
		got, err := c.Caches.Get(ctx, cache.Name, nil)
		if err != nil || got.Name != cache.Name || !got.ExpireTime.Equal(cache.ExpireTime) || got.UsageMetadata.TotalTokenCount != cache.UsageMetadata.TotalTokenCount {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, cache)
		}
		// A bare id is the same cache: genai adds the path.
		if got, err := c.Caches.Get(ctx, cacheID(cache.Name), nil); err != nil || got.Name != cache.Name {
			t.Errorf("Get(bare id) = %+v, %v", got, err)
		}

		// Used: the cache's contents come first, its tokens are cached.
		srv.Enqueue(fake.Text("Sunny."), fake.Text("Sunny again."))
		resp, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("Weather in Paris?")},
			&genai.GenerateContentConfig{CachedContent: cache.Name})
		if err != nil {
			t.Fatalf("GenerateContent with the cache: %v", err)
		}
		u := resp.UsageMetadata
		if u.CachedContentTokenCount != cache.UsageMetadata.TotalTokenCount || u.PromptTokenCount <= u.CachedContentTokenCount ||
			len(u.CacheTokensDetails) != 1 || u.CacheTokensDetails[0].TokenCount != u.CachedContentTokenCount {
			t.Errorf("usage %+v; want %d cached tokens, in a larger prompt, with cacheTokensDetails", u, cache.UsageMetadata.TotalTokenCount)
		}
		req := srv.LastRequest()
		if req.CachedContent != cache.Name || req.SystemInstruction != nil || len(req.Contents) != 1 {
			t.Errorf("request: cachedContent %q, system instruction %v, %d contents; want the cache named and the request as sent", req.CachedContent, req.SystemInstruction, len(req.Contents))
		}
		var last *genai.GenerateContentResponse
		for chunk, err := range c.Models.GenerateContentStream(ctx, model, []*genai.Content{user("And now?")},
			&genai.GenerateContentConfig{CachedContent: cache.Name}) {
			if err != nil {
				t.Fatalf("stream with the cache: %v", err)
			}
			last = chunk
		}
		if last.UsageMetadata.CachedContentTokenCount != cache.UsageMetadata.TotalTokenCount {
			t.Errorf("the stream's last usage %+v; want %d cached tokens", last.UsageMetadata, cache.UsageMetadata.TotalTokenCount)
		}

		// Refreshed, by TTL and by expire time.
		srv.AdvanceTime(5 * time.Minute)
		upd, err := c.Caches.Update(ctx, cache.Name, &genai.UpdateCachedContentConfig{TTL: time.Hour})
		if now := start.Add(5 * time.Minute); err != nil || !upd.ExpireTime.Equal(now.Add(time.Hour)) || !upd.UpdateTime.Equal(now) {
			t.Fatalf("Update(TTL) = %+v, %v; want expiring an hour after %v", upd, err, now)
		}
		at := start.Add(2 * time.Hour)
		if upd, err := c.Caches.Update(ctx, cache.Name, &genai.UpdateCachedContentConfig{ExpireTime: at}); err != nil || !upd.ExpireTime.Equal(at) {
			t.Fatalf("Update(ExpireTime) = %+v, %v; want expiring at %v", upd, err, at)
		}

		// Listed, in pages, oldest first; a cache without a TTL lives an hour.
		second, err := c.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: longInstruction})
		if err != nil || !second.ExpireTime.Equal(start.Add(5*time.Minute+fake.DefaultCacheTTL)) {
			t.Fatalf("Create without a TTL = %+v, %v; want an hour's life", second, err)
		}
		page, err := c.Caches.List(ctx, &genai.ListCachedContentsConfig{PageSize: 1})
		if err != nil || len(page.Items) != 1 || page.Items[0].Name != cache.Name || page.NextPageToken == "" {
			t.Fatalf("List(page size 1) = %+v, %v; want the first cache and a next page", page, err)
		}
		var names []string
		for cc, err := range c.Caches.All(ctx) {
			if err != nil {
				t.Fatalf("All: %v", err)
			}
			names = append(names, cc.Name)
		}
		if fmt.Sprint(names) != fmt.Sprint([]string{cache.Name, second.Name}) {
			t.Errorf("All = %v; want %v", names, []string{cache.Name, second.Name})
		}

		// Deleted: gone for every route, and for generateContent.
		if _, err := c.Caches.Delete(ctx, second.Name, nil); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		gone := func(what, name string) {
			t.Helper()
			_, err := c.Caches.Get(ctx, name, nil)
			_, uerr := c.Caches.Update(ctx, name, &genai.UpdateCachedContentConfig{TTL: time.Hour})
			_, derr := c.Caches.Delete(ctx, name, nil)
			_, gerr := c.Models.GenerateContent(ctx, model, []*genai.Content{user("hi")}, &genai.GenerateContentConfig{CachedContent: name})
			if vertex {
				msg := fmt.Sprintf("Cached content %s is not found.", cacheID(name))
				wantAPIError(t, what+": Get", err, http.StatusNotFound, "NOT_FOUND", msg)
				wantAPIError(t, what+": Update", uerr, http.StatusNotFound, "NOT_FOUND", msg)
				wantAPIError(t, what+": Delete", derr, http.StatusNotFound, "NOT_FOUND", msg)
				wantAPIError(t, what+": GenerateContent", gerr, http.StatusBadRequest, "FAILED_PRECONDITION",
					fmt.Sprintf("Invalid resource state for cache content %s.", cacheID(name)))
				return
			}
			for _, e := range []struct {
				what string
				err  error
			}{{"Get", err}, {"Update", uerr}, {"Delete", derr}, {"GenerateContent", gerr}} {
				wantAPIError(t, what+": "+e.what, e.err, http.StatusForbidden, "PERMISSION_DENIED", "CachedContent not found (or permission denied)")
			}
		}
		gone("deleted", second.Name)

		// Expired: one second before its expire time it serves, at it it is gone.
		srv.SetTimeNowFunc(func() time.Time { return at.Add(-5*time.Minute - time.Second) })
		srv.Enqueue(fake.Text("Still here."))
		if _, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("hi")}, &genai.GenerateContentConfig{CachedContent: cache.Name}); err != nil {
			t.Fatalf("GenerateContent a second before expiry: %v", err)
		}
		srv.AdvanceTime(time.Second)
		gone("expired", cache.Name)
		if caches := srv.Caches(); len(caches) != 0 {
			t.Errorf("Caches() = %+v; want none", caches)
		}
		if pending := srv.Pending(); pending != 0 {
			t.Errorf("%d replies left: a refused request took one", pending)
		}
		for _, r := range srv.Rejections() {
			if r.Rule != "cached-content-found" && r.Rule != "cache-found" {
				t.Errorf("rejected by %q: %s", r.Rule, r.Err.Message)
			}
		}
	})
}

// Every refusal of caching.md, with each backend's status and text.
func TestCacheRefusals(t *testing.T) {
	backends(t, func(t *testing.T, srv *fake.Server, c *genai.Client, vertex bool) {
		ctx := context.Background()
		small := &genai.CreateCachedContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", "")}
		_, err := c.Caches.Create(ctx, model, small)
		n := 12 // the tokens of that system instruction's JSON, {"parts":[{"text":"Be brief."}]}, and its brackets
		if vertex {
			wantAPIError(t, "too small", err, http.StatusBadRequest, "INVALID_ARGUMENT",
				fmt.Sprintf("The cached content is of %d tokens. The minimum token count to start caching is 2048.", n))
		} else {
			wantAPIError(t, "too small", err, http.StatusBadRequest, "INVALID_ARGUMENT",
				fmt.Sprintf("Cached content is too small. total_token_count=%d, min_total_token_count=2048", n))
		}
		// The floor is the model's: Gemini 3 Pro's is 4096.
		mid := &genai.CreateCachedContentConfig{SystemInstruction: genai.NewContentFromText(strings.Repeat("x", 3000*4), "")}
		if _, err := c.Caches.Create(ctx, model, mid); err != nil {
			t.Errorf("3000 tokens for %s: %v", model, err)
		}
		if _, err := c.Caches.Create(ctx, "gemini-3-pro-preview", mid); err == nil || !strings.Contains(err.Error(), "4096") {
			t.Errorf("3000 tokens for gemini-3-pro-preview: %v; want too small, 4096", err)
		}

		cache, err := c.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: longInstruction, Tools: weatherTools})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		both := "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request."
		if vertex {
			both = "Tool config, tools and system instruction should not be set in the request when using cached content."
		}
		for _, cfg := range []*genai.GenerateContentConfig{
			{CachedContent: cache.Name, SystemInstruction: genai.NewContentFromText("Be brief.", "")},
			{CachedContent: cache.Name, Tools: weatherTools},
			{CachedContent: cache.Name, ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}},
		} {
			_, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("hi")}, cfg)
			wantAPIError(t, "a cache beside the fields it holds", err, http.StatusBadRequest, "INVALID_ARGUMENT", both)
		}
		_, err = c.Models.GenerateContent(ctx, "gemini-2.5-pro", []*genai.Content{user("hi")}, &genai.GenerateContentConfig{CachedContent: cache.Name})
		wantAPIError(t, "another model's cache", err, http.StatusBadRequest, "INVALID_ARGUMENT",
			"Model used by GenerateContent request (models/gemini-2.5-pro) and CachedContent (models/gemini-2.5-flash) has to be the same.")

		// The cache's tools are the request's: a call of its function and
		// the response to it are a valid conversation.
		srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
		history := []*genai.Content{user("Weather in Paris?")}
		cfg := &genai.GenerateContentConfig{CachedContent: cache.Name}
		resp, err := c.Models.GenerateContent(ctx, model, history, cfg)
		if err != nil {
			t.Fatalf("the call turn: %v", err)
		}
		history = append(history, resp.Candidates[0].Content,
			genai.NewContentFromFunctionResponse("get_weather", map[string]any{"result": "sunny"}, genai.RoleUser))
		if _, err := c.Models.GenerateContent(ctx, model, history, cfg); err != nil {
			t.Fatalf("the response turn: %v", err)
		}
		for _, r := range srv.Rejections() {
			if r.Rule != "cache-too-small" && r.Rule != "cached-content-exclusive" && r.Rule != "cached-content-model" {
				t.Errorf("rejected by %q: %s", r.Rule, r.Err.Message)
			}
		}
		if n := len(srv.Rejections()); n != 6 {
			t.Errorf("%d rejections; want the 6 refused requests", n)
		}
	})
}

// The raw routes: a patch's updateMask may name the expiration only, a
// create may not set both a TTL and an expire time, and Vertex AI takes a
// customer-managed key.
func TestCacheRawRequests(t *testing.T) {
	srv := newServer(t)
	srv.SetTimeNowFunc(func() time.Time { return start })
	ctx := context.Background()
	cache, err := srv.Client().Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: longInstruction})
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Goog-Api-Key", fake.APIKey)
		resp, err := srv.ClientConfig().HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	// Each rule of the cache routes refuses one of these and lets another
	// through (TestCacheRulesCovered checks that all are here).
	rejected, accepted := map[string]bool{}, map[string]bool{}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
		rule, passes       string // the rule that refuses it, or that it passes
	}{
		{"GET", "/v1beta/" + cache.Name, ``, 200, `"totalTokenCount"`, "", "auth"},
		{"POST", "/v1beta1/projects/p/locations/l/cachedContents", `{}`, 401,
			"google.cloud.aiplatform.v1beta1.GenAiCacheService.CreateCachedContent", "auth", ""}, // a key on a Vertex AI project route
		{"PATCH", "/v1beta/" + cache.Name + "?updateMask=ttl", `{"ttl":"60s"}`, 200, `"expireTime":"2026-12-04T12:01:00Z"`, "", "json-syntax"},
		{"PATCH", "/v1beta/" + cache.Name, `{"ttl":`, 400, "Invalid JSON payload received. Unexpected end of string.", "json-syntax", ""},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-2.5-flash","contentz":[]}`, 400, `Unknown name \"contentz\"`, "json-fields", ""},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-2.5-flash","encryptionSpec":{"kmsKeyName":"k"}}`, 400, `Unknown name \"encryptionSpec\"`, "json-fields", ""},
		{"POST", "/v1beta/cachedContents", `{"systemInstruction":{"parts":[{"text":"x"}]}}`, 400, "CachedContent.model is required.", "cache-model", ""},
		{"PATCH", "/v1beta/" + cache.Name + "?updateMask=expire_time", `{"expireTime":"2026-12-04T13:00:00Z"}`, 200, `"expireTime":"2026-12-04T13:00:00Z"`, "", "cache-expiration"},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-2.5-flash","ttl":"60s","expireTime":"2026-12-04T13:00:00Z"}`, 400, "Oneof field 'expiration' is already set", "cache-expiration", ""},
		{"PATCH", "/v1beta/" + cache.Name, `{"ttl":"soon"}`, 400, `Invalid value at 'ttl' (type.googleapis.com/google.protobuf.Duration), \"soon\"`, "cache-expiration", ""},
		{"PATCH", "/v1beta/" + cache.Name, `{"ttl":"120s"}`, 200, `"expireTime":"2026-12-04T12:02:00Z"`, "", "cache-update-mask"},
		{"PATCH", "/v1beta/" + cache.Name + "?updateMask=display_name", `{"displayName":"x"}`, 400, "only the expiration", "cache-update-mask", ""},
		{"PATCH", "/v1beta/" + cache.Name, `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`, 400, "Only the expiration", "cache-update-mask", ""},
		{"DELETE", "/v1beta/cachedContents/nope", ``, 403, "CachedContent not found (or permission denied)", "cache-found", ""},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-2.5-flash","systemInstruction":{"parts":[{"text":"x"}]}}`, 400,
			"Cached content is too small. total_token_count=6, min_total_token_count=2048", "cache-too-small", ""},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-3-flash-preview","systemInstruction":{"parts":[{"text":"` + strings.Repeat("x", 4096) + `"}]}}`, 200,
			`"model":"models/gemini-3-flash-preview"`, "", "cache-too-small"},
		{"POST", "/v1beta/cachedContents", `{"model":"gemini-2.5-flash","display_name":"snake case","systemInstruction":{"parts":[{"text":"` + strings.Repeat("x", 8192) + `"}]}}`, 200,
			`"displayName":"snake case"`, "", "json-fields"},
		{"POST", "/v1beta/cachedContents", `{"model":"models/gemini-2.5-flash","systemInstruction":{"parts":[{"text":"` + strings.Repeat("x", 8192) + `"}]}}`, 200,
			`"model":"models/gemini-2.5-flash"`, "", "cache-model"},
		{"PUT", "/v1beta/" + cache.Name, ``, 404, "nothing is served", "route", ""},
		// Three caches by now.
		{"GET", "/v1beta/cachedContents?pageSize=x", ``, 400, "Invalid value at 'page_size' (TYPE_INT32)", "cache-list-page", ""},
		{"GET", "/v1beta/cachedContents?pageToken=z", ``, 400, "Invalid page token.", "cache-list-page", ""},
		{"GET", "/v1beta/cachedContents?pageSize=1&pageToken=1", ``, 200, `"cachedContents"`, "", "cache-list-page"},
		{"GET", "/v1beta/cachedContents?pageSize=1", ``, 200, `"nextPageToken":"1"`, "", "cache-found"},
	} {
		code, body := send(tc.method, tc.path, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s %s: %d %s; want %d containing %s", tc.method, tc.path, tc.body, code, body, tc.code, tc.want)
		}
		last := srv.LastRequest()
		switch {
		case tc.rule != "" && (last.Rejection == nil || last.Rejection.Rule != tc.rule):
			t.Errorf("%s %s %s: rejection %+v; want by rule %q", tc.method, tc.path, tc.body, last.Rejection, tc.rule)
		case tc.rule == "" && last.Rejection != nil:
			t.Errorf("%s %s %s: rejected by %q", tc.method, tc.path, tc.body, last.Rejection.Rule)
		}
		rejected[tc.rule], accepted[tc.passes] = true, true
	}
	for _, name := range fake.CacheRuleNames() {
		if !rejected[name] || !accepted[name] {
			t.Errorf("cache rule %q: rejected case %t, accepted case %t; want both", name, rejected[name], accepted[name])
		}
	}

	// Vertex AI: a customer-managed key is sent as encryption_spec.
	v := srv.VertexClient()
	if _, err := v.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: longInstruction,
		KmsKeyName: "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"}); err != nil {
		t.Errorf("Vertex AI create with a KMS key: %v", err)
	}
	// A cache of one backend is not reached from the other.
	if _, err := v.Caches.Get(ctx, "projects/fake-project/locations/us-central1/"+cache.Name, nil); err == nil {
		t.Error("Vertex AI reached a Gemini API cache")
	}
}

// Implicit caching: a prompt that shares a long enough prefix with an
// earlier one of the same model reports it as cached; a short, changed,
// other model's or forgotten prefix does not.
func TestImplicitCaching(t *testing.T) {
	backends(t, func(t *testing.T, srv *fake.Server, c *genai.Client, vertex bool) {
		ctx := context.Background()
		srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("ok") })
		cfg := &genai.GenerateContentConfig{SystemInstruction: longInstruction, Tools: weatherTools}
		usage := func(model string, cfg *genai.GenerateContentConfig, contents ...*genai.Content) *genai.GenerateContentResponseUsageMetadata {
			t.Helper()
			resp, err := c.Models.GenerateContent(ctx, model, contents, cfg)
			if err != nil {
				t.Fatalf("GenerateContent: %v", err)
			}
			return resp.UsageMetadata
		}
		first := usage(model, cfg, user("Weather in Paris?"))
		if first.CachedContentTokenCount != 0 {
			t.Errorf("the first request reports %d cached tokens; want 0", first.CachedContentTokenCount)
		}
		// The same prompt again: all of it but the JSON's brackets.
		again := usage(model, cfg, user("Weather in Paris?"))
		if again.CachedContentTokenCount < again.PromptTokenCount-2 || again.CachedContentTokenCount > again.PromptTokenCount {
			t.Errorf("the same prompt again: %d of %d cached; want all of it", again.CachedContentTokenCount, again.PromptTokenCount)
		}
		// A longer conversation: its first turn is cached, not the new ones.
		longer := usage(model, cfg, user("Weather in Paris?"), genai.NewContentFromText("Sunny.", genai.RoleModel), user("And London?"))
		if longer.CachedContentTokenCount != again.CachedContentTokenCount {
			t.Errorf("a longer conversation: %d cached; want the %d of its first turn", longer.CachedContentTokenCount, again.CachedContentTokenCount)
		}
		// Another first turn shares the system instruction and tools only.
		other := usage(model, cfg, user("Weather in Rome?"))
		if other.CachedContentTokenCount == 0 || other.CachedContentTokenCount >= again.CachedContentTokenCount {
			t.Errorf("another first turn: %d cached; want fewer than %d and some", other.CachedContentTokenCount, again.CachedContentTokenCount)
		}
		misses := []struct {
			name string
			u    *genai.GenerateContentResponseUsageMetadata
		}{
			{"another model", usage("gemini-2.5-pro", cfg, user("Weather in Paris?"))},
			{"a changed system instruction", usage(model, &genai.GenerateContentConfig{
				SystemInstruction: genai.NewContentFromText("Now: 12:00. "+longInstruction.Parts[0].Text, ""), Tools: weatherTools}, user("Weather in Paris?"))},
			{"a short prompt repeated", func() *genai.GenerateContentResponseUsageMetadata {
				usage(model, nil, user("hi"))
				return usage(model, nil, user("hi"))
			}()},
		}
		srv.AdvanceTime(fake.ImplicitCacheLifetime)
		misses = append(misses, struct {
			name string
			u    *genai.GenerateContentResponseUsageMetadata
		}{"after the lifetime", usage(model, cfg, user("Weather in Paris?"))})
		for _, m := range misses {
			if m.u.CachedContentTokenCount != 0 || len(m.u.CacheTokensDetails) != 0 {
				t.Errorf("%s: %d cached tokens; want none", m.name, m.u.CachedContentTokenCount)
			}
		}
		// Within the lifetime of the last use, it hits again.
		srv.AdvanceTime(fake.ImplicitCacheLifetime - time.Second)
		if u := usage(model, cfg, user("Weather in Paris?")); u.CachedContentTokenCount == 0 {
			t.Error("a repeat within the lifetime of the last use missed")
		}
		if rej := srv.Rejections(); len(rej) != 0 {
			t.Errorf("rejections: %+v", rej[0])
		}
	})
}

// Vertex AI's cachedContents routes, raw: a patch with updateMask (which
// Vertex AI documents as required) naming the expiration is taken, in
// either case of its name; one naming another field is refused; a patch,
// get or delete of a cache that is not there is its 404 NOT_FOUND "Cached
// content {id} is not found." (caching.md §1, §6).
func TestCacheVertexRawPatch(t *testing.T) {
	srv := newServer(t)
	srv.SetTimeNowFunc(func() time.Time { return start })
	ctx := context.Background()
	cache, err := srv.VertexClient().Caches.Create(ctx, model, &genai.CreateCachedContentConfig{SystemInstruction: longInstruction})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cache.Name, "projects/") {
		t.Fatalf("Vertex AI cache name %q; want projects/{p}/locations/{l}/cachedContents/{id}", cache.Name)
	}
	gone := cache.Name[:strings.LastIndexByte(cache.Name, '/')+1] + "123"
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"PATCH", "/v1beta1/" + cache.Name + "?updateMask=ttl", `{"ttl":"60s"}`, 200, `"expireTime":"2026-12-04T12:01:00Z"`},
		{"PATCH", "/v1/" + cache.Name + "?updateMask=expireTime", `{"expireTime":"2026-12-04T13:00:00Z"}`, 200, `"expireTime":"2026-12-04T13:00:00Z"`},
		{"PATCH", "/v1beta1/" + cache.Name + "?updateMask=ttl,display_name", `{"ttl":"60s","displayName":"x"}`, 400, "only the expiration"},
		{"PATCH", "/v1beta1/" + gone + "?updateMask=ttl", `{"ttl":"60s"}`, 404, "Cached content 123 is not found."},
		{"GET", "/v1beta1/" + gone, ``, 404, "Cached content 123 is not found."},
		{"GET", "/v1beta1/" + cache.Name, ``, 200, `"name":"` + cache.Name + `"`},
		{"DELETE", "/v1beta1/" + cache.Name, ``, 200, `{}`},
		{"DELETE", "/v1beta1/" + cache.Name, ``, 404, "is not found."},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+fake.AccessToken)
		resp, err := srv.ClientConfig().HTTPClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s %s: %d %s; want %d containing %s", tc.method, tc.path, tc.body, resp.StatusCode, b, tc.code, tc.want)
		}
	}
}
