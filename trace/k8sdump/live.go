package k8sdump

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/userfile"
)

// Kubeconfig is the part of a kubeconfig file that reaching an API server
// needs: one context's server, its CA and the user's credentials.
type Kubeconfig struct {
	File    string // where it came from, for errors
	Context string
	Server  string
	// CA is the PEM of the server's certificate authority (nil: the
	// system's roots); Insecure skips verification (the file asked for it).
	CA       []byte
	Insecure bool
	// ServerName overrides the name checked in the server's certificate
	// (tls-server-name); Proxy is the cluster's proxy-url.
	ServerName string
	Proxy      *url.URL
	// Credentials: a bearer token, a client certificate and key (PEM), or
	// a user name and password.
	Token              string
	CertPEM, KeyPEM    []byte
	Username, Password string
	// PageSize is the number of objects per list request (0: 500).
	PageSize int
	// MaxPages bounds the list requests per resource (0: DefaultMaxPages)
	// and MaxObjects the nodes and pods listed in all (0:
	// DefaultMaxObjects): a server that keeps sending continue tokens is
	// stopped with an error instead of growing memory without bound.
	MaxPages, MaxObjects int
}

// DefaultMaxPages and DefaultMaxObjects bound a live listing (Fetch): at
// 500 objects a page, 1,000 pages are half a million objects, and 300,000
// nodes and pods are twice the largest cluster Kubernetes supports
// (5,000 nodes, 150,000 pods).
const (
	DefaultMaxPages   = 1000
	DefaultMaxObjects = 300000
)

type kubeconfigFile struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server     string `yaml:"server"`
			CAData     string `yaml:"certificate-authority-data"`
			CAFile     string `yaml:"certificate-authority"`
			Insecure   bool   `yaml:"insecure-skip-tls-verify"`
			ServerName string `yaml:"tls-server-name"`
			ProxyURL   string `yaml:"proxy-url"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token     string    `yaml:"token"`
			TokenFile string    `yaml:"tokenFile"`
			CertData  string    `yaml:"client-certificate-data"`
			CertFile  string    `yaml:"client-certificate"`
			KeyData   string    `yaml:"client-key-data"`
			KeyFile   string    `yaml:"client-key"`
			Username  string    `yaml:"username"`
			Password  string    `yaml:"password"`
			Exec      yaml.Node `yaml:"exec"`
			Auth      yaml.Node `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// ReadKubeconfig reads a kubeconfig file and resolves one context (the
