package k8sdump

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeLister is an API server on loopback whose list pages are made by
// page(path, continue token, limit): the items and the next token.
func fakeLister(t *testing.T, page func(path, cont string, limit int) ([]map[string]any, string)) *Kubeconfig {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/apis/") {
			http.NotFound(w, r) // a server without resource.k8s.io (DRA)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		items, next := page(r.URL.Path, r.URL.Query().Get("continue"), limit)
		if items == nil {
			items = []map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "List", "metadata": map[string]any{"continue": next}, "items": items})
	}))
	t.Cleanup(srv.Close)
	return &Kubeconfig{File: "kubeconfig", Context: "fake", Server: srv.URL}
}

func listPod(i int) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("p%d", i), "namespace": "default"}}
}

// TestFetchPager: Fetch follows continue tokens to the end of a list and
// stops with an error on a server that repeats a token or never stops
// sending new ones, however its pages look. Every case is bounded by a
// deadline, so a pager that loops fails the test instead of hanging it.
func TestFetchPager(t *testing.T) {
	for _, tc := range []struct {
		name string
		// maxPages and maxObjects: the Kubeconfig's bounds (0: defaults).
		maxPages, maxObjects int
		page                 func(path, cont string, limit int) ([]map[string]any, string)
		wantItems            int
		wantErr              string
	}{
		{name: "three pages of pods", wantItems: 5, page: func(path, cont string, limit int) ([]map[string]any, string) {
			// nodes: one empty page; pods: 2 + 2 + 1 over tokens a, b.
			if path == "/api/v1/nodes" {
				return nil, ""
			}
			switch cont {
			case "":
				return []map[string]any{listPod(0), listPod(1)}, "a"
			case "a":
				return []map[string]any{listPod(2), listPod(3)}, "b"
			}
			return []map[string]any{listPod(4)}, ""
		}},
		{name: "same token, no items", wantErr: `continue token "again" a second time`, page: func(string, string, int) ([]map[string]any, string) {
			return nil, "again"
		}},
		{name: "token cycle", wantErr: `continue token "x" a second time`, page: func(_, cont string, _ int) ([]map[string]any, string) {
			// x -> y -> x: a loop of two tokens.
			if cont == "x" {
				return []map[string]any{listPod(0)}, "y"
			}
			return []map[string]any{listPod(1)}, "x"
		}},
		{name: "new tokens, full pages", maxObjects: 2000, wantErr: "over 2000 nodes and pods listed", page: func(_, cont string, limit int) ([]map[string]any, string) {
			// 500 items a page: the 5th page passes 2,000 objects.
			n, _ := strconv.Atoi(cont)
			items := make([]map[string]any, limit)
			for i := range items {
				items[i] = listPod(n*limit + i)
			}
			return items, strconv.Itoa(n + 1)
		}},
		{name: "new tokens, empty pages", maxPages: 50, wantErr: "after 50 pages", page: func(_, cont string, _ int) ([]map[string]any, string) {
			n, _ := strconv.Atoi(cont)
			return nil, strconv.Itoa(n + 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := fakeLister(t, tc.page)
			kc.MaxPages, kc.MaxObjects = tc.maxPages, tc.maxObjects
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b, err := Fetch(ctx, kc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Items []struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				} `json:"items"`
			}
			if err := json.Unmarshal(b, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.wantItems {
				t.Fatalf("%d items, want %d", len(list.Items), tc.wantItems)
			}
			for i, it := range list.Items {
				if want := fmt.Sprintf("p%d", i); it.Kind != "Pod" || it.Metadata.Name != want {
					t.Errorf("item %d: %s %s, want Pod %s", i, it.Kind, it.Metadata.Name, want)
				}
			}
		})
	}
}

// TestFetchPagerDefaults: with no bounds set, a server that sends new
// tokens with 500 items a page forever is stopped at DefaultMaxObjects.
func TestFetchPagerDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 300,000 objects")
	}
	pages := 0
	kc := fakeLister(t, func(_, cont string, limit int) ([]map[string]any, string) {
		pages++
		items := make([]map[string]any, limit)
		for i := range items {
			items[i] = map[string]any{}
		}
		return items, "t" + strconv.Itoa(pages)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := Fetch(ctx, kc)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over %d nodes and pods", DefaultMaxObjects)) {
		t.Fatalf("error %v, want the object bound", err)
	}
	// 500 a page: the page that passes 300,000 is the 601st.
	if pages != DefaultMaxObjects/500+1 {
		t.Errorf("%d pages requested, want %d", pages, DefaultMaxObjects/500+1)
	}
}

// Fetch lists the DRA objects beside nodes and pods, each item with its
// kind; a DRA resource the server does not serve (404) or the user may
// not list (403) is left out, any other failure is the error.
func TestFetchDRA(t *testing.T) {
	serve := func(classes int) *Kubeconfig {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var items []map[string]any
			switch r.URL.Path {
			case "/api/v1/nodes":
				items = []map[string]any{{"metadata": map[string]any{"name": "n"}}}
			case "/api/v1/pods":
			case draAPI + "/deviceclasses":
				if classes != http.StatusOK {
					http.Error(w, `{"message": "no"}`, classes)
					return
				}
				items = []map[string]any{{"metadata": map[string]any{"name": "gpu.nvidia.com"}}}
			case draAPI + "/resourceslices":
				http.Error(w, `{"message": "forbidden"}`, http.StatusForbidden)
				return
			default:
				http.NotFound(w, r)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "List", "metadata": map[string]any{}, "items": items})
		}))
		t.Cleanup(srv.Close)
		return &Kubeconfig{File: "kubeconfig", Context: "fake", Server: srv.URL}
	}
	b, err := Fetch(context.Background(), serve(http.StatusOK))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range l.Items {
		kinds = append(kinds, it.Kind)
	}
	if got := strings.Join(kinds, ","); got != "Node,DeviceClass" {
		t.Errorf("kinds %s, want Node,DeviceClass", got)
	}
	if _, err := Fetch(context.Background(), serve(http.StatusInternalServerError)); err == nil || !strings.Contains(err.Error(), "deviceclasses") {
		t.Errorf("a 500 on deviceclasses: %v, want an error naming it", err)
	}
}
