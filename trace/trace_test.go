package trace

import (
	"errors"
	"strings"
	"testing"
)

// Rows names the line a record starts on, also after a quoted field that
// spans lines, and checks the field count.
func TestRowsLines(t *testing.T) {
	c, head, err := OpenCSV(strings.NewReader("a,b\n1,\"x\ny\"\n2,z\n3\n"), "f.csv")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := c.Columns(head, []string{"b", "a"})
	if err != nil || cols[0] != 1 || cols[1] != 0 {
		t.Fatalf("columns %v %v", cols, err)
	}
	var lines []int
	_, err = c.Rows(len(head), func(line int, rec []string) error {
		lines = append(lines, line)
		return nil
	})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 5 || !strings.Contains(err.Error(), "1 fields, want 2") {
		t.Fatalf("error %v, want the short record on line 5", err)
	}
	if len(lines) != 2 || lines[0] != 2 || lines[1] != 4 {
		t.Errorf("record lines %v, want [2 4]", lines)
	}
	if _, err := c.Columns(head, []string{"c"}); err == nil || !strings.Contains(err.Error(), `lacks "c"`) {
		t.Errorf("missing column: %v", err)
	}
}
