package solver

import (
	"testing"
	"unsafe"

	"github.com/lanl/highs"
)

// TestHiGHSHandle checks the assumption handle makes about the binding's
// RawModel: a single pointer to the HiGHS object, through which HiGHS
// reports the columns the binding passed.
func TestHiGHSHandle(t *testing.T) {
	if got, want := unsafe.Sizeof(highs.RawModel{}), unsafe.Sizeof(unsafe.Pointer(nil)); got != want {
		t.Fatalf("highs.RawModel is %d bytes, want one pointer (%d): the binding's layout changed", got, want)
	}
	raw := highs.NewRawModel()
	if err := raw.SetBoolOption("output_flag", false); err != nil {
		t.Fatal(err)
	}
	if err := raw.AddColumnBounds([]float64{0, 0, 0}, []float64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if n := numCols(raw); n != 3 {
		t.Fatalf("HiGHS reports %d columns through the handle, want 3", n)
	}
}