// current one when name is empty). Paths inside the file resolve from the
// file's directory, as kubectl does. Credential plugins (exec,
// auth-provider) are not run: the error gives the kubectl pipe that
// imports such a cluster (kubectl runs the plugin), or says to use a
// token or a client certificate.
func ReadKubeconfig(path, name string) (*Kubeconfig, error) {
	b, err := userfile.ReadFile(path, userfile.YAML)
	if err != nil {
		return nil, err
	}
	var f kubeconfigFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if name == "" {
		name = f.CurrentContext
	}
	if name == "" {
		return nil, fmt.Errorf("%s: no current-context; name one with --context", path)
	}
	kc := &Kubeconfig{File: path, Context: name}
	var clusterName, userName string
	found := false
	var names []string
	for _, c := range f.Contexts {
		names = append(names, c.Name)
		if c.Name == name {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: no context %q (contexts: %s)", path, name, strings.Join(names, ", "))
	}
	dir := filepath.Dir(path)
	file := func(field, p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, field, err)
		}
		return b, nil
	}
	data := func(field, s string) ([]byte, error) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: not base64: %w", path, field, err)
		}
		return b, nil
	}
	found = false
	for i, c := range f.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		at := fmt.Sprintf("clusters[%d].cluster", i)
		kc.Server, kc.Insecure = c.Cluster.Server, c.Cluster.Insecure
		switch {
		case c.Cluster.CAData != "":
			if kc.CA, err = data(at+".certificate-authority-data", c.Cluster.CAData); err != nil {
				return nil, err
			}
		case c.Cluster.CAFile != "":
			if kc.CA, err = file(at+".certificate-authority", c.Cluster.CAFile); err != nil {
				return nil, err
			}
		}
		if u, err := url.Parse(kc.Server); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%s: %s.server: %q is not an http(s) URL", path, at, kc.Server)
		}
		if kc.Insecure && kc.CA != nil {
			return nil, fmt.Errorf("%s: %s: a certificate authority and insecure-skip-tls-verify together (kubectl refuses this too)", path, at)
		}
		kc.ServerName = c.Cluster.ServerName
		if c.Cluster.ProxyURL != "" {
			u, err := url.Parse(c.Cluster.ProxyURL)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("%s: %s.proxy-url: %q is not a URL", path, at, c.Cluster.ProxyURL)
			}
			kc.Proxy = u
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: context %q names cluster %q, which is not in clusters", path, name, clusterName)
	}
	found = false
	for i, u := range f.Users {
		if u.Name != userName {
			continue
		}
		found = true
		at := fmt.Sprintf("users[%d].user", i)
		plugin := func(n yaml.Node) bool { return !n.IsZero() && n.Tag != "!!null" }
		if plugin(u.User.Exec) || plugin(u.User.Auth) {
			return nil, fmt.Errorf("%s: %s uses a credential plugin (exec or auth-provider, as managed clusters do), which wattsched does not run (its core has no Kubernetes client): let kubectl run it: 'kubectl get nodes,pods -A -o json | wattsched import k8s -f - -o DIR' (or use a kubeconfig with a token or a client certificate)", path, at)
		}
		kc.Token, kc.Username, kc.Password = u.User.Token, u.User.Username, u.User.Password
		if u.User.TokenFile != "" { // as in kubectl, the file wins over an inline token
			b, err := file(at+".tokenFile", u.User.TokenFile)
			if err != nil {
				return nil, err
			}
			kc.Token = strings.TrimSpace(string(b))
		}
		if kc.Token != "" && (kc.Username != "" || kc.Password != "") {
			return nil, fmt.Errorf("%s: %s: a token and a user name/password: give one authentication method", path, at)
		}
		for _, c := range []struct {
			dst        *[]byte
			d, f, what string
		}{{&kc.CertPEM, u.User.CertData, u.User.CertFile, "client-certificate"}, {&kc.KeyPEM, u.User.KeyData, u.User.KeyFile, "client-key"}} {
			switch {
			case c.d != "":
				if *c.dst, err = data(at+"."+c.what+"-data", c.d); err != nil {
					return nil, err
				}
			case c.f != "":
				if *c.dst, err = file(at+"."+c.what, c.f); err != nil {
					return nil, err
				}
			}
		}
		if (kc.CertPEM == nil) != (kc.KeyPEM == nil) {
			return nil, fmt.Errorf("%s: %s: a client certificate needs its key and the other way round", path, at)
		}
	}
	if !found && userName != "" {
		return nil, fmt.Errorf("%s: context %q names user %q, which is not in users", path, name, userName)
	}
	return kc, nil
}

// maxListBytes bounds one list response (a cluster of 5,000 nodes and
// 150,000 pods is a few hundred MB at most).
const maxListBytes = 1 << 30

