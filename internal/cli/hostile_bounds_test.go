package cli

// hostileBounds: hostile inputs of this kind (issue 28); see hostile_test.go.
var hostileBounds = []hostileCase{}
