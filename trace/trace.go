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
