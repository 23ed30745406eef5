package cli

// hostileOutdir: hostile inputs of this kind (issue 28); see hostile_test.go.
var hostileOutdir = []hostileCase{}
