package replay

import (
	"fmt"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

// AnnRunFor is the pod annotation kwok's pod-complete stage reads its delay
// from: how long the pod runs once kwok has marked it Running, as a Go
// duration ("1.5s"): the task's duration divided by the time factor.
const AnnRunFor = "replay.wattsched.io/run-for"

// The lifecycle kwok plays on the replay's fake nodes and pods, as kwok
// Stage objects (kwok.x-k8s.io/v1alpha1): a node that kwok manages is
// marked Ready once; a bound pod starts Running at once; a Running pod
// becomes Succeeded after the delay its AnnRunFor annotation names.
var stageYAML = []string{`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: replay-node-ready
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - {key: '.status.phase', operator: 'DoesNotExist'}
  next:
    statusTemplate: |
      phase: Running
`, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: replay-pod-running
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: 'DoesNotExist'}
    - {key: '.status.phase', operator: 'NotIn', values: ['Running', 'Succeeded', 'Failed']}
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Running
      startTime: {{ $now | Quote }}
      conditions:
      - {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
`, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: replay-pod-complete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: 'DoesNotExist'}
    - {key: '.status.phase', operator: 'In', values: ['Running']}
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["` + AnnRunFor + `"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Succeeded
      conditions:
      - {type: Ready, status: "False", lastTransitionTime: {{ $now | Quote }}, reason: PodCompleted}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        restartCount: 0
        state: {terminated: {exitCode: 0, reason: Completed, finishedAt: {{ $now | Quote }}}}
      {{ end }}
`}

// stages is the lifecycle as kwok's internal stages, by resource.
func stages() (map[internalversion.StageResourceRef][]*internalversion.Stage, error) {
	out := map[internalversion.StageResourceRef][]*internalversion.Stage{}
	for _, y := range stageYAML {
		var s v1alpha1.Stage
		if err := yaml.UnmarshalStrict([]byte(y), &s); err != nil {
			return nil, fmt.Errorf("replay stage: %w", err)
		}
		in, err := internalversion.ConvertToInternalStage(&s)
		if err != nil {
			return nil, fmt.Errorf("replay stage %s: %w", s.Name, err)
		}
		out[in.Spec.ResourceRef] = append(out[in.Spec.ResourceRef], in)
	}
	return out, nil
}
