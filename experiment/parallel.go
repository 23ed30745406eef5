package experiment

import (
	"runtime"
	"sync"
)

// Parallel calls run(i) for i in 0..n-1 on workers goroutines (GOMAXPROCS
// when workers <= 0) and returns each call's error by index. After each call,
// progress (if not nil) gets the number done, n, and label(i), one call at a
// time. Results must be stored by index, so their order never depends on
// scheduling.
func Parallel(n, workers int, run func(i int) error, progress func(done, total int, what string), label func(i int) string) []error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = run(i)
				if progress != nil {
					mu.Lock()
					done++
					progress(done, n, label(i))
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}
