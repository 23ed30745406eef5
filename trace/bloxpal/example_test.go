package bloxpal_test

import (
	"fmt"

	"github.com/wattsched/wattsched/trace/bloxpal"
)

func ExampleEmbedded() {
	d, err := bloxpal.Embedded()
	if err != nil {
		panic(err)
	}
	r := d.Rows[33]
	fmt.Printf("%d rows, %d isolated\n", len(d.Rows), len(d.Singles))
	fmt.Printf("%v keeps %.2f next to %v, which keeps %.2f\n", r.A, r.SpeedA, r.B, r.SpeedB)
	// Output:
	// 200 rows, 48 isolated
	// vgg19 (ImageNet, batch 32) x1 keeps 0.80 next to resnet50 (ImageNet, batch 32) x1, which keeps 0.41
}
