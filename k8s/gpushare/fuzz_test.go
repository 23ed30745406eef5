package gpushare

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wattsched/wattsched/job"
)

// FuzzAnnotations: whatever the annotations say, parsing returns a valid
// demand or an error, never a panic, and GPU indices are in range.
func FuzzAnnotations(f *testing.F) {
	f.Add("500", "T4|A10", "0", int64(0))
	f.Add("half", "", "1,2", int64(2))
	f.Add("", "||", "-1", int64(9))
	f.Fuzz(func(t *testing.T, milli, models, index string, gpus int64) {
		ann := map[string]string{AnnGPUIndex: index}
		if milli != "" {
			ann[AnnGPUMilli] = milli
		}
		if models != "" {
			ann[AnnGPUModels] = models
		}
		p := podWith("1", 0, ann)
		if gpus > 0 && gpus < 1<<20 {
			p = podWith("1", gpus, ann)
		}
		if d, err := Demand(p); err == nil {
			if verr := d.Validate(); verr != nil {
				t.Fatalf("Demand returned an invalid demand %+v: %v", d, verr)
			}
			if d.GPUCount > 0 && d.GPUMilli != job.MilliPerGPU && d.GPUCount != 1 {
				t.Fatalf("shared demand on %d GPUs", d.GPUCount)
			}
		}
		if g, ok, err := GPUIndex(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}); err == nil && ok {
			for _, i := range g {
				if i < 0 || i >= maxGPUsPerNode {
					t.Fatalf("index %d accepted", i)
				}
			}
		}
	})
}
