{{/* The release's name for every object; kube-pyscheduler for a release of that name. */}}
{{- define "kube-pyscheduler.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels selecting this release's scheduler pods; immutable in the Deployment. */}}
{{- define "kube-pyscheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kube-pyscheduler.labels" -}}
{{ include "kube-pyscheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kube-pyscheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kube-pyscheduler.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kube-pyscheduler.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The schedulerNames served by this release, default-scheduler and the listed others, as
a regular expression inside a PromQL string (whose own escapes double each backslash). */}}
{{- define "kube-pyscheduler.servedNames" -}}
{{- $names := list "default-scheduler" -}}
{{- range .Values.profiles -}}
{{- $names = append $names (required "profiles[].schedulerName: every profile needs one" .schedulerName) -}}
{{- end -}}
{{- range .Values.metrics.prometheusRule.servedSchedulerNames -}}
{{- $names = append $names . -}}
{{- end -}}
{{- $quoted := list -}}
{{- range ($names | uniq) -}}
{{- $quoted = append $quoted (regexQuoteMeta . | replace "\\" "\\\\") -}}
{{- end -}}
{{- $quoted | join "|" -}}
{{- end -}}
