package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// With -openapi the description's operations are tools of the chat: the
// offline model calls one when asked by name, a read runs at once, a
// delete asks first (and the user says no), and /tools lists them.
func TestOpenAPI(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" key="+r.Header.Get("Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id": "1", "name": "lamp"}]`)
	}))
	defer api.Close()
	out := chatOutput(t, options{
		openAPI:     []string{"shop=../../openapitools/testdata/shop31.yaml"},
		openAPIAuth: []string{"key=SECRET", "unrelated=x"},
		openAPIBase: api.URL,
		width:       wide, // /tools' lines unwrapped
	}, `call shop_listItems {"tags": ["red"]}`+"\n"+`call shop_deleteItem {"itemId": "1"}`+"\nno\n/tools\n")
	for _, want := range []string{
		`OpenAPI "shop=../../openapitools/testdata/shop31.yaml": 8 tools (shop_listItems, shop_createItem, shop_getItem, shop_replaceItem, shop_deleteItem, shop_addPet, shop_styles, shop_plantTree); calls that change something ask first.`,
		`→ shop_listItems {"tags":["red"]}`,
		`shop_listItems returned map[body:[map[id:1 name:lamp]] content_type:application/json status:200].`,
		`run shop_deleteItem {"itemId":"1"}? [y/N] no`,
		"shop_deleteItem failed: the user did not allow this call.",
		"  shop_getItem     Get an item. [OpenAPI shop=../../openapitools/testdata/shop31.yaml]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "GET /items?tags=red&limit=20 key=SECRET" {
		t.Errorf("the API saw %q, want the list only", seen)
	}
}

// A description that cannot be read stops the chat with the reason.
func TestOpenAPIBadDescription(t *testing.T) {
	err := run(t.Context(), options{openAPI: []string{"missing.yaml"}, clock: fixedClock}, strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `-openapi "missing.yaml"`) {
		t.Errorf("run: %v", err)
	}
}
