// Package trace holds what the trace readers below it share.
package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wattsched/wattsched/userfile"
)

// ParseError locates a bad line or field of a trace file: file, 1-based
// line, and the column's name (empty when the whole line is bad).
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	// A file past a size bound, or not text, names its file and line itself.
	var le *userfile.LimitError
	if errors.As(e.Err, &le) {
		return le.Error()
	}
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// GPUJob is a training job as GPU-cluster traces record it: when it was
// submitted, how long it ran and on how many GPUs.
type GPUJob struct {
	ID string
	// SubmitSec is seconds from the trace's start; DurationSec the run time.
	SubmitSec, DurationSec float64
	GPUs                   int
	// Line is the record's line in its file.
	Line int
}

// CSV reads a CSV file whose errors name the file: records may have any
// number of fields (the reader checks them).
type CSV struct {
	*csv.Reader
	File string
}

// OpenCSV reads a CSV file's header; an empty file or an unreadable header
// is a ParseError on line 1. The file is read within the bounds of a table
// (userfile.Table), gzip-compressed or not.
func OpenCSV(r io.Reader, file string) (*CSV, []string, error) {
	r, err := userfile.Reader(r, file, userfile.Table)
	if err != nil {
		return nil, nil, err
	}
	c := &CSV{Reader: csv.NewReader(r), File: file}
	c.FieldsPerRecord = -1
	head, err := c.Read()
	if err == io.EOF {
		return nil, nil, c.Bad(1, "", errors.New("empty file"))
	}
	if err != nil {
		return nil, nil, c.Bad(1, "", err)
	}
	return c, head, nil
}

// Columns returns the index in head of each of want; a missing one is a
// ParseError on line 1 that names it and the columns wanted.
func (c *CSV) Columns(head, want []string) ([]int, error) {
	cols := make([]int, len(want))
	for k, w := range want {
		if cols[k] = slices.Index(head, w); cols[k] < 0 {
			return nil, c.Bad(1, "", fmt.Errorf("header %q lacks %q (want %s)", strings.Join(head, ","), w, strings.Join(want, ",")))
		}
	}
	return cols, nil
}

// Rows calls row for each record after the header, with the line it
// starts on (a quoted field may span lines), until the end of the file or
// row's first error; a record that is not CSV or has another number of
// fields than the header (width) is a ParseError. It returns the line
// after the last record.
func (c *CSV) Rows(width int, row func(line int, rec []string) error) (int, error) {
	next := 2
	for {
		rec, err := c.Read()
		if err == io.EOF {
			return next, nil
		}
		if err != nil {
			line := next
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			return line, c.Bad(line, "", err)
		}
		line, _ := c.FieldPos(0)
		end, _ := c.FieldPos(len(rec) - 1)
		next = end + 1
		if len(rec) != width {
			return line, c.Bad(line, "", fmt.Errorf("%d fields, want %d", len(rec), width))
		}
		if err := row(line, rec); err != nil {
			return line, err
		}
	}
}

// Bad is a ParseError at line and column of the file.
func (c *CSV) Bad(line int, col string, err error) error {
	return &ParseError{File: c.File, Line: line, Column: col, Err: err}
}

// MaxNameBytes bounds a name in a trace (a pod, node or job name).
const MaxNameBytes = 256

// CheckName checks a name read from a trace: not empty, at most
// MaxNameBytes, valid UTF-8 and no control character (a name is one line
// of printable text; NUL, escape sequences and newlines would reach
// outputs and terminals).
func CheckName(s string) error {
	switch {
	case s == "":
		return errors.New("empty name")
	case len(s) > MaxNameBytes:
		return fmt.Errorf("name of %d bytes, more than %d", len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("name %q is not UTF-8", s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("name %q holds the control character %U", s, r)
		}
	}
	return nil
}
