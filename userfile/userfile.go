// Package userfile opens the files a user names (scenarios, traces,
// tables, catalogs, series, recordings, dumps) with the bounds every
// reader shares: a limit on the bytes read (counted after decompression),
// a limit on the length of one line for line-oriented formats, no NUL
// byte (none of the formats is binary), and gzip recognised by its magic
// bytes whatever the file's name. A file past a bound is an error that
// names it (and the line), found as soon as the bound is crossed: /dev/zero
// fails at its first byte.
package userfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limit is the bound of one kind of file.
type Limit struct {
	// Bytes is the most a file may hold, decompressed.
	Bytes int64
	// LineBytes is the most one line may hold, its newline excluded (0: no
	// bound, for JSON and YAML documents read whole).
	LineBytes int
	// Lines is the most lines a file may have (0: no bound): a stream of
	// empty lines costs a line-oriented reader far more than its bytes.
	Lines int
	// What names the kind of file in errors ("a scenario file").
	What string
}

// The documented bounds (docs/formats.md, "Size limits"). The largest real
// inputs are far below them: the openb pod lists are 0.6 MB with 200-byte
// lines, a Philly table 3.4 MB, a year of hourly prices 0.6 MB, the longest
// line of a public trace (PAI's mini-batch table) 40 KB.
var (
	// Scenario bounds a scenario file.
	Scenario = Limit{Bytes: 4 << 20, What: "a scenario file"}
	// YAML bounds a YAML file other than a scenario: a hardware catalog,
	// a kubeconfig (the YAML decoder holds the whole document, its nodes
	// several times its size).
	YAML = Limit{Bytes: 16 << 20, What: "a YAML input file"}
	// Document bounds a JSON file: a measured-power recording, a
	// Kubernetes dump, a calibration input.
	Document = Limit{Bytes: 256 << 20, What: "a JSON input file"}
	// Table bounds a line-oriented trace or table (CSV, SWF, Gavel
	// traces, price and carbon series), read as a stream. 2^26 lines
	// of 20 bytes, a short row, are past the byte bound already.
	Table = Limit{Bytes: 1 << 30, LineBytes: 1 << 20, Lines: 1 << 26, What: "a trace or table file"}
)

// LimitError is a file past one of its bounds, or a file that is not text.
type LimitError struct {
	File string
	// Line is the 1-based line where the bound was crossed (0: unknown).
	Line int
	Err  error
}

func (e *LimitError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *LimitError) Unwrap() error { return e.Err }

// size writes n bytes as the docs do ("4 MiB").
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// bounded enforces a Limit on a decompressed stream.
type bounded struct {
	r     io.Reader
	name  string
	lim   Limit
	n     int64 // bytes read
	line  int   // current line, 1-based
	width int   // bytes of the current line so far
	err   error
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Read at most one byte past the limit, so that crossing it is seen.
	if room := b.lim.Bytes + 1 - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	for i, c := range p[:n] {
		if b.n+int64(i) == b.lim.Bytes {
			b.err = &LimitError{File: b.name, Line: b.line, Err: fmt.Errorf("larger than %s (the limit of %s, counted after decompression)", size(b.lim.Bytes), b.lim.What)}
			return i, b.err
		}
		// Line Lines+1 may not hold a byte, nor end: a file of Lines lines
		// may end with a newline.
		if b.lim.Lines > 0 && b.line > b.lim.Lines {
			b.err = &LimitError{File: b.name, Line: b.line, Err: fmt.Errorf("more than %d lines (the limit of %s)", b.lim.Lines, b.lim.What)}
			return i, b.err
		}
		switch c {
		case '\n':
			b.line++
			b.width = 0
			continue
		case 0:
			b.err = &LimitError{File: b.name, Line: b.line, Err: fmt.Errorf("NUL byte at offset %d: not a text file", b.n+int64(i))}
			return i, b.err
		}
		if b.width++; b.lim.LineBytes > 0 && b.width > b.lim.LineBytes {
			b.err = &LimitError{File: b.name, Line: b.line, Err: fmt.Errorf("line longer than %s (the limit of one line of %s)", size(int64(b.lim.LineBytes)), b.lim.What)}
			return i, b.err
		}
	}
	b.n += int64(n)
	return n, err
}

// Reader returns r, named name in errors, decompressed when it starts with
// gzip's magic bytes and bounded by lim.
func Reader(r io.Reader, name string, lim Limit) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(gzipMagic))
	switch {
	case err == nil || err == io.EOF:
	case IsLimit(err): // r is bounded already: its error names the file
		return nil, err
	default:
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var src io.Reader = br
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &LimitError{File: name, Err: fmt.Errorf("gzip: %w", err)}
		}
		zr.Multistream(true)
		src = zr
	}
	return &bounded{r: src, name: name, lim: lim, line: 1}, nil
}

// File is an open user file: read it through Reader.
type File struct {
	io.Reader
	f *os.File
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// OpenRegular opens path for reading if it is a regular file (after
// symbolic links) and refuses at once anything else: a directory, a named
// pipe (FIFO, which would block until a writer came), a device (which
// may never end, as /dev/zero), a socket. It opens without blocking and
// checks the file it opened, so a FIFO put in place meanwhile is refused
// too.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, want a regular file", path, kind(m))
	}
	return f, nil
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// Open opens path for reading within lim (see Reader); only a regular
// file (see OpenRegular).
func Open(path string, lim Limit) (*File, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	r, err := Reader(f, path, lim)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{Reader: r, f: f}, nil
}

// ReadFile reads the whole of path within lim (see Reader).
func ReadFile(path string, lim Limit) ([]byte, error) {
	f, err := Open(path, lim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// ReadAll reads the whole of r, named name in errors, within lim.
func ReadAll(r io.Reader, name string, lim Limit) ([]byte, error) {
	br, err := Reader(r, name, lim)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(br)
}

// IsLimit reports whether err is (or wraps) a LimitError.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}