// Fetch lists the cluster's nodes and pods (all namespaces) through the API
// server, page by page, and returns them as the List that
// `kubectl get nodes,pods -A -o json` prints, for Read. It lists the DRA
// objects too (resource.k8s.io/v1 DeviceClasses, ResourceSlices,
// ResourceClaims, ResourceClaimTemplates); a cluster that does not serve
// them (404) or a user who may not list them (403) gets none, as before.
func Fetch(ctx context.Context, kc *Kubeconfig) ([]byte, error) {
	client, err := kc.client()
	if err != nil {
		return nil, err
	}
	maxPages, maxObjects := kc.MaxPages, kc.MaxObjects
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	if maxObjects <= 0 {
		maxObjects = DefaultMaxObjects
	}
	var items []json.RawMessage
	size := 0 // bytes of items so far
	for _, res := range []struct {
		path, kind string
		optional   bool
	}{{"/api/v1/nodes", "Node", false}, {"/api/v1/pods", "Pod", false},
		{draAPI + "/deviceclasses", draKindClass, true}, {draAPI + "/resourceslices", draKindSlice, true},
		{draAPI + "/resourceclaims", draKindClaim, true}, {draAPI + "/resourceclaimtemplates", draKindTmpl, true}} {
		cont := ""
		seen := map[string]bool{}
		for pages := 1; ; pages++ {
			if pages > maxPages {
				return nil, fmt.Errorf("context %s: GET %s: still sending continue tokens after %d pages: stopped (a paging loop on the server?)", kc.Context, res.path, maxPages)
			}
			limit := kc.PageSize
			if limit <= 0 {
				limit = 500
			}
			q := url.Values{"limit": {strconv.Itoa(limit)}}
			if cont != "" {
				q.Set("continue", cont)
			}
			var page struct {
				Metadata struct {
					Continue string `json:"continue"`
				} `json:"metadata"`
				Items []map[string]json.RawMessage `json:"items"`
			}
			if err := kc.get(ctx, client, res.path+"?"+q.Encode(), &page); err != nil {
				var se statusErr
				if res.optional && pages == 1 && errors.As(err, &se) && (se.code == http.StatusNotFound || se.code == http.StatusForbidden) {
					break
				}
				return nil, err
			}
			kind, _ := json.Marshal(res.kind)
			for _, it := range page.Items {
				it["kind"] = kind // list items carry no kind; kubectl adds it
				b, err := json.Marshal(it)
				if err != nil {
					return nil, err
				}
				items, size = append(items, b), size+len(b)
			}
			if len(items) > maxObjects {
				return nil, fmt.Errorf("context %s: GET %s: over %d nodes and pods listed: stopped (twice the largest cluster Kubernetes supports)", kc.Context, res.path, maxObjects)
			}
			if size > maxListBytes {
				return nil, fmt.Errorf("context %s: GET %s: over %d bytes of nodes and pods listed: stopped", kc.Context, res.path, maxListBytes)
			}
			if cont = page.Metadata.Continue; cont == "" {
				break
			}
			if seen[cont] {
				return nil, fmt.Errorf("context %s: GET %s: the server sent continue token %.40q a second time: stopped (a paging loop on the server)", kc.Context, res.path, cont)
			}
			seen[cont] = true
		}
	}
	return json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

func (kc *Kubeconfig) client() (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: kc.Insecure, ServerName: kc.ServerName} //nolint:gosec // only when the kubeconfig asks for it
	if kc.CA != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(kc.CA) {
			return nil, fmt.Errorf("%s: context %s: the certificate authority holds no PEM certificate", kc.File, kc.Context)
		}
		tc.RootCAs = pool
	}
	if kc.CertPEM != nil {
		cert, err := tls.X509KeyPair(kc.CertPEM, kc.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("%s: context %s: client certificate: %w", kc.File, kc.Context, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	proxy := http.ProxyFromEnvironment
	if kc.Proxy != nil {
		proxy = http.ProxyURL(kc.Proxy)
	}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: tc, Proxy: proxy}}, nil
}

func (kc *Kubeconfig) get(ctx context.Context, c *http.Client, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(kc.Server, "/")+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	switch {
	case kc.Token != "":
		req.Header.Set("Authorization", "Bearer "+kc.Token)
	case kc.Username != "":
		req.SetBasicAuth(kc.Username, kc.Password)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("context %s: %w", kc.Context, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return fmt.Errorf("context %s: GET %s: %w", kc.Context, path, err)
	}
	if len(b) > maxListBytes {
		return fmt.Errorf("context %s: GET %s: response over %d bytes", kc.Context, path, maxListBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &st)
		if st.Message == "" {
			st.Message = string(bytes.TrimSpace(b[:min(len(b), 200)]))
		}
		return statusErr{resp.StatusCode, fmt.Errorf("context %s: GET %s: %s: %s", kc.Context, path, resp.Status, st.Message)}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("context %s: GET %s: %w", kc.Context, path, err)
	}
	return nil
}

// draAPI is the path of resource.k8s.io/v1 (DRA, GA in Kubernetes 1.34).
const draAPI = "/apis/resource.k8s.io/v1"

// statusErr is an API server's answer other than 200 OK.
type statusErr struct {
	code int
	err  error
}

func (e statusErr) Error() string { return e.err.Error() }
func (e statusErr) Unwrap() error { return e.err }
