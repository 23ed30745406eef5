package sim

// timed is an event of one of the engines: ordered by time, then by
// insertion sequence.
type timed interface{ order() (at int64, seq uint64) }

// queue is a container/heap of events in (time, sequence) order.
type queue[E timed] []E

func (q queue[E]) Len() int { return len(q) }
func (q queue[E]) Less(i, j int) bool {
	ai, si := q[i].order()
	aj, sj := q[j].order()
	return ai < aj || ai == aj && si < sj
}
func (q queue[E]) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue[E]) Push(x any)   { *q = append(*q, x.(E)) }
func (q *queue[E]) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
