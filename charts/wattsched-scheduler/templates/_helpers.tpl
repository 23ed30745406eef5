{{/* The chart's name, shortened to a DNS label. */}}
{{- define "wattsched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the prefix of every object. */}}
{{- define "wattsched.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "wattsched.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "wattsched.labels" -}}
helm.sh/chart: {{ include "wattsched.chart" . }}
app.kubernetes.io/name: {{ include "wattsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: wattsched
{{- end }}

{{- define "wattsched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wattsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end }}

{{- define "wattsched.agentSelectorLabels" -}}
app.kubernetes.io/name: {{ include "wattsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: nvml-agent
{{- end }}

{{- define "wattsched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "wattsched.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "wattsched.leaseName" -}}
{{- default (include "wattsched.fullname" .) .Values.leaderElection.resourceName }}
{{- end }}

{{/* The ConfigMap holding FGD's target workload, or nothing (builtin). */}}
{{- define "wattsched.workloadConfigMap" -}}
{{- if .Values.fgdWorkload.existingConfigMap }}
{{- .Values.fgdWorkload.existingConfigMap }}
{{- else if .Values.fgdWorkload.podsCSV }}
{{- printf "%s-fgd-workload" (include "wattsched.fullname" .) }}
{{- end }}
{{- end }}

{{/* Where the pods see their files. */}}
{{- define "wattsched.configDir" -}}/etc/wattsched/config{{- end }}
{{- define "wattsched.workloadDir" -}}/etc/wattsched/workload{{- end }}

{{/* FGD's workload arguments (WattschedGPU's fgd and FGD's args). */}}
{{- define "wattsched.workloadArgs" -}}
{{- if include "wattsched.workloadConfigMap" . }}
workloadFile: {{ printf "%s/%s" (include "wattsched.workloadDir" .) .Values.fgdWorkload.key }}
{{- else }}
workload: {{ .Values.fgdWorkload.builtin }}
{{- end }}
{{- with .Values.fgdWorkload.popularityThreshold }}
popularityThreshold: {{ . }}
{{- end }}
{{- end }}

{{/* The Kubernetes minors this chart has a kube-scheduler image for, oldest
first: the k8s module's supported minors (the Makefile's K8S_MINORS; a test
checks that the two agree). kube-scheduler must be of the API server's minor
(it may not be newer, and the chart runs no older one). */}}
{{- define "wattsched.supportedMinors" -}}1.35 1.36 1.37{{- end }}

{{/* The cluster's minor, MAJOR.MINOR, from .Capabilities.KubeVersion's
version (managed clusters report minors like "37+" and versions like
v1.37.2-gke.100: the version's first two numbers are the minor). */}}
{{- define "wattsched.kubeMinor" -}}
{{- regexFind "^[0-9]+\\.[0-9]+" (trimPrefix "v" .Capabilities.KubeVersion.Version) }}
{{- end }}

{{/* The cluster's minor when the chart supports it; else the render fails
with the supported minors named. */}}
{{- define "wattsched.checkedKubeMinor" -}}
{{- $minor := include "wattsched.kubeMinor" . }}
{{- $supported := splitList " " (include "wattsched.supportedMinors" .) }}
{{- if not (has $minor $supported) }}
{{- fail (printf "Kubernetes %s is not supported: this chart runs kube-scheduler %s (one image per minor; kube-scheduler must be of the API server's minor)" .Capabilities.KubeVersion.Version (join ", " $supported)) }}
{{- end }}
{{- $minor }}
{{- end }}

{{/* The kube-scheduler image for the cluster's minor: REPOSITORY:vAPPVERSION-k8sMINOR
(the tags `make images` gives), or image.tag where set. */}}
{{- define "wattsched.schedulerImage" -}}
{{- $minor := include "wattsched.checkedKubeMinor" . }}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s-k8s%s" .Chart.AppVersion $minor) .Values.image.tag) }}
{{- end }}

{{/* The image reference. */}}
{{- define "wattsched.image" -}}
{{- printf "%s:%s" .repository (default (printf "v%s" .appVersion) .tag) }}
{{- end }}
