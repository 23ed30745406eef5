module github.com/wattsched/wattsched

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0
	go.yaml.in/yaml/v3 v3.0.4
)
