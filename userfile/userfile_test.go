package userfile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// small is a bound small enough to cross in a test: 64 bytes, lines of 16.
var small = Limit{Bytes: 64, LineBytes: 16, What: "a test file"}

func TestReader(t *testing.T) {
	rows := "a,b\n1,2\n"
	for _, c := range []struct {
		name string
		in   []byte
		lim  Limit
		want string // the bytes read, when no error
		err  string // in the error, when one
	}{
		{name: "plain", in: []byte(rows), lim: small, want: rows},
		{name: "gzip by its magic bytes", in: gz(t, []byte(rows)), lim: small, want: rows},
		{name: "empty", in: nil, lim: small, want: ""},
		{name: "one byte", in: []byte("x"), lim: small, want: "x"},
		{name: "exactly the limit", in: []byte(strings.Repeat("123456789012345\n", 4)), lim: small, want: strings.Repeat("123456789012345\n", 4)},
		{name: "a line of exactly LineBytes", in: []byte(strings.Repeat("x", 16)), lim: small, want: strings.Repeat("x", 16)},
		// 65 bytes: one past Bytes.
		{name: "one byte past the limit", in: []byte(strings.Repeat("123456789012345\n", 4) + "x"), lim: small, err: "f.csv:5: larger than 64 bytes (the limit of a test file, counted after decompression)"},
		// 17 bytes without a newline: one past LineBytes, on line 2.
		{name: "long line", in: []byte("ok\n" + strings.Repeat("x", 17)), lim: small, err: "f.csv:2: line longer than 16 bytes (the limit of one line of a test file)"},
		{name: "no line bound", in: []byte(strings.Repeat("x", 60)), lim: Limit{Bytes: 64, What: "a document"}, want: strings.Repeat("x", 60)},
		{name: "NUL", in: []byte("a\nb\x00"), lim: small, err: "f.csv:2: NUL byte at offset 3: not a text file"},
		{name: "NUL inside gzip", in: gz(t, make([]byte, 1000)), lim: small, err: "f.csv:1: NUL byte at offset 0"},
		// A gzip bomb: 1 MB of newlines from a 1 KB file stops at the
		// bound on the decompressed bytes.
		{name: "gzip bomb", in: gz(t, bytes.Repeat([]byte{'\n'}, 1<<20)), lim: small, err: "f.csv:65: larger than 64 bytes"},
		// 5 lines of a bound of 4: the error is on line 5, where a fifth
		// line would start.
		{name: "too many lines", in: []byte("a\nb\nc\nd\ne"), lim: Limit{Bytes: 64, Lines: 4, What: "a test file"}, err: "f.csv:5: more than 4 lines"},
		{name: "lines at the bound", in: []byte("a\nb\nc\nd"), lim: Limit{Bytes: 64, Lines: 4, What: "a test file"}, want: "a\nb\nc\nd"},
		{name: "lines at the bound, newline-ended", in: []byte("a\nb\nc\nd\n"), lim: Limit{Bytes: 64, Lines: 4, What: "a test file"}, want: "a\nb\nc\nd\n"},
		{name: "empty lines past the bound", in: []byte("\n\n\n\n\n"), lim: Limit{Bytes: 64, Lines: 4, What: "a test file"}, err: "f.csv:5: more than 4 lines"},
		{name: "broken gzip", in: []byte{0x1f, 0x8b, 'x'}, lim: small, err: "f.csv: gzip:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Reader(bytes.NewReader(c.in), "f.csv", c.lim)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(r)
			}
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case c.err == "" && string(got) != c.want:
				t.Fatalf("read %q, want %q", got, c.want)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("err = %v, want one containing %q", err, c.err)
			case c.err != "" && !IsLimit(err):
				t.Fatalf("err = %v (%T), want a LimitError", err, err)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "pods.csv")
	if err := os.WriteFile(plain, []byte("name\np\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO without a writer used to block the open forever.
	fifo, fifoLink := filepath.Join(dir, "fifo"), filepath.Join(dir, "fifo-link")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(fifo, fifoLink)
	for _, c := range []struct {
		name, path string
		lim        Limit
		err        string
	}{
		{name: "file", path: plain, lim: Table},
		{name: "missing", path: filepath.Join(dir, "none.csv"), lim: Table, err: "no such file"},
		{name: "directory", path: dir, lim: Table, err: "is a directory, want a regular file"},
		// A device is refused before reading (issue 40): /dev/zero
		// would fail at its first byte, /dev/urandom later, a terminal
		// or a FIFO never.
		{name: "/dev/zero as a table", path: "/dev/zero", lim: Table, err: "/dev/zero is a character device, want a regular file"},
		{name: "/dev/zero as a scenario", path: "/dev/zero", lim: Scenario, err: "/dev/zero is a character device"},
		{name: "/dev/null as a document", path: "/dev/null", lim: Document, err: "/dev/null is a character device"},
		{name: "FIFO", path: fifo, lim: Table, err: "is a named pipe (FIFO), want a regular file"},
		{name: "link to a FIFO", path: fifoLink, lim: Table, err: "is a named pipe (FIFO)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(c.path, "/dev/") {
				if _, err := os.Stat(c.path); err != nil {
					t.Skip(err)
				}
			}
			var b []byte
			var err error
			done := make(chan struct{})
			go func() { b, err = ReadFile(c.path, c.lim); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReadFile blocked")
			}
			if c.err == "" {
				if err != nil || string(b) != "name\np\n" {
					t.Fatalf("ReadFile = %q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want one containing %q", err, c.err)
			}
		})
	}
}

// A reader over a bounded reader (a reader given a userfile.File) reports
// the inner bound's error as it is.
func TestReaderOverBounded(t *testing.T) {
	inner, err := Reader(bytes.NewReader([]byte{0}), "f.csv", small)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Reader(inner, "f.csv", Table)
	if err == nil || err.Error() != "f.csv:1: NUL byte at offset 0: not a text file" {
		t.Fatalf("err = %v", err)
	}
}

func TestLimitErrorUnwraps(t *testing.T) {
	inner := errors.New("x")
	err := error(&LimitError{File: "f", Line: 3, Err: inner})
	if !errors.Is(err, inner) || err.Error() != "f:3: x" {
		t.Fatalf("%v", err)
	}
}

// FuzzReader: whatever the input, the reader returns the input's bytes
// (decompressed) or stops with a LimitError, never more than the bound.
func FuzzReader(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte(strings.Repeat("x", 40)))
	f.Add([]byte("a\x00"))
	f.Add(gz(f, []byte("a,b\n")))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Reader(bytes.NewReader(in), "f", small)
		if err != nil {
			if !IsLimit(err) {
				t.Fatalf("Reader: %v (%T), want a LimitError", err, err)
			}
			return
		}
		got, err := io.ReadAll(r)
		if int64(len(got)) > small.Bytes {
			t.Fatalf("read %d bytes past the bound %d", len(got), small.Bytes)
		}
		if err != nil {
			if !IsLimit(err) && !bytes.HasPrefix(in, gzipMagic) {
				t.Fatalf("ReadAll: %v (%T)", err, err)
			}
			return
		}
		if bytes.IndexByte(got, 0) >= 0 {
			t.Fatalf("NUL byte passed: %q", got)
		}
		if !bytes.HasPrefix(in, gzipMagic) && !bytes.Equal(got, in) {
			t.Fatalf("read %q, want %q", got, in)
		}
	})
}
