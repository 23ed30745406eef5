package cedla

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace"
)

const jobsHead = "id,model,arrival_slot,deadline_slot,epochs,priority\n"

// A job list is read in arrival order (stable), with engine IDs 0..n-1 and
// the file's ids kept beside them.
func TestReadJobs(t *testing.T) {
	doc := "priority,epochs,deadline_slot,arrival_slot,model,id\n" + // any column order
		"1,0.5,20,5,VGG19,late\n" +
		"0,2,30,0,ResNet152,first\n" +
		"2,0.25,9,5,InceptionV3,tie\n"
	got, err := ReadJobs(strings.NewReader(doc), "jobs.csv", DNNs, 96)
	if err != nil {
		t.Fatal(err)
	}
	want := &ScenarioJobs{
		Jobs: []policy.SlotJob{
			{ID: 0, Model: 0, Arrival: 0, Deadline: 30, Epochs: 2, Priority: 0},
			{ID: 1, Model: 1, Arrival: 5, Deadline: 20, Epochs: 0.5, Priority: 1},
			{ID: 2, Model: 2, Arrival: 5, Deadline: 9, Epochs: 0.25, Priority: 2},
		},
		IDs: []string{"first", "late", "tie"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadJobs (-want +got):\n%s", d)
	}
}

// Every bad cell is one error naming file, line and column.
func TestReadJobsErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"empty", "", "jobs.csv:1: empty file"},
		{"missing column", "id,model,arrival_slot,deadline_slot,epochs\n", `jobs.csv:1: header "id,model,arrival_slot,deadline_slot,epochs" lacks "priority"`},
		{"no rows", jobsHead, "jobs.csv:2: no jobs"},
		{"fields", jobsHead + "a,VGG19,0,5,1\n", "jobs.csv:2: 5 fields, want 6"},
		{"empty id", jobsHead + " ,VGG19,0,5,1,0\n", "jobs.csv:2: column id: empty"},
		{"control character in an id", jobsHead + "a\x1b,VGG19,0,5,1,0\n", `jobs.csv:2: column id: name "a\x1b" holds the control character U+001B`},
		{"NUL in an id", jobsHead + "a\x00,VGG19,0,5,1,0\n", `jobs.csv:2: NUL byte at offset`},
		{"duplicate id", jobsHead + "a,VGG19,0,5,1,0\na,VGG19,0,5,1,0\n", `jobs.csv:3: column id: "a" also on line 2`},
		{"model", jobsHead + "a,BERT,0,5,1,0\n", `jobs.csv:2: column model: "BERT", want one of ResNet152, VGG19, InceptionV3`},
		{"arrival past the horizon", jobsHead + "a,VGG19,96,97,1,0\n", `jobs.csv:2: column arrival_slot: "96", want an integer 0..95`},
		{"deadline before arrival", jobsHead + "a,VGG19,10,9,1,0\n", `jobs.csv:2: column deadline_slot: "9", want an integer 10..95`},
		{"deadline not an integer", jobsHead + "a,VGG19,10,1e3,1,0\n", `jobs.csv:2: column deadline_slot: "1e3"`},
		{"epochs zero", jobsHead + "a,VGG19,0,5,0,0\n", `jobs.csv:2: column epochs: "0", want a number in (0, 1e6]`},
		{"epochs NaN", jobsHead + "a,VGG19,0,5,NaN,0\n", `jobs.csv:2: column epochs: "NaN"`},
		{"priority", jobsHead + "a,VGG19,0,5,1,-1\n", `jobs.csv:2: column priority: "-1", want an integer 0..1000`},
		{"quote", jobsHead + "a,\"VGG19,0,5,1,0\n", "jobs.csv:2: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadJobs(strings.NewReader(c.doc), "jobs.csv", DNNs, 96)
			var pe *trace.ParseError
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &pe) {
				t.Fatalf("ReadJobs = %v, want a ParseError containing %q", err, c.want)
			}
		})
	}
}

// A load file is requests/min per slot and model; the look-ahead past its
// last slot keeps the last row.
func TestReadLoad(t *testing.T) {
	doc := "slot,InceptionV3,VGG19,ResNet152\n0,60,120,0\n1,6,12,30\n"
	got, err := ReadLoad(strings.NewReader(doc), "load.csv", DNNs, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Requests/s = requests/min / 60, columns in DNNs order (ResNet152, VGG19, InceptionV3).
	want := [][]float64{{0, 2, 1}, {0.5, 0.2, 0.1}, {0.5, 0.2, 0.1}, {0.5, 0.2, 0.1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadLoad (-want +got):\n%s", d)
	}
}

func TestReadLoadErrors(t *testing.T) {
	const head = "slot,ResNet152,VGG19,InceptionV3\n"
	cases := []struct{ name, doc, want string }{
		{"missing model", "slot,ResNet152,VGG19\n0,1,2\n", `load.csv:1: header "slot,ResNet152,VGG19" lacks "InceptionV3"`},
		{"slot order", head + "0,1,1,1\n2,1,1,1\n", `load.csv:3: column slot: "2", want 1 (one row per slot, in order from 0)`},
		{"negative", head + "0,1,-1,1\n", `load.csv:2: column VGG19: "-1", want requests/min in 0..1e8`},
		{"not a number", head + "0,1,1,x\n", `load.csv:2: column InceptionV3: "x"`},
		{"too short", head + "0,1,1,1\n", "load.csv:3: 1 slots, want at least the scenario's 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadLoad(strings.NewReader(c.doc), "load.csv", DNNs, 2, 4)
			var pe *trace.ParseError
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &pe) {
				t.Fatalf("ReadLoad = %v, want a ParseError containing %q", err, c.want)
			}
		})
	}
}

// Whatever the input, the readers either fail or return jobs and loads the
// engine accepts.
func FuzzReadJobs(f *testing.F) {
	f.Add(jobsHead + "a,VGG19,0,5,1,0\nb,ResNet152,3,3,0.5,2\n")
	f.Add(jobsHead + "a,VGG19,0,5,1e-300,0\n")
	f.Fuzz(func(t *testing.T, doc string) {
		js, err := ReadJobs(strings.NewReader(doc), "f.csv", DNNs, 8)
		if err != nil {
			return
		}
		for k, j := range js.Jobs {
			if j.ID != k || j.Model < 0 || j.Model >= len(DNNs) || j.Arrival < 0 || j.Deadline < j.Arrival || j.Deadline >= 8 || !(j.Epochs > 0) ||
				k > 0 && js.Jobs[k-1].Arrival > j.Arrival || js.IDs[k] == "" {
				t.Fatalf("job %d: %+v (id %q)", k, j, js.IDs[k])
			}
		}
	})
}

func FuzzReadLoad(f *testing.F) {
	f.Add("slot,ResNet152,VGG19,InceptionV3\n0,1,2,3\n1,0,0,0\n")
	f.Fuzz(func(t *testing.T, doc string) {
		l, err := ReadLoad(strings.NewReader(doc), "f.csv", DNNs, 2, 3)
		if err != nil {
			return
		}
		if len(l) < 5 {
			t.Fatalf("%d slots, want at least 5", len(l))
		}
		for h, row := range l {
			for i, v := range row {
				if !(v >= 0) || v > 1e8/60 {
					t.Fatalf("slot %d model %d: %v", h, i, v)
				}
			}
		}
	})
}
