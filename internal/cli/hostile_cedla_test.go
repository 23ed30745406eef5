package cli

// hostileCedla: hostile inputs of this kind (issue 26); see
// hostile_test.go. EPRONS's training placement (least-energy or
// least-power): anything else is refused before any run, naming the
// system and the field.
var hostileCedla = []hostileCase{
	{name: "eprons training unknown", files: map[string]string{"s.yaml": slottedDoc("{GTX1060-3GB: 1, RTX2060: 2}", "[{name: e, policy: eprons, args: {training: fastest}}]"),
		"jobs.csv": slottedJobs, "load.csv": slottedLoad}, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		// The line after names it: slotted.systems[0] (e): eprons args:
		// eprons.training: "fastest", want "least-energy" or "least-power".
		errLine: "scenario hostile: invalid scenario"},
	{name: "eprons unknown arg", files: map[string]string{"s.yaml": slottedDoc("{GTX1060-3GB: 1, RTX2060: 2}", "[{name: e, policy: eprons, args: {placement: least-energy}}]"),
		"jobs.csv": slottedJobs, "load.csv": slottedLoad}, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "scenario hostile: invalid scenario"},
}
