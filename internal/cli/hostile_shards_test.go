package cli

// hostileShards: hostile inputs of this kind (issue 28); see hostile_test.go.
var hostileShards = []hostileCase{}
