// Package trace holds what the trace readers below it share.
package trace

import "fmt"

// ParseError locates a bad line or field of a trace file: file, 1-based
// line, and the column's name (empty when the whole line is bad).
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }
