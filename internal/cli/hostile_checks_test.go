package cli

// hostileChecks: hostile inputs of this kind (issue 28); see hostile_test.go.
var hostileChecks = []hostileCase{}
