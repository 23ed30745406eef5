package prom

import (
	"strings"
	"testing"
)

// A range answer's times increase within each series and lie in
// 1970..2100 (issue 40: calibrate --from accepted repeated timestamps,
// which docs/measured-power.md calls an error).
func TestParseRangeTimes(t *testing.T) {
	answer := func(values string) []byte {
		return []byte(`{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"gpu": "0"}, "values": [` + values + `]}]}}`)
	}
	if s, err := ParseRange(answer(`[100, "1"], [115, "2"]`)); err != nil || len(s[0].Points) != 2 {
		t.Fatalf("increasing times: %v %v", s, err)
	}
	for _, c := range []struct{ values, want string }{
		{`[100, "1"], [100, "2"]`, "data.result[0].values[1][0]: time 1970-01-01T00:01:40Z is not after the previous point's 1970-01-01T00:01:40Z"},
		{`[100, "1"], [99, "2"]`, "data.result[0].values[1][0]: time 1970-01-01T00:01:39Z is not after"},
		{`[-1, "1"]`, "data.result[0].values[0]: [0]: -1 s is outside 1970..2100"},
		{`[1e300, "1"]`, "[0]: 1e300 s is outside 1970..2100"},
	} {
		if _, err := ParseRange(answer(c.values)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.values, err, c.want)
		}
	}
}
