package prom_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/power/prom"
)

// ParseRange and ParseVector never panic, and a result they accept has
// every point's time and value decoded.
func FuzzParseRange(f *testing.F) {
	saved, err := os.ReadFile("../../internal/cli/testdata/calibrate/query-range.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[1.5,"NaN"]}]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"x"}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"+Inf"],[2]]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := prom.ParseRange(b); err == nil {
			for _, x := range s {
				if x.Labels == nil {
					t.Fatal("series without labels accepted")
				}
			}
			// A recording of any accepted answer reads without panicking.
			if rec, err := prom.NewRecorded(s, prom.RecordedConfig{}); err == nil {
				first, last := rec.Span()
				for _, n := range rec.Nodes() {
					for _, at := range []time.Time{first.Add(-time.Second), first, last, last.Add(time.Hour)} {
						rec.Status(n, at)
					}
				}
			}
		}
		_, _ = prom.ParseVector(b)
	})
}

// Each malformed answer is an error naming its JSON path.
func TestParseErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"2"],[2]]}]}}`: "data.result[0].values[1]: want [unix_seconds",
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[["x","2"]]}]}}`:   "data.result[0].values[0]: [0]: want a number",
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"watts"]]}]}}`: `data.result[0].values[0]: [1]: "watts" is not a number`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,"2"]]}]}}`:                 "data.result[0].metric: missing",
		`{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}`:                                "data",
		`{"status":"fail"}`: `status: "fail"`,
	} {
		_, err := prom.ParseRange([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", body, err, want)
		}
	}
}
