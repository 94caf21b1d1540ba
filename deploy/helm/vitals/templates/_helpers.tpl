{{/* The chart's name, or nameOverride. */}}
{{- define "vitals.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name, at most 63 characters (a DNS label): the name of every object. */}}
{{- define "vitals.fullname" -}}
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

{{/* The labels that select the fleet's pods; they never change for a release. */}}
{{- define "vitals.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vitals.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: fleet
{{- end }}

{{- define "vitals.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "vitals.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "vitals.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vitals.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* vitals fleet's command line, made of .Values.fleet. */}}
{{- define "vitals.fleetArgs" -}}
{{- $args := list "fleet" "--listen" (printf ":%d" (int .Values.fleet.port)) }}
{{- if eq .Values.fleet.scope "cluster" }}
{{- $args = append $args "-A" }}
{{- else }}
{{- $args = concat $args (list "-n" .Release.Namespace) }}
{{- end }}
{{- with .Values.fleet.selector }}
{{- $args = concat $args (list "-l" .) }}
{{- end }}
{{- $args = concat $args (list "--condition" .Values.fleet.condition) }}
{{- concat $args .Values.fleet.extraArgs | toJson }}
{{- end }}
