// Package prom reads measured power from a Prometheus server's HTTP API
// (plain net/http and encoding/json): node and GPU power from the NVIDIA
// DCGM exporter's or Kepler's series with PromQL, with staleness handling
// (Meter), and range queries for calibration (ParseRange). It never
// imports k8s.io; the Kubernetes PowerBudget plugin and the calibrate
// command use it.
package prom

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sample is one series' value at one time.
type Sample struct {
	Labels map[string]string
	Value  float64
	Time   time.Time
}

// Series is one series over a range.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one value of a range series.
type Point struct {
	Time  time.Time
	Value float64
}

// Client runs PromQL queries against one server's HTTP API (/api/v1).
type Client struct {
	base *url.URL
	http *http.Client
}

// NewClient returns a client for the server at base (http or https URL);
// every request is bounded by timeout.
func NewClient(base string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus url %q: want http(s)://host:port", base)
	}
	if !(timeout > 0) {
		return nil, fmt.Errorf("prometheus timeout %v: want a positive duration", timeout)
	}
	return &Client{base: u, http: &http.Client{Timeout: timeout}}, nil
}

// maxBody bounds a response body: a larger one is an error, not a
// memory hazard.
const maxBody = 64 << 20

func (c *Client) get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	u := c.base.JoinPath(path)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Path, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("GET %s: response over %d bytes", u.Path, maxBody)
	}
	// The API answers errors with a JSON body and a 4xx/5xx status:
	// decode it for the message when it is there.
	if resp.StatusCode != http.StatusOK {
		var e envelope
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("GET %s: %s: %s (%s)", u.Path, resp.Status, e.Error, e.ErrorType)
		}
		return nil, fmt.Errorf("GET %s: %s", u.Path, resp.Status)
	}
	return body, nil
}

// Query runs an instant query at t; the result must be a vector.
func (c *Client) Query(ctx context.Context, query string, t time.Time) ([]Sample, error) {
	body, err := c.get(ctx, "/api/v1/query", url.Values{"query": {query}, "time": {formatTime(t)}})
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	s, err := ParseVector(body)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	return s, nil
}

// QueryRange runs a range query; the result must be a matrix.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, error) {
	s, _, err := c.QueryRangeRaw(ctx, query, start, end, step)
	return s, err
}

// QueryRangeRaw is QueryRange that also returns the server's answer as
// it came (to save it: ParseRange reads it back).
func (c *Client) QueryRangeRaw(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, []byte, error) {
	q := url.Values{"query": {query}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	body, err := c.get(ctx, "/api/v1/query_range", q)
	if err != nil {
		return nil, nil, fmt.Errorf("range query %q: %w", query, err)
	}
	s, err := ParseRange(body)
	if err != nil {
		return nil, nil, fmt.Errorf("range query %q: %w", query, err)
	}
	return s, body, nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// envelope is the API's response: status, data or error.
type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

type result struct {
	ResultType string `json:"resultType"`
	Result     []struct {
		Metric map[string]string `json:"metric"`
		Value  json.RawMessage   `json:"value"`
		Values []json.RawMessage `json:"values"`
	} `json:"result"`
}

func decode(body []byte, want string) (*result, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	if e.Status != "success" {
		if e.Error != "" {
			return nil, fmt.Errorf("status: %q: %s (%s)", e.Status, e.Error, e.ErrorType)
		}
		return nil, fmt.Errorf("status: %q, want \"success\"", e.Status)
	}
	var r result
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if r.ResultType != want {
		return nil, fmt.Errorf("data.resultType: %q, want %q", r.ResultType, want)
	}
	return &r, nil
}

// ParseVector decodes an instant query's response (a vector result).
// Errors name the JSON path of the bad value.
func ParseVector(body []byte) ([]Sample, error) {
	r, err := decode(body, "vector")
	if err != nil {
		return nil, err
	}
	out := make([]Sample, 0, len(r.Result))
	for i, s := range r.Result {
		p, err := point(s.Value)
		if err != nil {
			return nil, fmt.Errorf("data.result[%d].value: %w", i, err)
		}
		out = append(out, Sample{Labels: s.Metric, Value: p.Value, Time: p.Time})
	}
	return out, nil
}

// ParseRange decodes a range query's response (a matrix result), the
// JSON that /api/v1/query_range returns (and that a file saved from it
// holds). Errors name the JSON path of the bad value.
func ParseRange(body []byte) ([]Series, error) {
	r, err := decode(body, "matrix")
	if err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(r.Result))
	for i, s := range r.Result {
		if s.Metric == nil {
			return nil, fmt.Errorf("data.result[%d].metric: missing", i)
		}
		ser := Series{Labels: s.Metric, Points: make([]Point, 0, len(s.Values))}
		for j, v := range s.Values {
			p, err := point(v)
			if err != nil {
				return nil, fmt.Errorf("data.result[%d].values[%d]: %w", i, j, err)
			}
			if n := len(ser.Points); n > 0 && !p.Time.After(ser.Points[n-1].Time) {
				// Prometheus answers each series in increasing time; a
				// repeated or earlier time is an edited or corrupt file.
				return nil, fmt.Errorf("data.result[%d].values[%d][0]: time %s is not after the previous point's %s: a range answer's times increase",
					i, j, p.Time.Format(time.RFC3339Nano), ser.Points[n-1].Time.Format(time.RFC3339Nano))
			}
			ser.Points = append(ser.Points, p)
		}
		out = append(out, ser)
	}
	return out, nil
}

// maxUnix is 2100-01-01T00:00:00Z: the times a series may hold are
// 1970..2100, as every reader's (a time past int64 seconds wrapped).
const maxUnix = 4102444800

// point decodes [unix seconds, "value"]. Values may be NaN or infinite
// (Prometheus writes "NaN", "+Inf"); callers decide what to do with them.
func point(raw json.RawMessage) (Point, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return Point{}, fmt.Errorf("want [unix_seconds, \"value\"], got %s", clip(raw))
	}
	var ts float64
	if err := json.Unmarshal(pair[0], &ts); err != nil || math.IsNaN(ts) || math.IsInf(ts, 0) {
		return Point{}, fmt.Errorf("[0]: want a number of seconds, got %s", clip(pair[0]))
	}
	if !(ts >= 0 && ts < maxUnix) {
		return Point{}, fmt.Errorf("[0]: %s s is outside 1970..2100", clip(pair[0]))
	}
	var vs string
	if err := json.Unmarshal(pair[1], &vs); err != nil {
		return Point{}, fmt.Errorf("[1]: want a quoted number, got %s", clip(pair[1]))
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return Point{}, fmt.Errorf("[1]: %q is not a number", vs)
	}
	sec, frac := math.Modf(ts)
	return Point{Time: time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6).UTC(), Value: v}, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
